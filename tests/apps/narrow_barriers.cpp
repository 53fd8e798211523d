// narrow_barriers: programs that order their work with nothing but ALL_COMMANDS pipeline
// barriers (MEMORY_WRITE -> MEMORY_READ|MEMORY_WRITE, the naive runtime's barrier), one
// command buffer and one vkQueueSubmit per step, no fences or semaphores between the steps.
// Fusion (VK_SLIPSTREAM_FUSE=on) replays such command buffers into its batches and narrows
// those barriers to compute|transfer stages (VK_SLIPSTREAM_NARROW_BARRIERS); the scenarios
// are what that narrowing must keep right:
//   compute_transfer   a dependent chain of dispatches, vkCmdFillBuffer, vkCmdUpdateBuffer
//                      and vkCmdCopyBuffer, each command buffer opening with the barrier;
//   indirect           a dispatch writes VkDispatchIndirectCommand parameters, the barrier,
//                      then vkCmdDispatchIndirect reads them (same command buffer, and a later
//                      one): the group count it really ran with shows in its output;
//   graphics_after     on the same queue, work fusion does not replay (a render pass) after
//                      and before narrowed work:
//                        .draw_reads    a dispatch writes a vertex buffer, its command buffer
//                                       ending with the barrier; a graphics command buffer
//                                       with no barrier of its own draws from it;
//                        .compute_reads a render pass draws into an image; a compute command
//                                       buffer opening with the barrier (and the image's
//                                       layout transition) reads it as a storage image;
//   layout_transition  image layout transitions (UNDEFINED -> GENERAL, GENERAL ->
//                      TRANSFER_SRC_OPTIMAL and back) inside the barriers, a dispatch writing
//                      a storage image and vkCmdCopyImageToBuffer reading it;
//   events             the barrier's dependency made with an event instead (vkCmdSetEvent
//                      ALL_COMMANDS, vkCmdWaitEvents ALL_COMMANDS -> ALL_COMMANDS; v2:
//                      vkCmdSetEvent2 / vkCmdWaitEvents2 with the barrier's dependency info),
//                      between two resets of the event:
//                        .compute        a dispatch sets it, a dispatch in the same command
//                                        buffer and one in the next (same vkQueueSubmit)
//                                        wait on it and read what the first wrote;
//                        .after_graphics graphics_after.compute_reads with the event's wait
//                                        doing the image's layout transition;
//                        .draw_reads     graphics_after.draw_reads with the event's wait the
//                                        only thing between the dispatch and the draw.
// Each scenario runs once with vkCmdPipelineBarrier and, where the device has the
// synchronization2 feature, once with vkCmdPipelineBarrier2, and checks every result against
// a CPU reference. Arguments name the scenarios to run (default: the five); the program
// prints nothing but failures and one checksum over everything it read back.
//   history_first_barrier (by name only) is graphics_after.compute_reads with one more
//                      barrier in front of the barrier, naming ALL_COMMANDS on one side only
//                      (COMPUTE -> ALL_COMMANDS, or ALL_COMMANDS -> HOST): still valid Vulkan,
//                      the barrier after it is still what orders the reads after the render
//                      pass, so that is the one fusion must keep whole (CMakeLists.txt: the
//                      layer keeps the first one whole instead).
#include "chain_step.h"
#include "offscreen_target.h"
#include "suite_util.h"
#include "vk_app.h"

#include "narrow_image_read_comp.h"
#include "narrow_image_write_comp.h"
#include "narrow_indirect_comp.h"
#include "narrow_params_comp.h"
#include "narrow_render_frag.h"
#include "narrow_render_vert.h"
#include "narrow_step_comp.h"
#include "narrow_verts_comp.h"

#include <cstdlib>
#include <cstring>
#include <iterator>
#include <string>
#include <vector>

namespace {

enum class Sync { v1, v2 };
const char* sync_name(Sync s) { return s == Sync::v1 ? "vkCmdPipelineBarrier" : "vkCmdPipelineBarrier2"; }

constexpr VkPipelineStageFlags2 kAll = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT;
constexpr VkAccessFlags2 kWrite = VK_ACCESS_2_MEMORY_WRITE_BIT;
constexpr VkAccessFlags2 kReadWrite = VK_ACCESS_2_MEMORY_READ_BIT | VK_ACCESS_2_MEMORY_WRITE_BIT;

struct Transition {
    VkImage image = VK_NULL_HANDLE;
    VkImageLayout from = VK_IMAGE_LAYOUT_UNDEFINED, to = VK_IMAGE_LAYOUT_UNDEFINED;
};

// The barrier: ALL_COMMANDS, MEMORY_WRITE -> ALL_COMMANDS, MEMORY_READ|MEMORY_WRITE, as a
// global memory barrier, with the image's layout transition (same stages and accesses) when
// one is given. `to_host`: -> HOST, HOST_READ instead (for the readback at the end).
// Its structures, v1 (vkCmdPipelineBarrier, vkCmdWaitEvents) and v2 (vkCmdPipelineBarrier2,
// and the same for an event's vkCmdSetEvent2 and vkCmdWaitEvents2, which must match).
struct AllCommands1 {
    VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    VkImageMemoryBarrier ib{VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER};
    uint32_t images = 0;
    VkPipelineStageFlags dst_stage;
    AllCommands1(const Transition* t, bool to_host) {
        const VkAccessFlags dst_access = VkAccessFlags(to_host ? VK_ACCESS_2_HOST_READ_BIT : kReadWrite);
        dst_stage = VkPipelineStageFlags(to_host ? VK_PIPELINE_STAGE_2_HOST_BIT : kAll);
        mb.srcAccessMask = VkAccessFlags(kWrite);
        mb.dstAccessMask = dst_access;
        if (!t) return;
        images = 1;
        ib.srcAccessMask = t->from == VK_IMAGE_LAYOUT_UNDEFINED ? 0 : VkAccessFlags(kWrite);
        ib.dstAccessMask = dst_access;
        ib.oldLayout = t->from;
        ib.newLayout = t->to;
        ib.srcQueueFamilyIndex = ib.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
        ib.image = t->image;
        ib.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
    }
};
struct AllCommands2 {
    VkMemoryBarrier2 mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER_2};
    VkImageMemoryBarrier2 ib{VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER_2};
    VkDependencyInfo dep{VK_STRUCTURE_TYPE_DEPENDENCY_INFO};
    AllCommands2(const Transition* t, bool to_host) {
        const VkPipelineStageFlags2 dst_stage = to_host ? VK_PIPELINE_STAGE_2_HOST_BIT : kAll;
        const VkAccessFlags2 dst_access = to_host ? VK_ACCESS_2_HOST_READ_BIT : kReadWrite;
        mb.srcStageMask = kAll;
        mb.srcAccessMask = kWrite;
        mb.dstStageMask = dst_stage;
        mb.dstAccessMask = dst_access;
        dep.memoryBarrierCount = 1;
        dep.pMemoryBarriers = &mb;
        if (!t) return;
        ib.srcStageMask = kAll;
        ib.srcAccessMask = t->from == VK_IMAGE_LAYOUT_UNDEFINED ? 0 : kWrite;
        ib.dstStageMask = dst_stage;
        ib.dstAccessMask = dst_access;
        ib.oldLayout = t->from;
        ib.newLayout = t->to;
        ib.srcQueueFamilyIndex = ib.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
        ib.image = t->image;
        ib.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
        dep.imageMemoryBarrierCount = 1;
        dep.pImageMemoryBarriers = &ib;
    }
    AllCommands2(const AllCommands2&) = delete;  // dep points into it
};

void all_commands_barrier(VkCommandBuffer cb, Sync sync, const Transition* t = nullptr, bool to_host = false) {
    if (sync == Sync::v1) {
        const AllCommands1 b(t, to_host);
        vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, b.dst_stage, 0, 1, &b.mb, 0, nullptr, b.images,
                             &b.ib);
        return;
    }
    const AllCommands2 b(t, to_host);
    vkCmdPipelineBarrier2(cb, &b.dep);
}

// The same with an event: reset, set (ALL_COMMANDS; v2 with the barrier's dependency info)
// and wait (ALL_COMMANDS -> ALL_COMMANDS, the barrier's structures).
void reset_event(VkCommandBuffer cb, Sync sync, VkEvent e) {
    if (sync == Sync::v1) vkCmdResetEvent(cb, e, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT);
    else vkCmdResetEvent2(cb, e, kAll);
}
void set_event(VkCommandBuffer cb, Sync sync, VkEvent e, const Transition* t = nullptr) {
    if (sync == Sync::v1) {
        vkCmdSetEvent(cb, e, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT);
        return;
    }
    const AllCommands2 b(t, false);
    vkCmdSetEvent2(cb, e, &b.dep);
}
void wait_event(VkCommandBuffer cb, Sync sync, VkEvent e, const Transition* t = nullptr) {
    if (sync == Sync::v1) {
        const AllCommands1 b(t, false);
        vkCmdWaitEvents(cb, 1, &e, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, b.dst_stage, 1, &b.mb, 0, nullptr, b.images,
                        &b.ib);
        return;
    }
    const AllCommands2 b(t, false);
    vkCmdWaitEvents2(cb, 1, &e, &b.dep);
}

// Whether the device has Vulkan 1.3's synchronization2 (asked before the context exists:
// vk_app enables the feature at vkCreateDevice, which fails where it is missing).
bool has_synchronization2() {
    VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
    app.pApplicationName = "narrow_barriers-probe";
    app.apiVersion = VK_API_VERSION_1_3;
    VkInstanceCreateInfo ici{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
    ici.pApplicationInfo = &app;
    VkInstance instance;
    if (vkCreateInstance(&ici, nullptr, &instance) != VK_SUCCESS) return false;
    uint32_t count = 0;
    vkEnumeratePhysicalDevices(instance, &count, nullptr);
    std::vector<VkPhysicalDevice> devices(count);
    vkEnumeratePhysicalDevices(instance, &count, devices.data());
    uint32_t index = 0;
    if (const char* env = std::getenv("VKAPP_DEVICE_INDEX")) index = uint32_t(std::atoi(env));
    bool ok = false;
    if (index < count) {
        VkPhysicalDeviceProperties props;
        vkGetPhysicalDeviceProperties(devices[index], &props);
        VkPhysicalDeviceVulkan13Features f13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
        VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &f13};
        if (props.apiVersion >= VK_API_VERSION_1_3) {
            vkGetPhysicalDeviceFeatures2(devices[index], &f2);
            ok = f13.synchronization2 == VK_TRUE;
        }
    }
    vkDestroyInstance(instance, nullptr);
    return ok;
}

// --- small Vulkan helpers ------------------------------------------------------------------

// Compute pipelines over bindings 0..n-1 of the given descriptor types: vkapp's.
using Pipe = vkapp::ComputePipeline;

// The chain step (chain_step.comp): buffer 0 -> buffer 1.
Pipe step_pipe(vkapp::Context& ctx) {
    return vkapp::create_typed_compute_pipeline(ctx, narrow_step_comp, sizeof(narrow_step_comp),
                             {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER},
                             sizeof(chain::Params));
}

VkDescriptorPool make_pool(vkapp::Context& ctx) {
    VkDescriptorPoolSize sizes[2] = {{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 16}, {VK_DESCRIPTOR_TYPE_STORAGE_IMAGE, 4}};
    VkDescriptorPoolCreateInfo ci{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    ci.maxSets = 8;
    ci.poolSizeCount = 2;
    ci.pPoolSizes = sizes;
    VkDescriptorPool pool;
    VK_CHECK(vkCreateDescriptorPool(ctx.device, &ci, nullptr, &pool));
    return pool;
}

VkEvent make_event(vkapp::Context& ctx) {
    VkEventCreateInfo ci{VK_STRUCTURE_TYPE_EVENT_CREATE_INFO};
    VkEvent e;
    VK_CHECK(vkCreateEvent(ctx.device, &ci, nullptr, &e));
    return e;
}

void write_image(vkapp::Context& ctx, VkDescriptorSet set, uint32_t binding, VkImageView view) {
    VkDescriptorImageInfo info{VK_NULL_HANDLE, view, VK_IMAGE_LAYOUT_GENERAL};
    VkWriteDescriptorSet w{VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    w.dstSet = set;
    w.dstBinding = binding;
    w.descriptorCount = 1;
    w.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_IMAGE;
    w.pImageInfo = &info;
    vkUpdateDescriptorSets(ctx.device, 1, &w, 0, nullptr);
}

void write_buffer(vkapp::Context& ctx, VkDescriptorSet set, uint32_t binding, VkBuffer buffer) {
    vkapp::write_storage_buffer(ctx, set, binding, buffer);
}

constexpr VkBufferUsageFlags kDeviceUsage =
    VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;

// What every scenario shares: the context, whether sync2 runs too, the checksum.
struct Env {
    vkapp::Context& ctx;
    bool sync2;
    uint64_t checksum = vkapp::fnv1a(nullptr, 0);
    VkCommandPool pool = VK_NULL_HANDLE;

    // A command buffer, begun (from the scenario's pool: freed with it).
    VkCommandBuffer begin() {
        VkCommandBuffer cb = suite::allocate_command_buffers(ctx, pool, 1)[0];
        suite::begin(cb);
        return cb;
    }
    // Ends and submits it alone (no semaphores), with `fence` if given.
    void submit(VkCommandBuffer cb, VkFence fence = VK_NULL_HANDLE) {
        VK_CHECK(vkEndCommandBuffer(cb));
        suite::submit(ctx.queue, cb, fence);
    }
    // Checks `count` words read back (host-visible, after the fence) and folds them in.
    bool check(const char* what, Sync sync, const vkapp::Buffer& readback, const uint32_t* want, size_t count) {
        suite::invalidate(ctx, readback);
        const auto* got = static_cast<const uint32_t*>(readback.mapped);
        checksum = vkapp::fnv1a(got, count * 4, checksum);
        const std::string name = std::string("narrow_barriers: ") + what + " (" + sync_name(sync) + ")";
        return suite::compare_words(name.c_str(), got, want, count);
    }
};

// --- compute_transfer ------------------------------------------------------------------------

bool compute_transfer(Env& env, Sync sync) {
    vkapp::Context& ctx = env.ctx;
    constexpr uint32_t kN = 4096 + 13, kSteps = 16;
    constexpr VkDeviceSize kBytes = VkDeviceSize(kN) * 4;
    vkapp::Buffer buf[2] = {vkapp::create_buffer(ctx, kBytes, kDeviceUsage, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT),
                            vkapp::create_buffer(ctx, kBytes, kDeviceUsage, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT)};
    vkapp::Buffer upload = vkapp::create_buffer(ctx, kBytes, VK_BUFFER_USAGE_TRANSFER_SRC_BIT, suite::kHostMemory);
    vkapp::Buffer readback =
        vkapp::create_buffer(ctx, kBytes, VK_BUFFER_USAGE_TRANSFER_DST_BIT, suite::cached_host_memory(ctx));
    std::vector<uint32_t> cpu(kN), tmp(kN);
    suite::Rng rng(sync == Sync::v1 ? 0x6e617231ull : 0x6e617232ull);
    for (auto& v : cpu) v = rng.next32();
    std::memcpy(upload.mapped, cpu.data(), kBytes);
    suite::flush(ctx, upload);

    Pipe pipe = step_pipe(ctx);
    VkDescriptorPool dpool = make_pool(ctx);
    VkDescriptorSet sets[2];
    for (int i = 0; i < 2; ++i) {
        sets[i] = suite::allocate_set(ctx, dpool, pipe.set_layout);  // buf[i] -> buf[1 - i]
        write_buffer(ctx, sets[i], 0, buf[i].buffer);
        write_buffer(ctx, sets[i], 1, buf[1 - i].buffer);
    }
    VkFence fence = suite::create_fence(ctx);

    VkCommandBuffer cb = env.begin();
    all_commands_barrier(cb, sync);
    VkBufferCopy whole{0, 0, kBytes};
    vkCmdCopyBuffer(cb, upload.buffer, buf[0].buffer, 1, &whole);
    env.submit(cb);
    uint32_t cur = 0;
    for (uint32_t k = 1; k <= kSteps; ++k) {
        cb = env.begin();
        all_commands_barrier(cb, sync);
        switch (k % 4) {
        case 1:
        case 0: {  // a dispatch: buf[1 - cur] = step(buf[cur])
            const chain::Params p = chain::params_for(k, kN);
            vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipe.pipeline);
            vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipe.layout, 0, 1, &sets[cur], 0, nullptr);
            vkCmdPushConstants(cb, pipe.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof p, &p);
            vkCmdDispatch(cb, 1 + (k * 37) % 16, 1, 1);
            chain::cpu_step(cpu, tmp, p);
            cpu.swap(tmp);
            cur = 1 - cur;
            break;
        }
        case 2: {  // in place: a fill, the barrier, an update overlapping it
            const uint32_t fill_at = (k * 131) % 1024, fill_words = 256, value = 0x01010101u * k;
            vkCmdFillBuffer(cb, buf[cur].buffer, VkDeviceSize(fill_at) * 4, VkDeviceSize(fill_words) * 4, value);
            for (uint32_t i = 0; i < fill_words; ++i) cpu[fill_at + i] = value;
            all_commands_barrier(cb, sync);
            uint32_t data[32];
            for (uint32_t i = 0; i < 32; ++i) data[i] = k * 0x9e3779b9u + i * 0x85ebca6bu;
            const uint32_t update_at = fill_at + 240;  // the fill's last 16 words and 16 after it
            vkCmdUpdateBuffer(cb, buf[cur].buffer, VkDeviceSize(update_at) * 4, sizeof data, data);
            std::memcpy(&cpu[update_at], data, sizeof data);
            break;
        }
        case 3: {  // buf[1 - cur] = buf[cur] rotated left by r words
            const uint32_t r = (k * 977) % kN;
            VkBufferCopy regions[2] = {{VkDeviceSize(r) * 4, 0, VkDeviceSize(kN - r) * 4},
                                       {0, VkDeviceSize(kN - r) * 4, VkDeviceSize(r) * 4}};
            vkCmdCopyBuffer(cb, buf[cur].buffer, buf[1 - cur].buffer, 2, regions);
            for (uint32_t i = 0; i < kN; ++i) tmp[i] = cpu[(i + r) % kN];
            cpu.swap(tmp);
            cur = 1 - cur;
            break;
        }
        }
        env.submit(cb);
    }
    cb = env.begin();
    all_commands_barrier(cb, sync);
    vkCmdCopyBuffer(cb, buf[cur].buffer, readback.buffer, 1, &whole);
    all_commands_barrier(cb, sync, nullptr, true);
    env.submit(cb, fence);
    suite::wait_fence(ctx, fence);
    const bool ok = env.check("compute_transfer", sync, readback, cpu.data(), kN);

    vkDestroyFence(ctx.device, fence, nullptr);
    vkDestroyDescriptorPool(ctx.device, dpool, nullptr);
    vkapp::destroy_compute_pipeline(ctx, pipe);
    for (vkapp::Buffer* b : {&readback, &upload, &buf[1], &buf[0]}) vkapp::destroy_buffer(ctx, *b);
    return ok;
}

// --- indirect --------------------------------------------------------------------------------

uint32_t indirect_hash(uint32_t i, uint32_t groups, uint32_t tag) {
    uint32_t h = i * 2654435761u + groups * 40503u + tag;
    return h ^ (h >> 15);
}

bool indirect(Env& env, Sync sync) {
    vkapp::Context& ctx = env.ctx;
    constexpr uint32_t kWords = 1024, kStale = 0xdeadbeefu;
    // Two parameter slots of 16 bytes; each case's group count and output base.
    struct Case {
        uint32_t groups, slot, tag, base;
    };
    const Case same_cb{sync == Sync::v1 ? 5u : 4u, 0, 11, 0};
    const Case later_cb{sync == Sync::v1 ? 3u : 6u, 1, 22, 512};
    vkapp::Buffer params = vkapp::create_buffer(
        ctx, 32, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT,
        VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
    vkapp::Buffer out = vkapp::create_buffer(ctx, kWords * 4, kDeviceUsage, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
    vkapp::Buffer readback =
        vkapp::create_buffer(ctx, kWords * 4, VK_BUFFER_USAGE_TRANSFER_DST_BIT, suite::cached_host_memory(ctx));
    Pipe make_params = vkapp::create_typed_compute_pipeline(ctx, narrow_params_comp, sizeof(narrow_params_comp),
                                    {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER}, 2 * sizeof(uint32_t));
    Pipe work = vkapp::create_typed_compute_pipeline(ctx, narrow_indirect_comp, sizeof(narrow_indirect_comp),
                             {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER}, 2 * sizeof(uint32_t));
    VkDescriptorPool dpool = make_pool(ctx);
    VkDescriptorSet params_set = suite::allocate_set(ctx, dpool, make_params.set_layout);
    write_buffer(ctx, params_set, 0, params.buffer);
    VkDescriptorSet work_set = suite::allocate_set(ctx, dpool, work.set_layout);
    write_buffer(ctx, work_set, 0, out.buffer);
    VkFence fence = suite::create_fence(ctx);

    auto write_params = [&](VkCommandBuffer cb, const Case& c) {
        const uint32_t pc[2] = {c.groups, c.slot};
        vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, make_params.pipeline);
        vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, make_params.layout, 0, 1, &params_set, 0, nullptr);
        vkCmdPushConstants(cb, make_params.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof pc, pc);
        vkCmdDispatch(cb, 1, 1, 1);
    };
    auto dispatch_indirect = [&](VkCommandBuffer cb, const Case& c) {
        const uint32_t pc[2] = {c.tag, c.base};
        vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, work.pipeline);
        vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, work.layout, 0, 1, &work_set, 0, nullptr);
        vkCmdPushConstants(cb, work.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof pc, pc);
        vkCmdDispatchIndirect(cb, params.buffer, VkDeviceSize(c.slot) * 16);
    };

    // Stale parameters (one group each) and output, then the two cases.
    VkCommandBuffer cb = env.begin();
    all_commands_barrier(cb, sync);
    vkCmdFillBuffer(cb, params.buffer, 0, VK_WHOLE_SIZE, 1);
    vkCmdFillBuffer(cb, out.buffer, 0, VK_WHOLE_SIZE, kStale);
    env.submit(cb);
    // Written and read in one command buffer.
    cb = env.begin();
    all_commands_barrier(cb, sync);
    write_params(cb, same_cb);
    all_commands_barrier(cb, sync);
    dispatch_indirect(cb, same_cb);
    env.submit(cb);
    // Written in one, read in the next.
    cb = env.begin();
    all_commands_barrier(cb, sync);
    write_params(cb, later_cb);
    env.submit(cb);
    cb = env.begin();
    all_commands_barrier(cb, sync);
    dispatch_indirect(cb, later_cb);
    all_commands_barrier(cb, sync);
    VkBufferCopy whole{0, 0, kWords * 4};
    vkCmdCopyBuffer(cb, out.buffer, readback.buffer, 1, &whole);
    all_commands_barrier(cb, sync, nullptr, true);
    env.submit(cb, fence);
    suite::wait_fence(ctx, fence);

    std::vector<uint32_t> want(kWords, kStale);
    for (const Case* c : {&same_cb, &later_cb})
        for (uint32_t i = 0; i < c->groups * 64; ++i) want[c->base + i] = indirect_hash(i, c->groups, c->tag);
    const bool ok = env.check("indirect", sync, readback, want.data(), kWords);

    vkDestroyFence(ctx.device, fence, nullptr);
    vkDestroyDescriptorPool(ctx.device, dpool, nullptr);
    vkapp::destroy_compute_pipeline(ctx, work);
    vkapp::destroy_compute_pipeline(ctx, make_params);
    for (vkapp::Buffer* b : {&readback, &out, &params}) vkapp::destroy_buffer(ctx, *b);
    return ok;
}

// --- graphics_after --------------------------------------------------------------------------

constexpr uint32_t kWidth = 64, kHeight = 48;
constexpr VkFormat kColorFormat = VK_FORMAT_R8G8B8A8_UNORM;

struct Rect {
    uint32_t x0, y0, x1, y1, rgba;  // pixels; R in the low byte (packUnorm4x8's order)
};

struct Vertex {
    float x, y, r, g, b, a;
};

// Expected image: `clear`, then each rectangle moved by (dx, dy), in order. Edges lie on
// pixel boundaries, so coverage is exact.
std::vector<uint32_t> rasterize(const std::vector<Rect>& rects, uint32_t clear, int dx, int dy) {
    std::vector<uint32_t> px(kWidth * kHeight, clear);
    for (const Rect& r : rects)
        for (int y = int(r.y0) + dy; y < int(r.y1) + dy; ++y)
            for (int x = int(r.x0) + dx; x < int(r.x1) + dx; ++x)
                if (x >= 0 && y >= 0 && x < int(kWidth) && y < int(kHeight)) px[y * kWidth + x] = r.rgba;
    return px;
}

float channel(uint32_t rgba, int c) { return float((rgba >> (8 * c)) & 0xff) / 255.0f; }

// The render pass (clear, one subpass, left in COLOR_ATTACHMENT_OPTIMAL, implicit external
// dependencies only: nothing in it orders the draw after earlier work), its framebuffers and
// the pipeline (render.vert/render.frag: pixel positions, flat colours).
struct Graphics {
    vkapp::Context& ctx;
    VkRenderPass render_pass = VK_NULL_HANDLE;
    VkPipelineLayout layout = VK_NULL_HANDLE;
    VkPipeline pipeline = VK_NULL_HANDLE;

    explicit Graphics(vkapp::Context& c) : ctx(c) {
        static_assert(sizeof(Vertex) == offscreen::kVertexStride, "render.vert's vertex layout");
        render_pass = offscreen::create_render_pass(ctx, kColorFormat, VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL,
                                                    offscreen::Dependencies::implicit_only);
        layout = offscreen::create_pipeline_layout(ctx);
        const VkExtent2D extent{kWidth, kHeight};  // static viewport and scissor
        pipeline = offscreen::create_pipeline(ctx, narrow_render_vert, sizeof(narrow_render_vert), narrow_render_frag,
                                              sizeof(narrow_render_frag), layout, render_pass, &extent);
    }
    ~Graphics() {
        vkDestroyPipeline(ctx.device, pipeline, nullptr);
        vkDestroyPipelineLayout(ctx.device, layout, nullptr);
        vkDestroyRenderPass(ctx.device, render_pass, nullptr);
    }

    VkFramebuffer framebuffer(VkImageView view) const {
        return offscreen::create_framebuffer(ctx, render_pass, view, {kWidth, kHeight});
    }

    // The render pass over `fb`, cleared to `clear`, drawing `vertices` vertices of `vb`.
    void draw(VkCommandBuffer cb, VkFramebuffer fb, uint32_t clear, VkBuffer vb, uint32_t vertices) const {
        VkClearValue cv{};
        for (int c = 0; c < 4; ++c) cv.color.float32[c] = channel(clear, c);
        offscreen::begin(cb, render_pass, fb, {kWidth, kHeight}, cv, pipeline, false);
        VkDeviceSize zero = 0;
        vkCmdBindVertexBuffers(cb, 0, 1, &vb, &zero);
        const float pc[4] = {float(kWidth), float(kHeight), 0, 0};
        vkCmdPushConstants(cb, layout, VK_SHADER_STAGE_VERTEX_BIT, 0, sizeof pc, pc);
        vkCmdDraw(cb, vertices, 1, 0, 0);
        vkCmdEndRenderPass(cb);
    }
};

// Compute writes the vertex buffer; the graphics command buffer after it draws from it with
// no barrier in front of the draw: only the compute command buffer's last barrier orders them.
// `event`: the barrier at the end of the compute command buffer is an event instead (reset,
// the dispatch, set, wait, reset): events.draw_reads.
bool draw_reads(Env& env, Sync sync, const Graphics& g, bool event = false) {
    vkapp::Context& ctx = env.ctx;
    const std::vector<Rect> rects = {{4, 4, 30, 20, 0xff0000ffu},
                                     {20, 10, 60, 40, 0xff32c800u},
                                     {2, 30, 16, 46, 0x80f03c1eu},
                                     {40, 2, 62, 12, sync == Sync::v1 ? 0xffffffffu : 0xff00ffffu}};
    const int dx = 1, dy = sync == Sync::v1 ? 0 : 1;
    const uint32_t clear = 0xff302010u;
    const uint32_t vertex_count = uint32_t(rects.size()) * 6;
    vkapp::Buffer rect_buffer = vkapp::create_buffer(ctx, rects.size() * sizeof(Rect),
                                                     VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, suite::kHostMemory);
    std::memcpy(rect_buffer.mapped, rects.data(), rects.size() * sizeof(Rect));
    suite::flush(ctx, rect_buffer);
    vkapp::Buffer vb = vkapp::create_buffer(
        ctx, vertex_count * sizeof(Vertex),
        VK_BUFFER_USAGE_VERTEX_BUFFER_BIT | VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT,
        VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
    vkapp::Buffer readback = vkapp::create_buffer(ctx, VkDeviceSize(kWidth) * kHeight * 4,
                                                  VK_BUFFER_USAGE_TRANSFER_DST_BIT, suite::cached_host_memory(ctx));
    offscreen::Image image = offscreen::create_image(ctx, kColorFormat, kWidth, kHeight,
                             VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT);
    VkFramebuffer fb = g.framebuffer(image.view);
    Pipe verts = vkapp::create_typed_compute_pipeline(ctx, narrow_verts_comp, sizeof(narrow_verts_comp),
                              {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER}, 3 * 4);
    VkDescriptorPool dpool = make_pool(ctx);
    VkDescriptorSet set = suite::allocate_set(ctx, dpool, verts.set_layout);
    write_buffer(ctx, set, 0, rect_buffer.buffer);
    write_buffer(ctx, set, 1, vb.buffer);
    VkFence fence = suite::create_fence(ctx);
    VkEvent e = make_event(ctx);

    // Stale vertices (all at the origin: nothing drawn), then the compute pass.
    VkCommandBuffer cb = env.begin();
    all_commands_barrier(cb, sync);
    vkCmdFillBuffer(cb, vb.buffer, 0, VK_WHOLE_SIZE, 0);
    env.submit(cb);
    cb = env.begin();
    all_commands_barrier(cb, sync);
    if (event) reset_event(cb, sync, e);
    const int32_t pc[3] = {int32_t(rects.size()), dx, dy};
    vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, verts.pipeline);
    vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, verts.layout, 0, 1, &set, 0, nullptr);
    vkCmdPushConstants(cb, verts.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof pc, pc);
    vkCmdDispatch(cb, 1, 1, 1);
    if (event) {  // the only thing between the dispatch and the draw
        set_event(cb, sync, e);
        wait_event(cb, sync, e);
        reset_event(cb, sync, e);
    } else {
        all_commands_barrier(cb, sync);  // the only thing between the dispatch and the draw
    }
    env.submit(cb);
    // The graphics command buffer: the draw first, its own barriers only after the render pass.
    cb = env.begin();
    g.draw(cb, fb, clear, vb.buffer, vertex_count);
    VkImageMemoryBarrier ib{VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER};
    ib.srcAccessMask = VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT;
    ib.dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT;
    ib.oldLayout = VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL;
    ib.newLayout = VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL;
    ib.srcQueueFamilyIndex = ib.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
    ib.image = image.image;
    ib.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
    vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 0,
                         nullptr, 0, nullptr, 1, &ib);
    offscreen::copy_to_buffer(cb, image.image, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, readback.buffer, kWidth, kHeight);
    vkapp::barrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT,
                   VK_ACCESS_HOST_READ_BIT);
    env.submit(cb, fence);
    suite::wait_fence(ctx, fence);
    const std::vector<uint32_t> want = rasterize(rects, clear, dx, dy);
    const bool ok = env.check(event ? "events.draw_reads" : "graphics_after.draw_reads", sync, readback, want.data(),
                              want.size());
    vkDestroyEvent(ctx.device, e, nullptr);

    vkDestroyFence(ctx.device, fence, nullptr);
    vkDestroyDescriptorPool(ctx.device, dpool, nullptr);
    vkapp::destroy_compute_pipeline(ctx, verts);
    vkDestroyFramebuffer(ctx.device, fb, nullptr);
    offscreen::destroy_image(ctx, image);
    for (vkapp::Buffer* b : {&readback, &vb, &rect_buffer}) vkapp::destroy_buffer(ctx, *b);
    return ok;
}

// What the compute command buffer of compute_reads records in front of the barrier:
// nothing (graphics_after), or (history_first_barrier) a barrier that names ALL_COMMANDS on
// one side only, whose first scope does not reach back to the render pass or whose second
// scope does not reach the barrier after it; the barrier after it is what orders the image's
// reads after the render pass, as in graphics_after.
// `event`: the barrier with the transition is an event instead (reset, set, wait; reset at
// the end of the command buffer): events.after_graphics.
enum class Lead { none, compute_to_all, all_to_host, event };
const char* lead_name(Lead lead) {
    return lead == Lead::none             ? "graphics_after.compute_reads"
           : lead == Lead::compute_to_all ? "history_first_barrier (COMPUTE -> ALL_COMMANDS first)"
           : lead == Lead::all_to_host    ? "history_first_barrier (ALL_COMMANDS -> HOST first)"
                                          : "events.after_graphics";
}

void lead_barrier(VkCommandBuffer cb, Sync sync, Lead lead) {
    if (lead == Lead::none || lead == Lead::event) return;
    const bool compute = lead == Lead::compute_to_all;
    const VkPipelineStageFlags2 src = compute ? VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT : kAll;
    const VkAccessFlags2 src_access = compute ? VK_ACCESS_2_SHADER_WRITE_BIT : kWrite;
    const VkPipelineStageFlags2 dst = compute ? kAll : VK_PIPELINE_STAGE_2_HOST_BIT;
    const VkAccessFlags2 dst_access = compute ? VK_ACCESS_2_MEMORY_READ_BIT : VK_ACCESS_2_HOST_READ_BIT;
    if (sync == Sync::v1) {
        vkapp::barrier(cb, VkPipelineStageFlags(src), VkAccessFlags(src_access), VkPipelineStageFlags(dst),
                       VkAccessFlags(dst_access));
        return;
    }
    VkMemoryBarrier2 mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER_2};
    mb.srcStageMask = src;
    mb.srcAccessMask = src_access;
    mb.dstStageMask = dst;
    mb.dstAccessMask = dst_access;
    VkDependencyInfo dep{VK_STRUCTURE_TYPE_DEPENDENCY_INFO};
    dep.memoryBarrierCount = 1;
    dep.pMemoryBarriers = &mb;
    vkCmdPipelineBarrier2(cb, &dep);
}

// A render pass draws into an image; the compute command buffer after it opens with the
// barrier (which also moves the image to GENERAL) and reads the image as a storage image.
bool compute_reads(Env& env, Sync sync, const Graphics& g, Lead lead = Lead::none) {
    vkapp::Context& ctx = env.ctx;
    const std::vector<Rect> rects = {{0, 0, 64, 8, 0xff808080u},
                                     {8, 6, 40, 44, 0xff0000ffu},
                                     {30, 20, 58, 47, sync == Sync::v1 ? 0xc000ff00u : 0x40ff0000u}};
    const uint32_t clear = sync == Sync::v1 ? 0xff000000u : 0x10203040u;
    std::vector<Vertex> vertices;
    for (const Rect& r : rects) {
        const float c[4] = {channel(r.rgba, 0), channel(r.rgba, 1), channel(r.rgba, 2), channel(r.rgba, 3)};
        const float xy[6][2] = {{float(r.x0), float(r.y0)}, {float(r.x1), float(r.y0)}, {float(r.x0), float(r.y1)},
                                {float(r.x1), float(r.y0)}, {float(r.x1), float(r.y1)}, {float(r.x0), float(r.y1)}};
        for (const auto& p : xy) vertices.push_back({p[0], p[1], c[0], c[1], c[2], c[3]});
    }
    vkapp::Buffer vb = vkapp::create_buffer(ctx, vertices.size() * sizeof(Vertex), VK_BUFFER_USAGE_VERTEX_BUFFER_BIT,
                                            suite::kHostMemory);
    std::memcpy(vb.mapped, vertices.data(), vertices.size() * sizeof(Vertex));
    suite::flush(ctx, vb);
    const VkDeviceSize bytes = VkDeviceSize(kWidth) * kHeight * 4;
    vkapp::Buffer pixels = vkapp::create_buffer(ctx, bytes, kDeviceUsage, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
    vkapp::Buffer readback =
        vkapp::create_buffer(ctx, bytes, VK_BUFFER_USAGE_TRANSFER_DST_BIT, suite::cached_host_memory(ctx));
    offscreen::Image image = offscreen::create_image(ctx, kColorFormat, kWidth, kHeight,
                             VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT | VK_IMAGE_USAGE_STORAGE_BIT);
    VkFramebuffer fb = g.framebuffer(image.view);
    Pipe reader = vkapp::create_typed_compute_pipeline(ctx, narrow_image_read_comp, sizeof(narrow_image_read_comp),
                               {VK_DESCRIPTOR_TYPE_STORAGE_IMAGE, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER}, 2 * 4);
    VkDescriptorPool dpool = make_pool(ctx);
    VkDescriptorSet set = suite::allocate_set(ctx, dpool, reader.set_layout);
    write_image(ctx, set, 0, image.view);
    write_buffer(ctx, set, 1, pixels.buffer);
    VkFence fence = suite::create_fence(ctx);
    VkEvent event = make_event(ctx);

    // The graphics command buffer: nothing but the render pass.
    VkCommandBuffer cb = env.begin();
    g.draw(cb, fb, clear, vb.buffer, uint32_t(vertices.size()));
    env.submit(cb);
    // The compute command buffer: the barrier first (with the image's transition), then reads.
    cb = env.begin();
    const Transition to_general{image.image, VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL, VK_IMAGE_LAYOUT_GENERAL};
    lead_barrier(cb, sync, lead);
    if (lead == Lead::event) {
        reset_event(cb, sync, event);
        set_event(cb, sync, event, &to_general);
        wait_event(cb, sync, event, &to_general);
    } else {
        all_commands_barrier(cb, sync, &to_general);
    }
    const uint32_t pc[2] = {kWidth, kHeight};
    vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, reader.pipeline);
    vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, reader.layout, 0, 1, &set, 0, nullptr);
    vkCmdPushConstants(cb, reader.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof pc, pc);
    vkCmdDispatch(cb, kWidth / 8, kHeight / 8, 1);
    all_commands_barrier(cb, sync);
    VkBufferCopy whole{0, 0, bytes};
    vkCmdCopyBuffer(cb, pixels.buffer, readback.buffer, 1, &whole);
    all_commands_barrier(cb, sync, nullptr, true);
    if (lead == Lead::event) reset_event(cb, sync, event);
    env.submit(cb, fence);
    suite::wait_fence(ctx, fence);
    vkDestroyEvent(ctx.device, event, nullptr);
    std::vector<uint32_t> want = rasterize(rects, clear, 0, 0);
    for (uint32_t y = 0; y < kHeight; ++y)
        for (uint32_t x = 0; x < kWidth; ++x) want[y * kWidth + x] ^= x * 0x9e3779b9u + y;
    const bool ok = env.check(lead_name(lead), sync, readback, want.data(), want.size());

    vkDestroyFence(ctx.device, fence, nullptr);
    vkDestroyDescriptorPool(ctx.device, dpool, nullptr);
    vkapp::destroy_compute_pipeline(ctx, reader);
    vkDestroyFramebuffer(ctx.device, fb, nullptr);
    offscreen::destroy_image(ctx, image);
    for (vkapp::Buffer* b : {&readback, &pixels, &vb}) vkapp::destroy_buffer(ctx, *b);
    return ok;
}

// --- events ----------------------------------------------------------------------------------

// events.compute: dispatches ordered by an event instead of barriers, in one vkQueueSubmit of
// two command buffers (so in one batch): the first resets the event, dispatches
// (buf0 -> buf1), sets the event (ALL_COMMANDS), waits on it (ALL_COMMANDS -> ALL_COMMANDS,
// the barrier's accesses) and dispatches again from buf1; the second waits on the event set in
// the first, dispatches from buf1 and resets the event. Fused, every set and wait is narrowed.
bool events_compute(Env& env, Sync sync) {
    vkapp::Context& ctx = env.ctx;
    constexpr uint32_t kN = 2048 + 29;
    constexpr VkDeviceSize kBytes = VkDeviceSize(kN) * 4;
    vkapp::Buffer buf[4];
    for (auto& b : buf) b = vkapp::create_buffer(ctx, kBytes, kDeviceUsage, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
    vkapp::Buffer upload = vkapp::create_buffer(ctx, kBytes, VK_BUFFER_USAGE_TRANSFER_SRC_BIT, suite::kHostMemory);
    vkapp::Buffer readback =
        vkapp::create_buffer(ctx, 2 * kBytes, VK_BUFFER_USAGE_TRANSFER_DST_BIT, suite::cached_host_memory(ctx));
    std::vector<uint32_t> a(kN), b1(kN), b2(kN), b3(kN);
    suite::Rng rng(sync == Sync::v1 ? 0x65763131ull : 0x65763232ull);
    for (auto& v : a) v = rng.next32();
    std::memcpy(upload.mapped, a.data(), kBytes);
    suite::flush(ctx, upload);

    Pipe pipe = step_pipe(ctx);
    VkDescriptorPool dpool = make_pool(ctx);
    const int pairs[3][2] = {{0, 1}, {1, 2}, {1, 3}};
    VkDescriptorSet sets[3];
    for (int i = 0; i < 3; ++i) {
        sets[i] = suite::allocate_set(ctx, dpool, pipe.set_layout);
        write_buffer(ctx, sets[i], 0, buf[pairs[i][0]].buffer);
        write_buffer(ctx, sets[i], 1, buf[pairs[i][1]].buffer);
    }
    const chain::Params p[3] = {chain::params_for(3, kN), chain::params_for(6, kN), chain::params_for(9, kN)};
    chain::cpu_step(a, b1, p[0]);
    chain::cpu_step(b1, b2, p[1]);
    chain::cpu_step(b1, b3, p[2]);
    auto step = [&](VkCommandBuffer cb, int i) {
        vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipe.pipeline);
        vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipe.layout, 0, 1, &sets[i], 0, nullptr);
        vkCmdPushConstants(cb, pipe.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof p[i], &p[i]);
        vkCmdDispatch(cb, 1 + (kN - 1) / 64, 1, 1);
    };
    VkFence fence = suite::create_fence(ctx);
    VkEvent event = make_event(ctx);

    VkCommandBuffer cb = env.begin();
    all_commands_barrier(cb, sync);
    VkBufferCopy whole{0, 0, kBytes};
    vkCmdCopyBuffer(cb, upload.buffer, buf[0].buffer, 1, &whole);
    env.submit(cb);
    VkCommandBuffer two[2] = {env.begin(), env.begin()};
    all_commands_barrier(two[0], sync);  // after the upload
    reset_event(two[0], sync, event);
    step(two[0], 0);
    set_event(two[0], sync, event);
    wait_event(two[0], sync, event);  // same command buffer
    step(two[0], 1);
    wait_event(two[1], sync, event);  // the next one
    step(two[1], 2);
    reset_event(two[1], sync, event);
    for (VkCommandBuffer c : two) VK_CHECK(vkEndCommandBuffer(c));
    VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.commandBufferCount = 2;
    si.pCommandBuffers = two;
    VK_CHECK(vkQueueSubmit(ctx.queue, 1, &si, VK_NULL_HANDLE));
    cb = env.begin();
    all_commands_barrier(cb, sync);
    vkCmdCopyBuffer(cb, buf[2].buffer, readback.buffer, 1, &whole);
    VkBufferCopy second{0, kBytes, kBytes};
    vkCmdCopyBuffer(cb, buf[3].buffer, readback.buffer, 1, &second);
    all_commands_barrier(cb, sync, nullptr, true);
    env.submit(cb, fence);
    suite::wait_fence(ctx, fence);
    std::vector<uint32_t> want(b2);
    want.insert(want.end(), b3.begin(), b3.end());
    const bool ok = env.check("events.compute", sync, readback, want.data(), want.size());

    vkDestroyEvent(ctx.device, event, nullptr);
    vkDestroyFence(ctx.device, fence, nullptr);
    vkDestroyDescriptorPool(ctx.device, dpool, nullptr);
    vkapp::destroy_compute_pipeline(ctx, pipe);
    for (vkapp::Buffer* b : {&readback, &upload, &buf[3], &buf[2], &buf[1], &buf[0]}) vkapp::destroy_buffer(ctx, *b);
    return ok;
}

// --- layout_transition -----------------------------------------------------------------------

uint32_t texel(uint32_t x, uint32_t y, uint32_t seed, uint32_t old, bool rmw) {
    uint32_t v = (x * 73856093u) ^ (y * 19349663u) ^ seed;
    if (rmw) v += old * 1664525u;
    return v ^ (v >> 11);
}

bool layout_transition(Env& env, Sync sync) {
    vkapp::Context& ctx = env.ctx;
    constexpr uint32_t kW = 64, kH = 40;
    constexpr VkDeviceSize kBytes = VkDeviceSize(kW) * kH * 4;
    const uint32_t seeds[2] = {sync == Sync::v1 ? 0x1234u : 0x4321u, 0xabcdefu};
    offscreen::Image image = offscreen::create_image(ctx, VK_FORMAT_R32_UINT, kW, kH, VK_IMAGE_USAGE_STORAGE_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT);
    vkapp::Buffer readback[2];
    for (auto& r : readback)
        r = vkapp::create_buffer(ctx, kBytes, VK_BUFFER_USAGE_TRANSFER_DST_BIT, suite::cached_host_memory(ctx));
    Pipe writer = vkapp::create_typed_compute_pipeline(ctx, narrow_image_write_comp, sizeof(narrow_image_write_comp),
                               {VK_DESCRIPTOR_TYPE_STORAGE_IMAGE}, 4 * 4);
    VkDescriptorPool dpool = make_pool(ctx);
    VkDescriptorSet set = suite::allocate_set(ctx, dpool, writer.set_layout);
    write_image(ctx, set, 0, image.view);
    VkFence fence = suite::create_fence(ctx);

    for (uint32_t round = 0; round < 2; ++round) {
        // Into GENERAL (from UNDEFINED, then from the copy's layout), and a dispatch writes it.
        VkCommandBuffer cb = env.begin();
        const Transition to_general{image.image,
                                    round == 0 ? VK_IMAGE_LAYOUT_UNDEFINED : VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
                                    VK_IMAGE_LAYOUT_GENERAL};
        all_commands_barrier(cb, sync, &to_general);
        const uint32_t pc[4] = {kW, kH, seeds[round], round};
        vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, writer.pipeline);
        vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, writer.layout, 0, 1, &set, 0, nullptr);
        vkCmdPushConstants(cb, writer.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof pc, pc);
        vkCmdDispatch(cb, kW / 8, kH / 8, 1);
        env.submit(cb);
        // Into TRANSFER_SRC_OPTIMAL, and a copy reads it.
        cb = env.begin();
        const Transition to_src{image.image, VK_IMAGE_LAYOUT_GENERAL, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL};
        all_commands_barrier(cb, sync, &to_src);
        offscreen::copy_to_buffer(cb, image.image, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, readback[round].buffer, kW, kH);
        if (round == 1) all_commands_barrier(cb, sync, nullptr, true);
        env.submit(cb, round == 1 ? fence : VK_NULL_HANDLE);
    }
    suite::wait_fence(ctx, fence);
    std::vector<uint32_t> want[2] = {std::vector<uint32_t>(kW * kH), std::vector<uint32_t>(kW * kH)};
    for (uint32_t y = 0; y < kH; ++y)
        for (uint32_t x = 0; x < kW; ++x) {
            want[0][y * kW + x] = texel(x, y, seeds[0], 0, false);
            want[1][y * kW + x] = texel(x, y, seeds[1], want[0][y * kW + x], true);
        }
    bool ok = env.check("layout_transition (first copy)", sync, readback[0], want[0].data(), kW * kH);
    ok = env.check("layout_transition (second copy)", sync, readback[1], want[1].data(), kW * kH) && ok;

    vkDestroyFence(ctx.device, fence, nullptr);
    vkDestroyDescriptorPool(ctx.device, dpool, nullptr);
    vkapp::destroy_compute_pipeline(ctx, writer);
    for (auto& r : readback) vkapp::destroy_buffer(ctx, r);
    offscreen::destroy_image(ctx, image);
    return ok;
}

// --- main ------------------------------------------------------------------------------------

// The default set. Also accepted: graphics_after's two halves alone, and
// history_first_barrier (its own test: suite.narrow_barriers_history_first).
const char* const kScenarios[] = {"compute_transfer", "indirect", "graphics_after", "layout_transition", "events"};
const char* const kMoreScenarios[] = {"graphics_after.draw_reads", "graphics_after.compute_reads",
                                      "history_first_barrier", "events.compute", "events.after_graphics",
                                      "events.draw_reads"};

[[noreturn]] void usage(const char* argv0) {
    std::fprintf(stderr,
                 "usage: %s [scenario...]\n  scenarios: compute_transfer indirect graphics_after "
                 "(graphics_after.draw_reads graphics_after.compute_reads) layout_transition\n"
                 "  events (events.compute events.after_graphics events.draw_reads)\n"
                 "  default: those five; also history_first_barrier\n",
                 argv0);
    std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<std::string> wanted;
    for (int i = 1; i < argc; ++i) {
        const std::string name = argv[i];
        bool known = false;
        for (const char* s : kScenarios) known = known || name == s;
        for (const char* s : kMoreScenarios) known = known || name == s;
        if (!known) usage(argv[0]);
        wanted.push_back(name);
    }
    if (wanted.empty()) wanted.assign(std::begin(kScenarios), std::end(kScenarios));

    const bool sync2 = has_synchronization2();
    if (!sync2)
        std::fprintf(stderr, "narrow_barriers: no synchronization2 feature: only the vkCmdPipelineBarrier runs\n");
    vkapp::ContextOptions options;
    options.graphics = true;
    options.synchronization2 = sync2;
    vkapp::Context ctx = vkapp::create_context("narrow_barriers", options);
    bool ok = true;
    uint64_t checksum = 0;
    {
        Env env{ctx, sync2};
        Graphics graphics(ctx);
        std::vector<Sync> syncs = {Sync::v1};
        if (sync2) syncs.push_back(Sync::v2);
        for (const std::string& name : wanted) {
            for (Sync sync : syncs) {
                env.pool = vkapp::create_command_pool(ctx);
                if (name == "compute_transfer") ok = compute_transfer(env, sync) && ok;
                if (name == "indirect") ok = indirect(env, sync) && ok;
                if (name == "graphics_after" || name == "graphics_after.draw_reads")
                    ok = draw_reads(env, sync, graphics) && ok;
                if (name == "graphics_after" || name == "graphics_after.compute_reads")
                    ok = compute_reads(env, sync, graphics) && ok;
                if (name == "layout_transition") ok = layout_transition(env, sync) && ok;
                if (name == "events" || name == "events.compute") ok = events_compute(env, sync) && ok;
                if (name == "events" || name == "events.after_graphics")
                    ok = compute_reads(env, sync, graphics, Lead::event) && ok;
                if (name == "events" || name == "events.draw_reads") ok = draw_reads(env, sync, graphics, true) && ok;
                if (name == "history_first_barrier") {
                    ok = compute_reads(env, sync, graphics, Lead::compute_to_all) && ok;
                    ok = compute_reads(env, sync, graphics, Lead::all_to_host) && ok;
                }
                vkDestroyCommandPool(ctx.device, env.pool, nullptr);
            }
        }
        checksum = env.checksum;
        VK_CHECK(vkDeviceWaitIdle(ctx.device));
    }
    if (!ok) {
        vkapp::destroy_context(ctx);
        return 1;
    }
    return vkapp::finish(ctx, checksum);
}
