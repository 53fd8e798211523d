// The flush rules of fusion (src/submit/submit/flush_policy.h), without a driver.
#include "submit/flush_policy.h"
#include "submit/wait_history.h"
#include "core/stats.h"

#include <gtest/gtest.h>

namespace slipstream::submit {
namespace {

OpenBatch batch(uint32_t ops, uint64_t in_flight, bool latency, uint64_t waited_ns = 0, uint64_t cost_ns = 20000) {
    OpenBatch b;
    b.ops = ops;
    b.records = ops * 4;
    b.in_flight = in_flight;
    b.latency_mode = latency;
    b.waited_ns = waited_ns;
    b.submit_cost_ns = cost_ns;
    return b;
}

TEST(FlushPolicy, AFullBatchGoesWhateverRuns) {
    EXPECT_EQ(decide_after_append(batch(32, 5, false), 32), AfterAppend::FlushFull);
    EXPECT_EQ(decide_after_append(batch(31, 5, false), 32), AfterAppend::Keep);
    OpenBatch many_records = batch(1, 5, false);
    many_records.records = kMaxRecordsPerBatch;
    EXPECT_EQ(decide_after_append(many_records, 32), AfterAppend::FlushFull);
}

TEST(FlushPolicy, AnIdleGpuGetsWorkAtOnceOnlyInLatencyMode) {
    EXPECT_EQ(decide_after_append(batch(1, 0, true), 32), AfterAppend::FlushGpuStarving);
    EXPECT_EQ(decide_after_append(batch(1, 1, true), 32), AfterAppend::Keep);
    // Streaming: the submitting thread lets the batch grow, even long after the GPU went idle;
    // the flusher decides.
    EXPECT_EQ(decide_after_append(batch(1, 0, false, 1000000), 32), AfterAppend::Keep);
}

TEST(FlushPolicy, TheFlusherWaitsOneSubmissionCostOnAnIdleGpuAndNeverPastTheDeadline) {
    const uint64_t deadline = 500000;
    EXPECT_EQ(decide_in_flusher(batch(3, 0, false, 19999, 20000), deadline), FlusherAction::Wait);
    EXPECT_EQ(decide_in_flusher(batch(3, 0, false, 20000, 20000), deadline), FlusherAction::FlushGpuStarving);
    EXPECT_EQ(decide_in_flusher(batch(3, 2, false, 499999, 20000), deadline), FlusherAction::Wait);
    EXPECT_EQ(decide_in_flusher(batch(3, 2, false, 500000, 20000), deadline), FlusherAction::FlushDeadline);
    EXPECT_EQ(decide_in_flusher(batch(3, 0, false, 0, 20000), 0), FlusherAction::FlushDeadline);
}

TEST(FlushPolicy, DirectSubmissionNeedsLatencyModeAnIdleGpuAndNoOpenBatch) {
    EXPECT_TRUE(submit_directly(true, false, 0));
    EXPECT_FALSE(submit_directly(false, false, 0));
    EXPECT_FALSE(submit_directly(true, true, 0));
    EXPECT_FALSE(submit_directly(true, false, 1));
}

TEST(FlushPolicy, LatencyModeFollowsSubmissionsPerWait) {
    SyncPattern p;
    EXPECT_TRUE(p.latency_mode());  // until learnt: submit-then-wait pays no latency
    for (int round = 0; round < 4; ++round) {
        for (int i = 0; i < 64; ++i) p.submitted();
        EXPECT_FALSE(p.latency_mode());
        p.waited();
    }
    EXPECT_FALSE(p.latency_mode());  // 64 per wait on average
    for (int round = 0; round < 8; ++round) {
        p.submitted();
        p.waited();
    }
    EXPECT_TRUE(p.latency_mode());  // one per wait again
    p.submitted();
    p.submitted();
    EXPECT_TRUE(p.latency_mode());
    p.submitted();
    EXPECT_FALSE(p.latency_mode());  // a third without a wait: streaming now
}

TEST(FlushPolicy, SubmitCostIsADecayingMinimum) {
    uint64_t cost = 20000;
    cost = next_submit_cost(cost, 12000);
    EXPECT_EQ(cost, 12000u);
    const uint64_t late = next_submit_cost(cost, 900000);  // a read long after completion
    EXPECT_EQ(late, 12000u + 1500u + 1u);
    EXPECT_LT(late, 900000u);
}

// Only a submission of one operation samples the round trip: a full batch's round trip is
// mostly its work, and a stream of them would have raised the cost by an eighth each.
TEST(FlushPolicy, OnlyOneOperationSamplesTheSubmitCost) {
    EXPECT_TRUE(samples_submit_cost(0));
    EXPECT_TRUE(samples_submit_cost(1));
    EXPECT_FALSE(samples_submit_cost(2));
    EXPECT_FALSE(samples_submit_cost(32));
    EXPECT_FALSE(samples_submit_cost(UINT32_MAX));  // the application's own command buffers
}

TEST(FlushPolicy, ComputeOnlyQueuesOweTheClosingBarrier) {
    TrailingBarrierPolicy p;
    // Nothing but narrowed batches: never at the end of a batch.
    for (int i = 0; i < 100; ++i) {
        EXPECT_FALSE(p.at_batch_end());
        p.narrowed_batch();
    }
    // Other work came: the next kWindow narrowed batches end with it ...
    p.other_work();
    for (uint32_t i = 0; i < TrailingBarrierPolicy::kWindow; ++i) {
        EXPECT_TRUE(p.at_batch_end()) << i;
        p.narrowed_batch();
    }
    // ... then, with no more of it, the queue owes it again.
    EXPECT_FALSE(p.at_batch_end());
    // Other work within the window keeps it at the end.
    p.other_work();
    for (int round = 0; round < 10; ++round) {
        for (uint32_t i = 0; i + 1 < TrailingBarrierPolicy::kWindow; ++i) {
            EXPECT_TRUE(p.at_batch_end());
            p.narrowed_batch();
        }
        p.other_work();
    }
    EXPECT_TRUE(p.at_batch_end());
}

TEST(FlushPolicy, SubmissionsWithSemaphoresOrExtensionsPassThrough) {
    VkSubmitInfo s{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    EXPECT_EQ(classify_submit(s, true), PassReason::None);
    VkSemaphore sem = reinterpret_cast<VkSemaphore>(uintptr_t(1));
    s.signalSemaphoreCount = 1;
    s.pSignalSemaphores = &sem;
    EXPECT_EQ(classify_submit(s, true), PassReason::Semaphores);
    VkSubmitInfo t{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    VkProtectedSubmitInfo prot{VK_STRUCTURE_TYPE_PROTECTED_SUBMIT_INFO};
    prot.protectedSubmit = VK_TRUE;
    t.pNext = &prot;
    VkStructureType unknown = VK_STRUCTURE_TYPE_MAX_ENUM;
    EXPECT_EQ(classify_submit(t, true, &unknown), PassReason::SubmitExtension);
    EXPECT_EQ(unknown, VK_STRUCTURE_TYPE_PROTECTED_SUBMIT_INFO);
    VkPerformanceQuerySubmitInfoKHR perf{VK_STRUCTURE_TYPE_PERFORMANCE_QUERY_SUBMIT_INFO_KHR};
    t.pNext = &perf;
    EXPECT_EQ(classify_submit(t, true), PassReason::SubmitExtension);

    VkSubmitInfo2 s2{VK_STRUCTURE_TYPE_SUBMIT_INFO_2};
    EXPECT_EQ(classify_submit(s2, true), PassReason::None);
    s2.flags = VK_SUBMIT_PROTECTED_BIT;
    EXPECT_EQ(classify_submit(s2, true), PassReason::SubmitExtension);
    VkCommandBufferSubmitInfo cb{VK_STRUCTURE_TYPE_COMMAND_BUFFER_SUBMIT_INFO};
    cb.deviceMask = 2;  // a second device of a group
    VkSubmitInfo2 m{VK_STRUCTURE_TYPE_SUBMIT_INFO_2};
    m.commandBufferInfoCount = 1;
    m.pCommandBufferInfos = &cb;
    EXPECT_EQ(classify_submit(m, true), PassReason::SubmitExtension);
    cb.deviceMask = 1;  // the one device there is
    EXPECT_EQ(classify_submit(m, true), PassReason::None);
    EXPECT_EQ(classify_submit(m, false), PassReason::SubmitExtension);
}

// What runtimes chain to every submission and fusion can carry: an empty
// VkTimelineSemaphoreSubmitInfo, device-group masks of a one-device device, a protected-submit
// structure asking for none. With semaphores the submission still passes (a batch boundary).
TEST(FlushPolicy, CarriedSubmitExtensions) {
    VkTimelineSemaphoreSubmitInfo timeline{VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO};
    VkProtectedSubmitInfo unprotected{VK_STRUCTURE_TYPE_PROTECTED_SUBMIT_INFO};
    timeline.pNext = &unprotected;
    VkSubmitInfo s{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    s.pNext = &timeline;
    EXPECT_EQ(classify_submit(s, true), PassReason::None);
    const uint64_t value = 5;
    timeline.signalSemaphoreValueCount = 1;
    timeline.pSignalSemaphoreValues = &value;
    VkSemaphore sem = reinterpret_cast<VkSemaphore>(uintptr_t(1));
    s.signalSemaphoreCount = 1;
    s.pSignalSemaphores = &sem;
    EXPECT_EQ(classify_submit(s, true), PassReason::Semaphores);

    const uint32_t one = 1, two = 3, index0 = 0, index1 = 1;
    VkDeviceGroupSubmitInfo group{VK_STRUCTURE_TYPE_DEVICE_GROUP_SUBMIT_INFO};
    group.commandBufferCount = 1;
    group.pCommandBufferDeviceMasks = &one;
    VkSubmitInfo g{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    g.pNext = &group;
    EXPECT_EQ(classify_submit(g, true), PassReason::None);
    EXPECT_EQ(classify_submit(g, false), PassReason::SubmitExtension);
    group.pCommandBufferDeviceMasks = &two;
    EXPECT_EQ(classify_submit(g, true), PassReason::SubmitExtension);
    group.pCommandBufferDeviceMasks = &one;
    group.waitSemaphoreCount = 1;  // (a submission with semaphores passes anyway; the indices are checked alone)
    group.pWaitSemaphoreDeviceIndices = &index1;
    EXPECT_EQ(classify_submit(g, true), PassReason::SubmitExtension);
    group.pWaitSemaphoreDeviceIndices = &index0;
    EXPECT_EQ(classify_submit(g, true), PassReason::None);

    VkSubmitInfo2 s2{VK_STRUCTURE_TYPE_SUBMIT_INFO_2};
    VkPerformanceQuerySubmitInfoKHR perf{VK_STRUCTURE_TYPE_PERFORMANCE_QUERY_SUBMIT_INFO_KHR};
    s2.pNext = &perf;
    VkStructureType unknown = VK_STRUCTURE_TYPE_MAX_ENUM;
    EXPECT_EQ(classify_submit(s2, true, &unknown), PassReason::SubmitExtension);
    EXPECT_EQ(unknown, VK_STRUCTURE_TYPE_PERFORMANCE_QUERY_SUBMIT_INFO_KHR);
}

// Passed-through submissions counted by the sType that stopped them: a few sTypes by name,
// then "others".
TEST(Stats, PassedExtensionsBySType) {
    DeviceStats stats;
    EXPECT_TRUE(stats.add_passed_extension(VK_STRUCTURE_TYPE_PERFORMANCE_QUERY_SUBMIT_INFO_KHR, 2));
    EXPECT_FALSE(stats.add_passed_extension(VK_STRUCTURE_TYPE_PERFORMANCE_QUERY_SUBMIT_INFO_KHR, 3));
    for (int i = 0; i < DeviceStats::kExtensionSlots + 2; ++i)
        stats.add_passed_extension(VkStructureType(2000000000 + i), 1);
    const auto all = stats.passed_extensions();
    ASSERT_EQ(all.size(), size_t(DeviceStats::kExtensionSlots));
    EXPECT_EQ(all[0].first, uint32_t(VK_STRUCTURE_TYPE_PERFORMANCE_QUERY_SUBMIT_INFO_KHR));
    EXPECT_EQ(all[0].second, 5u);
    EXPECT_EQ(all.back().first, 0u);  // others
    EXPECT_EQ(all.back().second, 4u);  // 10 new sTypes, 6 with slots of their own
}

// LAZY_RECORD=auto's decision at vkEndCommandBuffer (the mode decision of the latency path).
TEST(LatencyPath, RecordedAtTheEndOnlyInLatencyModeAndWithNothingToNarrow) {
    EXPECT_TRUE(record_at_end(true, 0));
    EXPECT_FALSE(record_at_end(true, 1));   // a barrier the batch would narrow: replayed there
    EXPECT_FALSE(record_at_end(false, 0));  // streaming: lazy, fused
}

TEST(LatencyPath, FamiliesFollowTheirLatestSubmission) {
    LatencyFamilies f;
    EXPECT_FALSE(f.has(0));
    f.note(2, true);
    EXPECT_TRUE(f.has(2));
    EXPECT_FALSE(f.has(0));
    EXPECT_FALSE(f.has(3));
    f.note(63, true);
    EXPECT_TRUE(f.has(63));
    f.note(2, false);  // a submission that found work of ours running, or a streaming queue
    EXPECT_FALSE(f.has(2));
    EXPECT_TRUE(f.has(63));
    f.note(64, true);  // beyond the mask: never marked, so recorded lazily as before
    EXPECT_FALSE(f.has(64));
}

TEST(LatencyPath, SubmitThenWaitIsLatencyModeAndAStreamIsNot) {
    // What a queue learns; with an idle GPU and nothing held, its submission goes direct.
    SyncPattern wait_each;
    for (int i = 0; i < 4; ++i) {
        wait_each.submitted();
        EXPECT_TRUE(wait_each.latency_mode());
        wait_each.waited();
    }
    EXPECT_TRUE(submit_directly(wait_each.latency_mode(), false, 0));
    EXPECT_FALSE(submit_directly(wait_each.latency_mode(), true, 0));   // a batch is open
    EXPECT_FALSE(submit_directly(wait_each.latency_mode(), false, 1));  // ours still run
    SyncPattern stream;
    for (int i = 0; i < 32; ++i) stream.submitted();
    EXPECT_FALSE(stream.latency_mode());
    stream.waited();
    stream.submitted();
    EXPECT_FALSE(stream.latency_mode());  // 32 submissions per wait, on average still many
}

// What a batch may trust of the application's latest wait (submit/wait_history.h).
TEST(WaitHistory, OnlyTheSubmissionRightAfterAWaitTheDriverAnsweredComesAfterIt) {
    WaitHistory h;
    const VkFence fence = reinterpret_cast<VkFence>(uintptr_t(0x10));
    h.note_submission(fence);
    EXPECT_FALSE(h.after_wait());
    h.note_wait();
    h.note_seen_done();
    h.note_submission(fence);
    EXPECT_TRUE(h.after_wait());
    EXPECT_TRUE(h.waits_seen_below());
    h.note_submission(fence);  // no wait since the one before
    EXPECT_FALSE(h.after_wait());
}

TEST(WaitHistory, WorkPassedThroughAfterTheWaitIsNotCoveredByIt) {
    // Seed 80250 of the random tester: a submission right after a wait went direct, one with
    // only a timeline signal passed through, and the batch the next one opened trusted the wait
    // (its first fuse barrier left out) although the semaphore wait fusion dropped there was the
    // application's dependency on the work submitted after that wait.
    WaitHistory h;
    const VkFence fence = reinterpret_cast<VkFence>(uintptr_t(0x10));
    h.note_wait();
    h.note_seen_done();
    h.note_submission(fence);
    ASSERT_TRUE(h.after_wait());
    h.note_unwaited_work();
    EXPECT_FALSE(h.after_wait());
    // A passed-through submission between the wait and the next fusable one: not after it either.
    h.note_wait();
    h.note_seen_done();
    h.note_unwaited_work();
    h.note_submission(fence);
    EXPECT_FALSE(h.after_wait());
    EXPECT_FALSE(h.waits_seen_below());
}

}  // namespace
}  // namespace slipstream::submit
