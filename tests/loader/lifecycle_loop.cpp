// Creates and destroys instances, devices, queues, pools and command buffers in a loop, through
// every destroy path the layer follows: explicit frees, pool resets, pools destroyed with
// command buffers still allocated, secondaries executed from primaries. The layer's statistics
// (live_layer_objects) must show nothing left, and LeakSanitizer must find no leak.
#include "vk_app.h"

int main(int argc, char** argv) {
    int rounds = argc > 1 ? std::atoi(argv[1]) : 10;
    uint64_t checksum = 0;
    for (int round = 0; round < rounds; ++round) {
        vkapp::ContextOptions options;
        options.queue_count = 2;
        vkapp::Context ctx = vkapp::create_context("lifecycle_loop", options);
        VkQueue queue2 = VK_NULL_HANDLE;
        VkDeviceQueueInfo2 qi{VK_STRUCTURE_TYPE_DEVICE_QUEUE_INFO_2};
        qi.queueFamilyIndex = ctx.queue_family;
        qi.queueIndex = 0;
        vkGetDeviceQueue2(ctx.device, &qi, &queue2);
        if (queue2 != ctx.queue) {
            std::fprintf(stderr, "vkGetDeviceQueue2 returned another queue\n");
            return 1;
        }

        // Pool A: allocate, free some, reset the pool, destroy it with the rest still allocated.
        VkCommandPool pool_a = vkapp::create_command_pool(ctx);
        VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
        ai.commandPool = pool_a;
        ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
        ai.commandBufferCount = 8;
        VkCommandBuffer cbs[8];
        VK_CHECK(vkAllocateCommandBuffers(ctx.device, &ai, cbs));
        VkCommandBuffer to_free[4] = {cbs[0], VK_NULL_HANDLE, cbs[3], cbs[5]};
        vkFreeCommandBuffers(ctx.device, pool_a, 4, to_free);
        VK_CHECK(vkResetCommandPool(ctx.device, pool_a, 0));
        vkDestroyCommandPool(ctx.device, pool_a, nullptr);

        // Pool B: a primary that executes a secondary, submitted, reset, destroyed.
        VkCommandPool pool_b = vkapp::create_command_pool(ctx, VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT);
        vkapp::Buffer buffer = vkapp::create_buffer(ctx, 4096, VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                                                    VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
        VkCommandBuffer secondary;
        ai.commandPool = pool_b;
        ai.level = VK_COMMAND_BUFFER_LEVEL_SECONDARY;
        ai.commandBufferCount = 1;
        VK_CHECK(vkAllocateCommandBuffers(ctx.device, &ai, &secondary));
        VkCommandBufferInheritanceInfo inherit{VK_STRUCTURE_TYPE_COMMAND_BUFFER_INHERITANCE_INFO};
        VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
        bi.pInheritanceInfo = &inherit;
        VK_CHECK(vkBeginCommandBuffer(secondary, &bi));
        vkCmdFillBuffer(secondary, buffer.buffer, 0, 4096, 0x01010101u * uint32_t(round + 1));
        VK_CHECK(vkEndCommandBuffer(secondary));
        vkapp::one_shot(ctx, pool_b, [&](VkCommandBuffer cb) { vkCmdExecuteCommands(cb, 1, &secondary); });
        VK_CHECK(vkResetCommandBuffer(secondary, 0));
        checksum = vkapp::fnv1a(buffer.mapped, 4096, checksum);
        const uint8_t* bytes = static_cast<const uint8_t*>(buffer.mapped);
        if (bytes[0] != uint8_t(round + 1) || bytes[4095] != uint8_t(round + 1)) {
            std::fprintf(stderr, "round %d: fill result %u, expected %d\n", round, bytes[0], round + 1);
            return 1;
        }
        vkDestroyCommandPool(ctx.device, pool_b, nullptr);
        vkapp::destroy_buffer(ctx, buffer);
        if (round + 1 < rounds) vkapp::destroy_context(ctx);
        else return vkapp::finish(ctx, checksum);
    }
    return 0;
}
