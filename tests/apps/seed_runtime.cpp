// seed_runtime: the submission pattern of the runtime Slipstream started from (Halide's Vulkan
// runtime), which waits after every operation. For each of several chains of dependent
// kernels it creates region buffers and binds them inside one big device block allocated once
// (their sizes change from chain to chain, so regions split and overlap the last chain's),
// zero-fills each new buffer (vkCmdFillBuffer, submit, vkQueueWaitIdle), uploads the chain's
// input, runs the kernels, reads the result back, and destroys the region buffers when the next
// chain starts. Every operation gets a command pool and a command buffer of its own, one
// fence-less vkQueueSubmit and a vkQueueWaitIdle, and the pool is destroyed after it (as the
// runtime's scoped command buffer does). Half the kernels open with an ALL_COMMANDS barrier (a
// batch's replay narrows it; every other one also says BY_REGION), half with a compute barrier only (nothing to narrow: recorded
// into the driver at vkEndCommandBuffer and submitted directly under LAZY_RECORD=auto).
// Each chain's result is compared with a CPU simulation.
//
// --submit-extensions: every submission chains an empty VkTimelineSemaphoreSubmitInfo and
// device-group masks of the one device (fusion carries them; the latency path's submissions
// go to the driver with them).
// --fence: each operation is waited for with a fence and vkWaitForFences instead of
// vkQueueWaitIdle, and the odd kernels have no barrier at all: they rely on that wait alone for
// what the kernel before wrote (a fence wait orders everything before it), and a fused batch
// opened after such a wait leaves its fuse barrier out (fuse_barriers_after_wait).
#include "chain_step.h"
#include "suite_util.h"
#include "vk_app.h"

#include "seed_step_comp.h"

#include <cstring>
#include <functional>
#include <vector>

namespace {

using chain::Params;

bool g_fence = false;       // --fence
bool g_extensions = false;  // --submit-extensions

// A submission as the seed runtime makes it; with --submit-extensions it chains what some
// runtimes attach to every submission and says nothing here: an empty
// VkTimelineSemaphoreSubmitInfo and device-group masks naming the one device.
void submit_one(vkapp::Context& ctx, VkCommandBuffer cb, VkFence fence) {
    if (!g_extensions) {
        suite::submit(ctx.queue, cb, fence);
        return;
    }
    const uint32_t one_device = 1;
    VkDeviceGroupSubmitInfo group{VK_STRUCTURE_TYPE_DEVICE_GROUP_SUBMIT_INFO};
    group.commandBufferCount = 1;
    group.pCommandBufferDeviceMasks = &one_device;
    VkTimelineSemaphoreSubmitInfo timeline{VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO, &group};
    VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO, &timeline};
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cb;
    VK_CHECK(vkQueueSubmit(ctx.queue, 1, &si, fence));
}

// One operation as the seed runtime submits it.
void submit_and_wait_idle(vkapp::Context& ctx, const std::function<void(VkCommandBuffer)>& record) {
    VkCommandPool pool = vkapp::create_command_pool(ctx);
    VkCommandBuffer cb = suite::allocate_command_buffers(ctx, pool, 1)[0];
    suite::begin(cb);
    record(cb);
    VK_CHECK(vkEndCommandBuffer(cb));
    if (g_fence) {
        VkFence fence = suite::create_fence(ctx);
        submit_one(ctx, cb, fence);
        VK_CHECK(vkWaitForFences(ctx.device, 1, &fence, VK_TRUE, UINT64_MAX));
        vkDestroyFence(ctx.device, fence, nullptr);
    } else {
        submit_one(ctx, cb, VK_NULL_HANDLE);
        VK_CHECK(vkQueueWaitIdle(ctx.queue));
    }
    vkDestroyCommandPool(ctx.device, pool, nullptr);
}

// What a new region's users need before them: every earlier compute and transfer access done
// (the regions of the chain before may have shared its memory), its writes visible.
void region_barrier(VkCommandBuffer cb, VkPipelineStageFlags dst) {
    const VkPipelineStageFlags work = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
    const VkAccessFlags access = dst == VK_PIPELINE_STAGE_TRANSFER_BIT
                                     ? VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT
                                     : VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
    vkapp::barrier(cb, work, VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT, dst, access);
}

}  // namespace

int main(int argc, char** argv) {
    g_fence = suite::has_flag(argc, argv, "--fence");
    g_extensions = suite::has_flag(argc, argv, "--submit-extensions");
    std::vector<char*> rest;  // what parse_scale judges: all but the two flags
    for (int i = 0; i < argc; ++i)
        if (i == 0 || (std::strcmp(argv[i], "--fence") && std::strcmp(argv[i], "--submit-extensions")))
            rest.push_back(argv[i]);
    const uint32_t scale = suite::parse_scale(int(rest.size()), rest.data());
    const uint32_t kChains = 6 * scale;
    const uint32_t kStages = 10;
    const uint32_t kMaxN = 4096 + 77;
    const VkBufferUsageFlags usage =
        VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;

    vkapp::Context ctx = vkapp::create_context("seed_runtime");
    vkapp::ComputePipeline pipe =
        vkapp::create_compute_pipeline(ctx, seed_step_comp, sizeof(seed_step_comp), 2, sizeof(Params));
    VkDescriptorPool dpool = suite::create_storage_pool(ctx, kStages, 2 * kStages);
    std::vector<VkDescriptorSet> sets;
    for (uint32_t k = 0; k < kStages; ++k) sets.push_back(suite::allocate_set(ctx, dpool, pipe.set_layout));

    // The block, sized for the largest chain's regions at the alignment the device asks.
    VkBufferCreateInfo bci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    bci.usage = usage;
    bci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    bci.size = VkDeviceSize(kMaxN) * 4;
    VkBuffer probe;
    VK_CHECK(vkCreateBuffer(ctx.device, &bci, nullptr, &probe));
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(ctx.device, probe, &req);
    vkDestroyBuffer(ctx.device, probe, nullptr);
    const VkDeviceSize align = req.alignment;
    const VkDeviceSize slot = (req.size + align - 1) / align * align;
    VkMemoryAllocateInfo mai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    mai.allocationSize = slot * (kStages + 1);
    int type = vkapp::find_memory_type(ctx.memory_properties, req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
    if (type < 0) type = vkapp::find_memory_type(ctx.memory_properties, req.memoryTypeBits, 0);
    mai.memoryTypeIndex = uint32_t(type);
    VkDeviceMemory block;
    VK_CHECK(vkAllocateMemory(ctx.device, &mai, nullptr, &block));

    vkapp::Buffer upload =
        vkapp::create_buffer(ctx, VkDeviceSize(kMaxN) * 4, VK_BUFFER_USAGE_TRANSFER_SRC_BIT, suite::kHostMemory);
    vkapp::Buffer readback = vkapp::create_buffer(ctx, VkDeviceSize(kMaxN) * 4, VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                                                  suite::cached_host_memory(ctx));
    suite::Rng rng(0x5eed2ull);
    std::vector<VkBuffer> regions;
    std::vector<uint32_t> all_results;
    bool ok = true;
    for (uint32_t c = 0; c < kChains && ok; ++c) {
        for (VkBuffer b : regions) vkDestroyBuffer(ctx.device, b, nullptr);  // the last chain's
        regions.clear();
        const uint32_t n = kMaxN - 811 * (c % 4);  // regions of another size every chain
        const VkDeviceSize bytes = VkDeviceSize(n) * 4;
        // Packed at the device's alignment: a chain's regions straddle the last one's.
        const VkDeviceSize stride = (bytes + align - 1) / align * align;
        bci.size = bytes;
        for (uint32_t j = 0; j <= kStages; ++j) {
            VkBuffer b;
            VK_CHECK(vkCreateBuffer(ctx.device, &bci, nullptr, &b));
            vkGetBufferMemoryRequirements(ctx.device, b, &req);
            VK_CHECK(vkBindBufferMemory(ctx.device, b, block, stride * j));
            regions.push_back(b);
            submit_and_wait_idle(ctx, [&](VkCommandBuffer cb) {
                region_barrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT);
                vkCmdFillBuffer(cb, b, 0, VK_WHOLE_SIZE, 0);
            });
        }
        std::vector<uint32_t> want(n), next(n);
        for (uint32_t& v : want) v = rng.next32();
        std::memcpy(upload.mapped, want.data(), bytes);
        suite::flush(ctx, upload);
        submit_and_wait_idle(ctx, [&](VkCommandBuffer cb) {
            region_barrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT);
            VkBufferCopy copy{0, 0, bytes};
            vkCmdCopyBuffer(cb, upload.buffer, regions[0], 1, &copy);
        });
        for (uint32_t k = 0; k < kStages; ++k) vkapp::write_storage_buffers(ctx, sets[k], {regions[k], regions[k + 1]});
        for (uint32_t k = 0; k < kStages; ++k) {
            const Params p = chain::params_for(c * kStages + k, n);
            submit_and_wait_idle(ctx, [&](VkCommandBuffer cb) {
                if (k % 2 == 0) {
                    // Every fourth with BY_REGION, as samples set it everywhere (narrowed all the same).
                    VkMemoryBarrier m{VK_STRUCTURE_TYPE_MEMORY_BARRIER, nullptr, VK_ACCESS_MEMORY_WRITE_BIT,
                                      VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT};
                    vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
                                         k % 4 == 0 ? VK_DEPENDENCY_BY_REGION_BIT : 0, 1, &m, 0, nullptr, 0, nullptr);
                } else if (!g_fence) {
                    region_barrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT);
                }
                vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipe.pipeline);
                vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipe.layout, 0, 1, &sets[k], 0, nullptr);
                vkCmdPushConstants(cb, pipe.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof p, &p);
                vkCmdDispatch(cb, 1 + (k * 7) % 16, 1, 1);
            });
            chain::cpu_step(want, next, p);
            want.swap(next);
        }
        submit_and_wait_idle(ctx, [&](VkCommandBuffer cb) {
            region_barrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT);
            VkBufferCopy copy{0, 0, bytes};
            vkCmdCopyBuffer(cb, regions[kStages], readback.buffer, 1, &copy);
            vkapp::barrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT,
                           VK_ACCESS_HOST_READ_BIT);
        });
        suite::invalidate(ctx, readback);
        const uint32_t* got = static_cast<const uint32_t*>(readback.mapped);
        ok = suite::compare_words("seed_runtime chain", got, want.data(), n);
        all_results.insert(all_results.end(), got, got + n);
    }

    for (VkBuffer b : regions) vkDestroyBuffer(ctx.device, b, nullptr);
    vkFreeMemory(ctx.device, block, nullptr);
    vkapp::destroy_buffer(ctx, readback);
    vkapp::destroy_buffer(ctx, upload);
    vkDestroyDescriptorPool(ctx.device, dpool, nullptr);
    vkapp::destroy_compute_pipeline(ctx, pipe);
    if (!ok) {
        vkapp::destroy_context(ctx);
        return 1;
    }
    return vkapp::finish(ctx, vkapp::fnv1a(all_results.data(), all_results.size() * 4));
}
