#include "objects/alloc_cache.h"
#include "objects/zero_fill.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <thread>
#include <vector>

using slipstream::objects::AllocCache;
using slipstream::objects::AllocCacheLimits;
using slipstream::objects::PendingFills;

namespace {

VkDeviceMemory mem(uintptr_t n) { return reinterpret_cast<VkDeviceMemory>(n); }
VkBuffer buf(uintptr_t n) { return reinterpret_cast<VkBuffer>(n); }
// Gives memory n its fill buffer (n + 1000) and owes its fill.
bool owe(PendingFills& p, uintptr_t n, VkDeviceSize size = 65536) {
    if (!p.buffer_of(mem(n))) p.set_buffer(mem(n), buf(n + 1000));
    return p.owe(mem(n), size);
}

constexpr PendingFills::QueueId kA = 1, kB = 2, kC = 3;

std::vector<uintptr_t> memories(const std::vector<PendingFills::Fill>& fills) {
    std::vector<uintptr_t> out;
    for (const auto& f : fills) out.push_back(reinterpret_cast<uintptr_t>(f.memory));
    return out;
}

TEST(PendingFills, NothingOwedIsInactive) {
    PendingFills p;
    EXPECT_FALSE(p.active());
    EXPECT_TRUE(p.take().empty());
    EXPECT_TRUE(p.waits_for(kA).empty());
    EXPECT_FALSE(p.release(mem(1)).has_value());
    EXPECT_FALSE(p.owe(mem(1), 4096));  // no fill buffer: nothing can be owed
    EXPECT_FALSE(p.active());
}

TEST(PendingFills, FillBuffersGoWithTheirMemory) {
    PendingFills p;
    p.set_buffer(mem(1), buf(11));
    p.set_buffer(mem(2), buf(12));
    EXPECT_EQ(p.buffer_of(mem(1)), buf(11));
    VkBuffer b = VK_NULL_HANDLE;
    EXPECT_FALSE(p.release(mem(1), &b).has_value());
    EXPECT_EQ(b, buf(11));
    EXPECT_EQ(p.buffer_of(mem(1)), VK_NULL_HANDLE);
    EXPECT_TRUE(p.owe(mem(2), 4096));
    const auto left = p.drain_buffers();
    ASSERT_EQ(left.size(), 1u);
    EXPECT_EQ(left[0], buf(12));
    EXPECT_FALSE(p.active());  // what was owed goes with them
}

TEST(PendingFills, OwedFillsGoWithTheNextSubmissionInOrderOnce) {
    PendingFills p;
    owe(p, 3);
    owe(p, 1);
    owe(p, 3);  // freed and handed out again before a submission: one fill
    EXPECT_TRUE(p.active());
    EXPECT_EQ(p.owed(), 2u);
    const auto fills = p.take();
    EXPECT_EQ(memories(fills), (std::vector<uintptr_t>{3, 1}));
    EXPECT_EQ(fills[0].buffer, buf(1003));
    EXPECT_TRUE(p.take().empty());  // a second submission owes nothing
    p.submitted(kA, 1, fills);
    EXPECT_TRUE(p.active());  // submitted, not known complete
    p.completed(kA, 1);
    EXPECT_FALSE(p.active());
}

TEST(PendingFills, FreedBeforeItsFillRanIsNoLongerOwed) {
    PendingFills p;
    owe(p, 1);
    owe(p, 2);
    EXPECT_TRUE(p.forgive(mem(1)));
    EXPECT_FALSE(p.forgive(mem(1)));
    EXPECT_FALSE(p.owes(mem(1)));
    EXPECT_TRUE(p.owes(mem(2)));
    EXPECT_EQ(memories(p.take()), (std::vector<uintptr_t>{2}));
    EXPECT_FALSE(p.active());
}

TEST(PendingFills, AFailedSubmissionOwesItsFillsAgainFirst) {
    PendingFills p;
    owe(p, 1);
    owe(p, 2);
    const auto fills = p.take();
    owe(p, 3);  // another thread handed one out meanwhile
    p.failed(fills);
    EXPECT_EQ(memories(p.take()), (std::vector<uintptr_t>{1, 2, 3}));
}

TEST(PendingFills, OtherQueuesWaitOnceForAFillNotKnownComplete) {
    PendingFills p;
    owe(p, 1);
    p.submitted(kA, 5, p.take());
    EXPECT_TRUE(p.waits_for(kA).empty());  // same queue: submission order suffices
    auto waits = p.waits_for(kB);
    ASSERT_EQ(waits.size(), 1u);
    EXPECT_EQ(waits[0].queue, kA);
    EXPECT_EQ(waits[0].value, 5u);
    p.waited(kB, waits[0]);
    EXPECT_TRUE(p.waits_for(kB).empty());   // B waited already
    EXPECT_EQ(p.waits_for(kC).size(), 1u);  // C did not
    // A newer fill on A: B waits again.
    owe(p, 2);
    p.submitted(kA, 6, p.take());
    waits = p.waits_for(kB);
    ASSERT_EQ(waits.size(), 1u);
    EXPECT_EQ(waits[0].value, 6u);
    // Known complete: nobody waits.
    p.completed(kA, 6);
    EXPECT_TRUE(p.waits_for(kB).empty());
    EXPECT_TRUE(p.waits_for(kC).empty());
    EXPECT_FALSE(p.active());
}

TEST(PendingFills, WaitsCoverEveryOtherQueueWithFillsInFlight) {
    PendingFills p;
    owe(p, 1);
    p.submitted(kA, 1, p.take());
    owe(p, 2);
    p.submitted(kB, 1, p.take());
    EXPECT_EQ(p.waits_for(kC).size(), 2u);
    EXPECT_EQ(p.waits_for(kA).size(), 1u);
    const auto unfinished = p.unfinished();
    EXPECT_EQ(unfinished.size(), 2u);
    p.completed(kB, 1);
    EXPECT_EQ(p.unfinished().size(), 1u);
}

TEST(PendingFills, MemoryGivenBackWaitsForItsFillOnlyWhileItMayRun) {
    PendingFills p;
    owe(p, 1);
    owe(p, 2);
    p.submitted(kA, 3, p.take());
    const auto t = p.release(mem(1));
    ASSERT_TRUE(t.has_value());
    EXPECT_EQ(t->queue, kA);
    EXPECT_EQ(t->value, 3u);
    EXPECT_FALSE(p.release(mem(1)).has_value());  // forgotten
    p.completed(kA, 3);
    EXPECT_FALSE(p.release(mem(2)).has_value());  // done: no wait
    // Owed and never submitted: forgotten, nothing to wait for.
    owe(p, 4);
    EXPECT_FALSE(p.release(mem(4)).has_value());
    EXPECT_FALSE(p.active());
}

TEST(PendingFills, ThreadsOweAndTakeWithoutLosingAFill) {
    PendingFills p;
    constexpr int kThreads = 4, kEach = 500;
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
        threads.emplace_back([&p, t] {
            for (int i = 0; i < kEach; ++i) owe(p, uintptr_t(1 + t * kEach + i));
        });
    size_t taken = 0;
    uint64_t value = 0;
    while (taken < size_t(kThreads * kEach)) {
        const auto fills = p.take();
        taken += fills.size();
        if (!fills.empty()) p.submitted(kA, ++value, fills);
        if (taken < size_t(kThreads * kEach)) std::this_thread::yield();
    }
    for (auto& t : threads) t.join();
    EXPECT_EQ(taken, size_t(kThreads * kEach));
    EXPECT_TRUE(p.take().empty());
}

AllocCacheLimits limits(bool zero, bool gpu_fill) {
    VkPhysicalDeviceMemoryProperties memory{};
    memory.memoryHeapCount = 2;
    memory.memoryHeaps[0] = {uint64_t(8) << 30, VK_MEMORY_HEAP_DEVICE_LOCAL_BIT};
    memory.memoryHeaps[1] = {uint64_t(4) << 30, 0};
    memory.memoryTypeCount = 2;
    memory.memoryTypes[0] = {VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0};
    memory.memoryTypes[1] = {VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT, 1};
    VkPhysicalDeviceLimits device{};
    device.nonCoherentAtomSize = 64;
    device.maxMemoryAllocationCount = 4096;
    return AllocCache::limits_for(memory, device, 0, zero, gpu_fill);
}

TEST(AllocCacheGpuFill, HostInvisibleTypesQualifyWhenTheGpuFillsThem) {
    const AllocCache without(limits(true, false));
    EXPECT_FALSE(without.qualifies(0, 65536));
    EXPECT_FALSE(without.gpu_filled(0));
    const AllocCache with(limits(true, true));
    EXPECT_TRUE(with.qualifies(0, 65536));
    EXPECT_TRUE(with.gpu_filled(0));
    EXPECT_FALSE(with.gpu_filled(1));  // host-visible: map + memset
    EXPECT_TRUE(with.qualifies(1, 65537));
    EXPECT_FALSE(with.qualifies(0, 65538));  // vkCmdFillBuffer fills whole words only
    // Zeroing off: every type is kept as it was left, nothing is filled.
    const AllocCache off(limits(false, true));
    EXPECT_TRUE(off.qualifies(0, 65538));
    EXPECT_FALSE(off.gpu_filled(0));
}

TEST(AllocCacheGpuFill, LetGoForgetsAnAllocationTheCacheWantedButCouldNotKeep) {
    AllocCache c(limits(true, true));
    c.allocated(mem(1), true, 0, 0, 65536);
    EXPECT_EQ(c.live(), 1u);
    bool mapped = true;
    uint32_t type = 9;
    VkDeviceSize size = 0;
    ASSERT_TRUE(c.wants(mem(1), &mapped, &type, &size));
    EXPECT_EQ(type, 0u);
    EXPECT_EQ(size, 65536u);
    EXPECT_FALSE(mapped);
    c.let_go(mem(1));
    EXPECT_EQ(c.live(), 0u);
    EXPECT_EQ(c.kept(), 0u);
    EXPECT_FALSE(c.take(0, 0, 65536).memory);
}

}  // namespace
