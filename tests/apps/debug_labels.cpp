// debug_labels: VK_EXT_debug_utils' device commands as runtimes such as FFmpeg's libplacebo call
// them: obtained through vkGetDeviceProcAddr, on a device whose driver may have none of them
// (lavapipe), so the loader's own functions answer. Each round
// records, between command-buffer labels, a fill of one slot of a host-visible buffer and a copy
// of it into the next slot; every other round also binds a vertex buffer in the middle, a
// command Slipstream cannot capture, so a lazily recorded command buffer goes to the driver
// there with what came before it, labels included. Queue labels wrap each submission, and the
// buffer and command buffers are named. The host checks both slots after each round's fence.
// --without-extension calls them all without enabling VK_EXT_debug_utils on the instance, as
// FFmpeg 5.1 lets libplacebo do: invalid usage, which the loader alone tolerates (Debian 12's
// loader hands the functions out all the same and skips a command the driver lacks). Slipstream must tolerate it too: before its
// dispatch table took device commands of instance extensions from the instance chain where the
// device chain has none, the first label there called a null pointer.
#include "suite_util.h"
#include "vk_app.h"

#include <cstring>
#include <vector>

namespace {

constexpr uint32_t kWords = 64;
constexpr VkDeviceSize kSlotBytes = kWords * 4;

struct Labels {
    PFN_vkCmdBeginDebugUtilsLabelEXT cmd_begin = nullptr;
    PFN_vkCmdEndDebugUtilsLabelEXT cmd_end = nullptr;
    PFN_vkCmdInsertDebugUtilsLabelEXT cmd_insert = nullptr;
    PFN_vkQueueBeginDebugUtilsLabelEXT queue_begin = nullptr;
    PFN_vkQueueEndDebugUtilsLabelEXT queue_end = nullptr;
    PFN_vkQueueInsertDebugUtilsLabelEXT queue_insert = nullptr;
    PFN_vkSetDebugUtilsObjectNameEXT set_name = nullptr;

    explicit Labels(VkDevice device) {
        auto get = [&](const char* name) { return vkGetDeviceProcAddr(device, name); };
        cmd_begin = reinterpret_cast<PFN_vkCmdBeginDebugUtilsLabelEXT>(get("vkCmdBeginDebugUtilsLabelEXT"));
        cmd_end = reinterpret_cast<PFN_vkCmdEndDebugUtilsLabelEXT>(get("vkCmdEndDebugUtilsLabelEXT"));
        cmd_insert = reinterpret_cast<PFN_vkCmdInsertDebugUtilsLabelEXT>(get("vkCmdInsertDebugUtilsLabelEXT"));
        queue_begin = reinterpret_cast<PFN_vkQueueBeginDebugUtilsLabelEXT>(get("vkQueueBeginDebugUtilsLabelEXT"));
        queue_end = reinterpret_cast<PFN_vkQueueEndDebugUtilsLabelEXT>(get("vkQueueEndDebugUtilsLabelEXT"));
        queue_insert = reinterpret_cast<PFN_vkQueueInsertDebugUtilsLabelEXT>(get("vkQueueInsertDebugUtilsLabelEXT"));
        set_name = reinterpret_cast<PFN_vkSetDebugUtilsObjectNameEXT>(get("vkSetDebugUtilsObjectNameEXT"));
    }
    bool all() const {
        return cmd_begin && cmd_end && cmd_insert && queue_begin && queue_end && queue_insert && set_name;
    }
};

VkDebugUtilsLabelEXT label(const char* name) {
    VkDebugUtilsLabelEXT l{VK_STRUCTURE_TYPE_DEBUG_UTILS_LABEL_EXT};
    l.pLabelName = name;
    l.color[1] = 1.0f;
    return l;
}

void name_object(const Labels& fn, VkDevice device, VkObjectType type, uint64_t handle, const char* name) {
    VkDebugUtilsObjectNameInfoEXT info{VK_STRUCTURE_TYPE_DEBUG_UTILS_OBJECT_NAME_INFO_EXT};
    info.objectType = type;
    info.objectHandle = handle;
    info.pObjectName = name;
    VK_CHECK(fn.set_name(device, &info));
}

}  // namespace

int main(int argc, char** argv) {
    const uint32_t scale = suite::parse_scale(argc, argv, "--without-extension");
    vkapp::ContextOptions options;
    options.graphics = true;  // vkCmdBindVertexBuffers needs a family with graphics
    options.debug_utils = !suite::has_flag(argc, argv, "--without-extension");
    vkapp::Context ctx = vkapp::create_context("debug_labels", options);
    suite::print_device(argc, argv, ctx);
    const Labels fn(ctx.device);
    if (!fn.all()) {
        std::printf("SKIPPED: the loader hands out no VK_EXT_debug_utils device commands\n");
        vkapp::destroy_context(ctx);
        return 0;
    }
    const uint32_t rounds = 16 * scale;
    vkapp::Buffer slots = vkapp::create_buffer(ctx, 2 * rounds * kSlotBytes,
                                               VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT |
                                                   VK_BUFFER_USAGE_VERTEX_BUFFER_BIT,
                                               suite::kHostMemory);
    name_object(fn, ctx.device, VK_OBJECT_TYPE_BUFFER, reinterpret_cast<uint64_t>(slots.buffer), "slots");
    VkCommandPool pool = vkapp::create_command_pool(ctx);
    std::vector<VkCommandBuffer> cbs = suite::allocate_command_buffers(ctx, pool, rounds);
    VkFence fence = suite::create_fence(ctx);
    uint64_t checksum = vkapp::fnv1a(nullptr, 0);
    bool ok = true;
    for (uint32_t r = 0; r < rounds; ++r) {
        VkCommandBuffer cb = cbs[r];
        name_object(fn, ctx.device, VK_OBJECT_TYPE_COMMAND_BUFFER, reinterpret_cast<uint64_t>(cb), "round");
        const VkDeviceSize at = 2 * r * kSlotBytes;
        const uint32_t value = 0x5100u + r;
        suite::begin(cb);
        const VkDebugUtilsLabelEXT outer = label("round"), fill = label("fill"), copy = label("copy");
        fn.cmd_begin(cb, &outer);
        fn.cmd_insert(cb, &fill);
        vkCmdFillBuffer(cb, slots.buffer, at, kSlotBytes, value);
        if (r % 2) {
            const VkDeviceSize offset = 0;
            vkCmdBindVertexBuffers(cb, 0, 1, &slots.buffer, &offset);
        }
        vkapp::barrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT,
                       VK_ACCESS_TRANSFER_READ_BIT);
        fn.cmd_begin(cb, &copy);
        const VkBufferCopy region{at, at + kSlotBytes, kSlotBytes};
        vkCmdCopyBuffer(cb, slots.buffer, slots.buffer, 1, &region);
        fn.cmd_end(cb);
        vkapp::barrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT,
                       VK_ACCESS_HOST_READ_BIT);
        fn.cmd_end(cb);
        VK_CHECK(vkEndCommandBuffer(cb));
        const VkDebugUtilsLabelEXT submission = label("submission"), after = label("after");
        fn.queue_begin(ctx.queue, &submission);
        suite::submit(ctx.queue, cb, fence);
        fn.queue_end(ctx.queue);
        fn.queue_insert(ctx.queue, &after);
        suite::wait_fence(ctx, fence);
        VK_CHECK(vkResetFences(ctx.device, 1, &fence));
        suite::invalidate(ctx, slots);
        const auto* words = static_cast<const uint32_t*>(slots.mapped) + at / 4;
        for (uint32_t i = 0; i < 2 * kWords; ++i) {
            if (words[i] != value) {
                std::fprintf(stderr, "debug_labels: round %u word %u is 0x%x, expected 0x%x\n", r, i, words[i], value);
                ok = false;
                break;
            }
        }
        checksum = vkapp::fnv1a(words, 2 * kSlotBytes, checksum);
    }
    VK_CHECK(vkDeviceWaitIdle(ctx.device));
    vkDestroyFence(ctx.device, fence, nullptr);
    vkDestroyCommandPool(ctx.device, pool, nullptr);
    vkapp::destroy_buffer(ctx, slots);
    return vkapp::finish_checked(ctx, ok, checksum);
}
