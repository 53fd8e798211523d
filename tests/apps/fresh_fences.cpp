// fresh_fences: the fence lifetimes of compute runtimes that create a fence per operation (and
// what the layer's fence pool, VK_SLIPSTREAM_OBJECT_POOL, must keep right when it hands a
// destroyed fence out again). Every operation fills one slot of a host-visible buffer with its
// own value and the host checks the slot once the operation's fence says it is done.
//   per_operation  create a fence (it must be unsignaled), submit a fill with it, wait with
//                  vkWaitForFences or, every other operation, by polling vkGetFenceStatus,
//                  check, destroy;
//   signaled       fences created signaled: vkWaitForFences with a zero timeout and
//                  vkGetFenceStatus must say signaled at once; some are destroyed as they
//                  are, some reset and used for an operation first; a fence created unsignaled
//                  next must be unsignaled;
//   wait_idle      a fence submitted with a fill and destroyed right after vkQueueWaitIdle,
//                  never waited on itself;
//   many_alive     a dozen fences alive at once, their fills submitted back to back, waited
//                  for together (all, then any), destroyed in another order, created again;
//   fused_batch    six fills submitted back to back, one fence each, the host waiting only
//                  afterwards: fused, one batch carries them and only the last fence reaches
//                  the driver (the earlier ones are answered from the batch's timeline). All
//                  six are destroyed and six created again: each must be unsignaled, and they
//                  carry the next round;
//   unsubmitted    a fence created and destroyed without ever being submitted, then one created
//                  again: unsignaled.
// Prints nothing but a failure (and the device with --print-device); the checksum covers every
// value read.
#include "suite_util.h"
#include "vk_app.h"

#include <chrono>
#include <cstring>
#include <vector>

namespace {

constexpr uint32_t kSlots = 16, kWords = 64;
constexpr VkDeviceSize kSlotBytes = kWords * 4;

struct Rig {
    vkapp::Context& ctx;
    vkapp::Buffer slots;
    VkCommandPool pool = VK_NULL_HANDLE;
    std::vector<VkCommandBuffer> cbs;
    uint32_t next_cb = 0, next_value = 0x1000;
    uint64_t checksum = 1469598103934665603ull;
    bool ok = true;

    explicit Rig(vkapp::Context& c) : ctx(c) {
        slots = vkapp::create_buffer(ctx, kSlots * kSlotBytes, VK_BUFFER_USAGE_TRANSFER_DST_BIT, suite::kHostMemory);
        pool = vkapp::create_command_pool(ctx, VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT);
        cbs = suite::allocate_command_buffers(ctx, pool, 2 * kSlots);
    }
    ~Rig() {
        vkDestroyCommandPool(ctx.device, pool, nullptr);
        vkapp::destroy_buffer(ctx, slots);
    }

    void fail(const char* what, const char* detail) {
        std::fprintf(stderr, "fresh_fences: %s: %s\n", what, detail);
        ok = false;
    }
    // A fence fresh from vkCreateFence must be unsignaled, whatever the layer handed out.
    VkFence create_unsignaled(const char* what) {
        VkFence f = suite::create_fence(ctx);
        if (vkGetFenceStatus(ctx.device, f) != VK_NOT_READY) fail(what, "a new fence is not unsignaled (status)");
        if (vkWaitForFences(ctx.device, 1, &f, VK_TRUE, 0) != VK_TIMEOUT) fail(what, "a new fence is not unsignaled (wait)");
        return f;
    }
    VkFence create_signaled(const char* what) {
        VkFence f = suite::create_fence(ctx, true);
        if (vkWaitForFences(ctx.device, 1, &f, VK_TRUE, 0) != VK_SUCCESS) fail(what, "a signaled fence made a wait wait");
        if (vkGetFenceStatus(ctx.device, f) != VK_SUCCESS) fail(what, "a signaled fence reports unsignaled");
        return f;
    }
    // Submits a fill of `slot` with a value of its own (returned) and makes it visible to the
    // host; the command buffer is the next of the ring (its last use was waited for).
    uint32_t fill(uint32_t slot, VkFence fence) {
        VkCommandBuffer cb = cbs[next_cb++ % cbs.size()];
        const uint32_t value = next_value++;
        suite::begin(cb);
        vkCmdFillBuffer(cb, slots.buffer, slot * kSlotBytes, kSlotBytes, value);
        vkapp::barrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT,
                       VK_ACCESS_HOST_READ_BIT);
        VK_CHECK(vkEndCommandBuffer(cb));
        suite::submit(ctx.queue, cb, fence);
        return value;
    }
    void check(const char* what, uint32_t slot, uint32_t value) {
        const uint32_t* got = static_cast<const uint32_t*>(slots.mapped) + slot * kWords;
        std::vector<uint32_t> want(kWords, value);
        if (!suite::compare_words(what, got, want.data(), kWords)) ok = false;
        checksum = vkapp::fnv1a(got, kSlotBytes, checksum);
    }
    void poll(const char* what, VkFence f) {
        const auto start = std::chrono::steady_clock::now();
        for (;;) {
            VkResult r = vkGetFenceStatus(ctx.device, f);
            if (r == VK_SUCCESS) return;
            if (r != VK_NOT_READY) {
                fail(what, "vkGetFenceStatus failed");
                return;
            }
            if (std::chrono::steady_clock::now() - start > std::chrono::seconds(10)) {
                fail(what, "the fence never signaled (10 s of vkGetFenceStatus)");
                return;
            }
        }
    }
};

void per_operation(Rig& rig) {
    for (uint32_t i = 0; i < 48; ++i) {
        VkFence f = rig.create_unsignaled("per_operation");
        const uint32_t slot = i % kSlots;
        const uint32_t value = rig.fill(slot, f);
        if (i % 2) rig.poll("per_operation", f);
        else suite::wait_fence(rig.ctx, f);
        rig.check("per_operation", slot, value);
        vkDestroyFence(rig.ctx.device, f, nullptr);
    }
}

void signaled(Rig& rig) {
    for (uint32_t i = 0; i < 16; ++i) {
        VkFence f = rig.create_signaled("signaled");
        if (i % 2 == 0) {
            vkDestroyFence(rig.ctx.device, f, nullptr);  // kept signaled
            VkFence g = rig.create_unsignaled("signaled, then unsignaled");
            vkDestroyFence(rig.ctx.device, g, nullptr);
            continue;
        }
        VK_CHECK(vkResetFences(rig.ctx.device, 1, &f));
        if (vkGetFenceStatus(rig.ctx.device, f) != VK_NOT_READY) rig.fail("signaled", "a reset fence reports signaled");
        const uint32_t slot = i % kSlots;
        const uint32_t value = rig.fill(slot, f);
        suite::wait_fence(rig.ctx, f);
        rig.check("signaled", slot, value);
        vkDestroyFence(rig.ctx.device, f, nullptr);
    }
}

void wait_idle(Rig& rig) {
    for (uint32_t i = 0; i < 16; ++i) {
        VkFence f = rig.create_unsignaled("wait_idle");
        const uint32_t slot = (i * 5) % kSlots;
        const uint32_t value = rig.fill(slot, f);
        VK_CHECK(vkQueueWaitIdle(rig.ctx.queue));
        rig.check("wait_idle", slot, value);
        vkDestroyFence(rig.ctx.device, f, nullptr);  // signaled, never waited on
    }
}

void many_alive(Rig& rig) {
    constexpr uint32_t kAlive = 12;
    for (uint32_t round = 0; round < 3; ++round) {
        VkFence fences[kAlive];
        uint32_t values[kAlive];
        for (VkFence& f : fences) f = rig.create_unsignaled("many_alive");
        for (uint32_t i = 0; i < kAlive; ++i) values[i] = rig.fill(i, fences[i]);
        if (round == 1) {
            // Any, then all.
            VK_CHECK(vkWaitForFences(rig.ctx.device, kAlive, fences, VK_FALSE, UINT64_MAX));
        }
        VK_CHECK(vkWaitForFences(rig.ctx.device, kAlive, fences, VK_TRUE, UINT64_MAX));
        for (uint32_t i = 0; i < kAlive; ++i) rig.check("many_alive", i, values[i]);
        // Odd ones first, then the even ones backwards.
        for (uint32_t i = 1; i < kAlive; i += 2) vkDestroyFence(rig.ctx.device, fences[i], nullptr);
        for (uint32_t i = kAlive; i-- > 0;)
            if (i % 2 == 0) vkDestroyFence(rig.ctx.device, fences[i], nullptr);
    }
}

void fused_batch(Rig& rig) {
    constexpr uint32_t kBatch = 6;
    VkFence fences[kBatch];
    for (VkFence& f : fences) f = rig.create_unsignaled("fused_batch");
    for (uint32_t round = 0; round < 8; ++round) {
        uint32_t values[kBatch];
        for (uint32_t i = 0; i < kBatch; ++i) values[i] = rig.fill(i, fences[i]);
        // The last one first (it carried the batch), then all of them.
        suite::wait_fence(rig.ctx, fences[kBatch - 1]);
        if (round % 2) {
            for (uint32_t i = 0; i + 1 < kBatch; ++i) rig.poll("fused_batch", fences[i]);
        } else {
            VK_CHECK(vkWaitForFences(rig.ctx.device, kBatch, fences, VK_TRUE, UINT64_MAX));
        }
        for (uint32_t i = 0; i < kBatch; ++i) rig.check("fused_batch", i, values[i]);
        for (VkFence f : fences) vkDestroyFence(rig.ctx.device, f, nullptr);
        for (VkFence& f : fences) f = rig.create_unsignaled("fused_batch, created again");
    }
    for (VkFence f : fences) vkDestroyFence(rig.ctx.device, f, nullptr);
}

void unsubmitted(Rig& rig) {
    for (uint32_t i = 0; i < 4; ++i) {
        VkFence f = rig.create_unsignaled("unsubmitted");
        vkDestroyFence(rig.ctx.device, f, nullptr);
    }
    VkFence f = rig.create_unsignaled("unsubmitted, then submitted");
    const uint32_t value = rig.fill(3, f);
    suite::wait_fence(rig.ctx, f);
    rig.check("unsubmitted", 3, value);
    vkDestroyFence(rig.ctx.device, f, nullptr);
}

}  // namespace

int main(int argc, char** argv) {
    const uint32_t scale = suite::parse_scale(argc, argv);
    vkapp::Context ctx = vkapp::create_context("fresh_fences");
    suite::print_device(argc, argv, ctx);
    uint64_t checksum = 0;
    bool ok = true;
    {
        Rig rig(ctx);
        for (uint32_t s = 0; s < scale; ++s) {
            per_operation(rig);
            signaled(rig);
            wait_idle(rig);
            many_alive(rig);
            fused_batch(rig);
            unsubmitted(rig);
        }
        // Every program of the suite ends with a device wait on a queue the layer knows is idle.
        VK_CHECK(vkDeviceWaitIdle(ctx.device));
        checksum = rig.checksum;
        ok = rig.ok;
    }
    return vkapp::finish_checked(ctx, ok, checksum);
}
