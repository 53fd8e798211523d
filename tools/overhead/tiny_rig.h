// A device with a one-invocation compute pipeline over one storage buffer, and command
// buffers that dispatch it: what the overhead tools submit when they time the layer or the
// driver, not the GPU.
#pragma once

#include "vk_app.h"
#include "tiny_comp.h"

namespace overhead {

struct TinyRig {
    vkapp::Context ctx;
    vkapp::Buffer buffer;
    vkapp::ComputePipeline pipe;
    vkapp::StorageSet storage;
    VkCommandPool pool = VK_NULL_HANDLE;

    TinyRig(const char* name, const vkapp::ContextOptions& options, VkCommandPoolCreateFlags pool_flags = 0) {
        ctx = vkapp::create_context(name, options);
        buffer = vkapp::create_buffer(ctx, 256, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, 0);
        pipe = vkapp::create_compute_pipeline(ctx, tiny_comp, sizeof tiny_comp, 1, 0);
        storage = vkapp::create_storage_set(ctx, pipe, {buffer.buffer});
        pool = vkapp::create_command_pool(ctx, pool_flags);
    }
    ~TinyRig() {
        vkQueueWaitIdle(ctx.queue);
        vkDestroyCommandPool(ctx.device, pool, nullptr);
        vkapp::destroy_storage_set(ctx, storage);
        vkapp::destroy_compute_pipeline(ctx, pipe);
        vkapp::destroy_buffer(ctx, buffer);
        vkapp::destroy_context(ctx);
    }
    TinyRig(const TinyRig&) = delete;
    TinyRig& operator=(const TinyRig&) = delete;

    VkCommandBuffer allocate() { return vkapp::allocate_primary(ctx, pool); }
    void bind(VkCommandBuffer cb) {
        vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipe.pipeline);
        vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipe.layout, 0, 1, &storage.set, 0, nullptr);
    }
    // A command buffer submitted many times: one dispatch after a compute barrier.
    VkCommandBuffer record_one_dispatch() {
        VkCommandBuffer cb = allocate();
        VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
        VK_CHECK(vkBeginCommandBuffer(cb, &bi));
        bind(cb);
        vkapp::barrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                       VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
        vkCmdDispatch(cb, 1, 1, 1);
        VK_CHECK(vkEndCommandBuffer(cb));
        return cb;
    }
};

}  // namespace overhead
