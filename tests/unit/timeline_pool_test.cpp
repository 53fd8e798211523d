// The timeline semaphore pool's policy (objects/timeline_pool.h: what qualifies, what is kept,
// what a request may take and with which offset, the bound, overflow) and the translation of
// application values into the driver's (objects/timeline_values.h), which must copy and never
// write into the application's structures.
#include "objects/timeline_values.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

using slipstream::objects::kTimelineHostStep;
using slipstream::objects::kTimelineReuseLimit;
using slipstream::objects::plan_timeline_reuse;
using slipstream::objects::TimelineCopies;
using slipstream::objects::TimelineOffsets;
using slipstream::objects::TimelinePool;
using slipstream::objects::timeline_to_app;
using slipstream::objects::timeline_to_driver;

namespace {
VkSemaphore sem(uintptr_t n) { return reinterpret_cast<VkSemaphore>(n); }

VkSemaphoreTypeCreateInfo timeline_type(uint64_t initial) {
    VkSemaphoreTypeCreateInfo t{VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO};
    t.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
    t.initialValue = initial;
    return t;
}

// A semaphore created plainly and destroyed with its counter at `counter`: whether it was kept.
bool create_destroy(TimelinePool& pool, VkSemaphore s, uint64_t counter) {
    pool.created(s, 0);
    return pool.wants(s) && pool.keep(s, counter);
}
}  // namespace

TEST(TimelinePool, OnlyPlainTimelineRequestsQualify) {
    VkSemaphoreTypeCreateInfo type = timeline_type(7);
    VkSemaphoreCreateInfo info{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
    uint64_t initial = 0;
    EXPECT_FALSE(TimelinePool::plain(info, nullptr, &initial));  // binary: nothing to gain
    info.pNext = &type;
    EXPECT_TRUE(TimelinePool::plain(info, nullptr, &initial));
    EXPECT_EQ(initial, 7u);
    VkAllocationCallbacks callbacks{};
    EXPECT_FALSE(TimelinePool::plain(info, &callbacks, &initial));
    type.semaphoreType = VK_SEMAPHORE_TYPE_BINARY;
    EXPECT_FALSE(TimelinePool::plain(info, nullptr, &initial));
    type.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
    VkExportSemaphoreCreateInfo exported{VK_STRUCTURE_TYPE_EXPORT_SEMAPHORE_CREATE_INFO};
    type.pNext = &exported;  // anything else in the chain goes to the driver
    EXPECT_FALSE(TimelinePool::plain(info, nullptr, &initial));
    exported.pNext = nullptr;
    type.pNext = nullptr;
    info.pNext = &exported;
    exported.pNext = &type;
    EXPECT_FALSE(TimelinePool::plain(info, nullptr, &initial));
    info.pNext = &type;
    info.flags = 0x1;  // a flag a later Vulkan may add
    EXPECT_FALSE(TimelinePool::plain(info, nullptr, &initial));
}

TEST(TimelinePool, ReusePlans) {
    // At or above the request: an offset, no driver call.
    auto r = plan_timeline_reuse(10, 0);
    EXPECT_TRUE(r.usable);
    EXPECT_EQ(r.offset, 10u);
    EXPECT_EQ(r.signal_to, 0u);
    r = plan_timeline_reuse(10, 10);
    EXPECT_TRUE(r.usable);
    EXPECT_EQ(r.offset, 0u);
    EXPECT_EQ(r.signal_to, 0u);
    r = plan_timeline_reuse(10, 3);
    EXPECT_EQ(r.offset, 7u);
    // Below it: a host signal up to the initial value, no offset.
    r = plan_timeline_reuse(10, 1000);
    EXPECT_TRUE(r.usable);
    EXPECT_EQ(r.offset, 0u);
    EXPECT_EQ(r.signal_to, 1000u);
    r = plan_timeline_reuse(10, 10 + kTimelineHostStep);
    EXPECT_TRUE(r.usable);
    // Too far below for a signal every device accepts, or too high to keep: not usable.
    EXPECT_FALSE(plan_timeline_reuse(10, 11 + kTimelineHostStep).usable);
    EXPECT_FALSE(plan_timeline_reuse(kTimelineReuseLimit, 0).usable);
}

TEST(TimelinePool, KeepsAndServesWithTheOffset) {
    TimelinePool pool(8);
    EXPECT_EQ(pool.take(0).semaphore, VK_NULL_HANDLE);
    EXPECT_TRUE(create_destroy(pool, sem(1), 42));
    EXPECT_EQ(pool.pooled(), 1u);
    TimelinePool::Grant g = pool.take(2);
    EXPECT_EQ(g.semaphore, sem(1));
    EXPECT_EQ(g.counter, 42u);
    EXPECT_EQ(g.reuse.offset, 40u);
    EXPECT_EQ(pool.pooled(), 0u);
    pool.created(g.semaphore, g.reuse.offset);
    EXPECT_TRUE(pool.offsets().any());
    EXPECT_EQ(pool.offsets().find(sem(1)), 40u);
    // At its destroy the offset goes with it.
    EXPECT_TRUE(pool.wants(sem(1)));
    EXPECT_FALSE(pool.offsets().any());
    EXPECT_TRUE(pool.keep(sem(1), 50));
}

TEST(TimelinePool, NewestUsableFirst) {
    TimelinePool pool(8);
    EXPECT_TRUE(create_destroy(pool, sem(1), 5));
    EXPECT_TRUE(create_destroy(pool, sem(2), 100));
    EXPECT_TRUE(create_destroy(pool, sem(3), 7));
    EXPECT_EQ(pool.take(0).semaphore, sem(3));
    // A request far above every counter but sem(2)'s skips the others.
    const uint64_t high = 100 + kTimelineHostStep + 1;
    EXPECT_EQ(pool.take(high).semaphore, VK_NULL_HANDLE);
    EXPECT_EQ(pool.take(50 + kTimelineHostStep).semaphore, sem(2));
    EXPECT_EQ(pool.take(0).semaphore, sem(1));
}

TEST(TimelinePool, OnlyLivePlainSemaphoresComeBack) {
    TimelinePool pool(8);
    EXPECT_FALSE(pool.wants(sem(9)));  // never created plainly (binary, exported at create...)
    pool.created(sem(1), 0);
    pool.not_poolable(sem(1));  // exported
    EXPECT_FALSE(pool.wants(sem(1)));
    pool.created(sem(2), 30);
    pool.payload_imported(sem(2));  // its values are the imported payload's now
    EXPECT_EQ(pool.offsets().find(sem(2)), 0u);
    EXPECT_FALSE(pool.offsets().any());
    EXPECT_FALSE(pool.wants(sem(2)));
    pool.created(sem(3), 0);
    EXPECT_TRUE(pool.wants(sem(3)));
    EXPECT_FALSE(pool.wants(sem(3)));  // destroyed once only
}

TEST(TimelinePool, HighCountersAreNotKept) {
    TimelinePool pool(8);
    EXPECT_FALSE(create_destroy(pool, sem(1), kTimelineReuseLimit));
    EXPECT_TRUE(create_destroy(pool, sem(2), kTimelineReuseLimit - 1));
    EXPECT_EQ(pool.pooled(), 1u);
}

TEST(TimelinePool, Bound) {
    TimelinePool pool(2);
    EXPECT_TRUE(create_destroy(pool, sem(1), 0));
    EXPECT_TRUE(create_destroy(pool, sem(2), 0));
    EXPECT_FALSE(create_destroy(pool, sem(3), 0));
    // Both wanted before either was kept: the second keep finds the bound reached.
    TimelinePool small(1);
    small.created(sem(4), 0);
    small.created(sem(5), 0);
    EXPECT_TRUE(small.wants(sem(4)));
    EXPECT_TRUE(small.wants(sem(5)));
    EXPECT_TRUE(small.keep(sem(4), 1));
    EXPECT_FALSE(small.keep(sem(5), 1));
    const std::vector<VkSemaphore> all = pool.drain();
    EXPECT_EQ(all.size(), 2u);
    EXPECT_EQ(pool.pooled(), 0u);
}

TEST(TimelinePool, ValuesSaturate) {
    EXPECT_EQ(timeline_to_driver(5, 0), 5u);
    EXPECT_EQ(timeline_to_driver(5, 10), 15u);
    EXPECT_EQ(timeline_to_driver(UINT64_MAX - 10, 10), UINT64_MAX);
    EXPECT_EQ(timeline_to_driver(UINT64_MAX - 9, 10), UINT64_MAX);
    EXPECT_EQ(timeline_to_driver(UINT64_MAX, kTimelineReuseLimit - 1), UINT64_MAX);
    EXPECT_EQ(timeline_to_app(15, 10), 5u);
    EXPECT_EQ(timeline_to_app(UINT64_MAX, 10), UINT64_MAX - 10);
}

TEST(TimelinePool, ConcurrentCreatesAndDestroysKeepEverythingOnce) {
    TimelinePool pool(64);
    constexpr int kThreads = 4, kRounds = 2000;
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&pool, t] {
            // Each thread owns its handles (as an application's external synchronization does).
            VkSemaphore own = sem(uintptr_t(1000 + t));
            pool.created(own, 0);
            for (int i = 0; i < kRounds; ++i) {
                if (pool.wants(own)) pool.keep(own, uint64_t(i));
                TimelinePool::Grant g = pool.take(0);
                own = g.semaphore ? g.semaphore : sem(uintptr_t(100000 + t * kRounds + i));
                pool.created(own, g.reuse.offset);
                (void)pool.offsets().find(own);
            }
        });
    }
    for (auto& th : threads) th.join();
    EXPECT_LE(pool.pooled(), 64u);
}

// --- translation ---

namespace {
struct Offsets {
    TimelineOffsets o;
    Offsets() {
        o.set(sem(1), 100);  // pooled, offset 100
        o.set(sem(2), 7);    // pooled, offset 7
    }
};
}  // namespace

TEST(TimelineValues, NothingAliveReturnsTheApplicationsPointers) {
    TimelineOffsets none;
    TimelineCopies copies;
    VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    EXPECT_EQ(timeline_submits_to_driver(none, 1, &submit, copies), &submit);
    VkSemaphoreWaitInfo wait{VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO}, storage;
    EXPECT_EQ(timeline_wait_to_driver(none, &wait, storage, copies), &wait);
    EXPECT_TRUE(copies.submits.empty());
    EXPECT_TRUE(copies.blocks.empty());
}

TEST(TimelineValues, SubmitInfoValuesOfPooledSemaphoresOnly) {
    Offsets off;
    VkSemaphore waits[] = {sem(1), sem(3)};  // sem(3): no offset (binary, or a fresh timeline)
    VkPipelineStageFlags stages[] = {VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT};
    VkSemaphore signals[] = {sem(2)};
    uint64_t wait_values[] = {5, 6}, signal_values[] = {9};
    VkProtectedSubmitInfo tail{VK_STRUCTURE_TYPE_PROTECTED_SUBMIT_INFO};
    VkTimelineSemaphoreSubmitInfo values{VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO};
    values.pNext = &tail;
    values.waitSemaphoreValueCount = 2;
    values.pWaitSemaphoreValues = wait_values;
    values.signalSemaphoreValueCount = 1;
    values.pSignalSemaphoreValues = signal_values;
    VkDeviceGroupSubmitInfo group{VK_STRUCTURE_TYPE_DEVICE_GROUP_SUBMIT_INFO};
    group.pNext = &values;
    VkSubmitInfo submits[2] = {{VK_STRUCTURE_TYPE_SUBMIT_INFO}, {VK_STRUCTURE_TYPE_SUBMIT_INFO}};
    submits[1].pNext = &group;  // the timeline values behind another structure
    submits[1].waitSemaphoreCount = 2;
    submits[1].pWaitSemaphores = waits;
    submits[1].pWaitDstStageMask = stages;
    submits[1].signalSemaphoreCount = 1;
    submits[1].pSignalSemaphores = signals;

    TimelineCopies copies;
    const VkSubmitInfo* out = timeline_submits_to_driver(off.o, 2, submits, copies);
    ASSERT_NE(out, submits);
    EXPECT_FALSE(copies.untranslated);
    EXPECT_EQ(out[0].pNext, nullptr);
    // The copied chain: the device group structure copied, then the values, then the shared rest.
    const auto* g = static_cast<const VkDeviceGroupSubmitInfo*>(out[1].pNext);
    ASSERT_NE(g, &group);
    EXPECT_EQ(g->sType, VK_STRUCTURE_TYPE_DEVICE_GROUP_SUBMIT_INFO);
    const auto* v = static_cast<const VkTimelineSemaphoreSubmitInfo*>(g->pNext);
    ASSERT_NE(v, &values);
    EXPECT_EQ(v->sType, VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO);
    EXPECT_EQ(v->pNext, &tail);
    EXPECT_EQ(v->pWaitSemaphoreValues[0], 105u);
    EXPECT_EQ(v->pWaitSemaphoreValues[1], 6u);
    EXPECT_EQ(v->pSignalSemaphoreValues[0], 16u);
    // The application's structures are as they were.
    EXPECT_EQ(group.pNext, &values);
    EXPECT_EQ(wait_values[0], 5u);
    EXPECT_EQ(signal_values[0], 9u);
    EXPECT_EQ(values.pWaitSemaphoreValues, wait_values);
}

TEST(TimelineValues, UnknownStructureInFrontLeavesItUntranslated) {
    Offsets off;
    VkSemaphore s = sem(1);
    uint64_t value = 3;
    VkTimelineSemaphoreSubmitInfo values{VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO};
    values.signalSemaphoreValueCount = 1;
    values.pSignalSemaphoreValues = &value;
    VkBaseInStructure unknown{VkStructureType(1999999000), reinterpret_cast<const VkBaseInStructure*>(&values)};
    VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    submit.pNext = &unknown;
    submit.signalSemaphoreCount = 1;
    submit.pSignalSemaphores = &s;
    TimelineCopies copies;
    const VkSubmitInfo* out = timeline_submits_to_driver(off.o, 1, &submit, copies);
    EXPECT_TRUE(copies.untranslated);
    EXPECT_EQ(out[0].pNext, &unknown);
}

TEST(TimelineValues, BindSparseValues) {
    Offsets off;
    VkSemaphore s = sem(2);
    uint64_t value = 1;
    VkTimelineSemaphoreSubmitInfo values{VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO};
    values.waitSemaphoreValueCount = 1;
    values.pWaitSemaphoreValues = &value;
    VkBindSparseInfo bind{VK_STRUCTURE_TYPE_BIND_SPARSE_INFO};
    bind.pNext = &values;
    bind.waitSemaphoreCount = 1;
    bind.pWaitSemaphores = &s;
    TimelineCopies copies;
    const VkBindSparseInfo* out = timeline_submits_to_driver(off.o, 1, &bind, copies);
    ASSERT_NE(out, &bind);
    EXPECT_EQ(static_cast<const VkTimelineSemaphoreSubmitInfo*>(out->pNext)->pWaitSemaphoreValues[0], 8u);
    EXPECT_EQ(value, 1u);
}

TEST(TimelineValues, SubmitInfo2Values) {
    Offsets off;
    VkSemaphoreSubmitInfo waits[2] = {{VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO}, {VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO}};
    waits[0].semaphore = sem(3);
    waits[0].value = 4;
    waits[1].semaphore = sem(1);
    waits[1].value = 4;
    VkSemaphoreSubmitInfo signal{VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO};
    signal.semaphore = sem(3);
    signal.value = 5;
    VkSubmitInfo2 submits[2] = {{VK_STRUCTURE_TYPE_SUBMIT_INFO_2}, {VK_STRUCTURE_TYPE_SUBMIT_INFO_2}};
    submits[0].signalSemaphoreInfoCount = 1;
    submits[0].pSignalSemaphoreInfos = &signal;
    submits[1].waitSemaphoreInfoCount = 2;
    submits[1].pWaitSemaphoreInfos = waits;
    submits[1].signalSemaphoreInfoCount = 1;
    submits[1].pSignalSemaphoreInfos = &signal;
    TimelineCopies copies;
    const VkSubmitInfo2* out = timeline_submits_to_driver(off.o, 2, submits, copies);
    ASSERT_NE(out, submits);
    EXPECT_EQ(out[0].pSignalSemaphoreInfos, &signal);  // nothing of it has an offset: shared
    EXPECT_EQ(out[1].pSignalSemaphoreInfos, &signal);
    ASSERT_NE(out[1].pWaitSemaphoreInfos, waits);
    EXPECT_EQ(out[1].pWaitSemaphoreInfos[0].value, 4u);
    EXPECT_EQ(out[1].pWaitSemaphoreInfos[1].value, 104u);
    EXPECT_EQ(out[1].pWaitSemaphoreInfos[1].semaphore, sem(1));
    EXPECT_EQ(waits[1].value, 4u);
    // Only binary or unpooled semaphores: the application's array itself.
    TimelineCopies none;
    EXPECT_EQ(timeline_submits_to_driver(off.o, 1, submits, none), submits);
}

TEST(TimelineValues, HostWaitsAndSignals) {
    Offsets off;
    VkSemaphore sems[] = {sem(3), sem(2)};
    uint64_t values[] = {1, UINT64_MAX};
    VkSemaphoreWaitInfo wait{VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO};
    wait.flags = VK_SEMAPHORE_WAIT_ANY_BIT;
    wait.semaphoreCount = 2;
    wait.pSemaphores = sems;
    wait.pValues = values;
    VkSemaphoreWaitInfo storage;
    TimelineCopies copies;
    const VkSemaphoreWaitInfo* out = timeline_wait_to_driver(off.o, &wait, storage, copies);
    ASSERT_EQ(out, &storage);
    EXPECT_EQ(out->flags, wait.flags);
    EXPECT_EQ(out->pSemaphores, sems);
    EXPECT_EQ(out->pValues[0], 1u);
    EXPECT_EQ(out->pValues[1], UINT64_MAX);  // saturated
    EXPECT_EQ(values[1], UINT64_MAX);

    VkSemaphoreSignalInfo signal{VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO};
    signal.semaphore = sem(1);
    signal.value = 11;
    EXPECT_EQ(timeline_signal_to_driver(off.o, signal).value, 111u);
    signal.semaphore = sem(3);
    EXPECT_EQ(timeline_signal_to_driver(off.o, signal).value, 11u);
}
