// IdleTracker against a test double of the driver's fence calls: the interleavings of several
// threads that a real driver cannot be made to produce on demand, replayed step by step.
#include "idle/queue_idle.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

using namespace slipstream;

namespace {

// The driver double: fences are small integers, signaled or not; submits are recorded.
struct FakeDriver {
    std::map<VkFence, bool> signaled;
    int status_calls = 0, submits = 0;
    uint64_t next_fence = 1000;  // fences the tracker creates (its own) start here
    QueueIdle* probe = nullptr;   // if set, status calls note whether its lock was held
    int own_polls_locked = 0, own_polls_unlocked = 0;
};
FakeDriver* g_driver = nullptr;

VkFence fence(uint64_t n) { return reinterpret_cast<VkFence>(n); }

VKAPI_ATTR VkResult VKAPI_CALL FakeGetFenceStatus(VkDevice, VkFence f) {
    ++g_driver->status_calls;
    if (g_driver->probe && reinterpret_cast<uint64_t>(f) >= 1000) {
        if (g_driver->probe->mutex.try_lock()) {
            g_driver->probe->mutex.unlock();
            ++g_driver->own_polls_unlocked;
        } else {
            ++g_driver->own_polls_locked;
        }
    }
    return g_driver->signaled[f] ? VK_SUCCESS : VK_NOT_READY;
}
VKAPI_ATTR VkResult VKAPI_CALL FakeResetFences(VkDevice, uint32_t n, const VkFence* fs) {
    for (uint32_t i = 0; i < n; ++i) g_driver->signaled[fs[i]] = false;
    return VK_SUCCESS;
}
VKAPI_ATTR VkResult VKAPI_CALL FakeCreateFence(VkDevice, const VkFenceCreateInfo*, const VkAllocationCallbacks*, VkFence* f) {
    *f = fence(g_driver->next_fence++);
    g_driver->signaled[*f] = false;
    return VK_SUCCESS;
}
VKAPI_ATTR void VKAPI_CALL FakeDestroyFence(VkDevice, VkFence f, const VkAllocationCallbacks*) { g_driver->signaled.erase(f); }
VKAPI_ATTR VkResult VKAPI_CALL FakeQueueSubmit(VkQueue, uint32_t, const VkSubmitInfo*, VkFence) {
    ++g_driver->submits;
    return VK_SUCCESS;
}

class IdleTrackerTest : public ::testing::Test {
protected:
    void SetUp() override {
        g_driver = &driver;
        dispatch.GetFenceStatus = FakeGetFenceStatus;
        dispatch.ResetFences = FakeResetFences;
        dispatch.CreateFence = FakeCreateFence;
        dispatch.DestroyFence = FakeDestroyFence;
        dispatch.QueueSubmit = FakeQueueSubmit;
    }
    void TearDown() override {
        for (QueueIdle* q : {&q1, &q2}) tracker.destroy_own_fences(*q);
        g_driver = nullptr;
    }
    // A successful application submit of `f` to `q`, as TrackedSubmission makes it.
    void submit(QueueIdle& q, VkFence f) {
        VkFence used = tracker.fence_for_submit(q, f);
        driver.signaled[used] = false;
        tracker.after_submit(q, f, used, VK_SUCCESS);
    }
    QueueActivity poll(QueueIdle& q) {
        VkResult error;
        QueueActivity a = tracker.poll(q, &error);
        EXPECT_EQ(error, VK_SUCCESS);
        return a;
    }
    void reset(VkFence f) {
        tracker.begin_fence_reset(1, &f);
        driver.signaled[f] = false;
        tracker.end_fence_reset(1, &f);
    }

    FakeDriver driver;
    VkLayerDispatchTable dispatch{};
    VkDevice device = reinterpret_cast<VkDevice>(uintptr_t(1));
    IdleTracker tracker{device, dispatch};
    QueueIdle q1, q2;
};

TEST_F(IdleTrackerTest, FenceSignalMakesItsQueueIdle) {
    const VkFence f = fence(1);
    submit(q1, f);
    EXPECT_EQ(poll(q1), QueueActivity::Pending);
    driver.signaled[f] = true;
    EXPECT_EQ(poll(q1), QueueActivity::Idle);
}

// The race a review found: thread A registered its fence only after the driver's submit
// returned; thread B, in that window, waited on the fence, reset it and submitted it to
// another queue. A's late registration then pointed the fence at the wrong queue.
TEST_F(IdleTrackerTest, FenceResubmittedElsewhereBeforeTheFirstSubmitReturns) {
    const VkFence f = fence(1);
    // A: before the driver call.
    VkFence used = tracker.fence_for_submit(q1, f);
    // ... the driver runs q1's work and signals f; B sees it, resets f, submits it to q2.
    driver.signaled[f] = true;
    tracker.app_fences_signaled(1, &f, tracker.fence_epoch());
    reset(f);
    submit(q2, f);
    // A: the driver's submit returns.
    tracker.after_submit(q1, f, used, VK_SUCCESS);

    EXPECT_EQ(poll(q1), QueueActivity::Idle);  // its work is done: B saw f signal for it
    EXPECT_EQ(poll(q2), QueueActivity::Pending);
    // q2's submission completes: the signal is credited to q2, the queue f was last submitted to.
    driver.signaled[f] = true;
    tracker.app_fences_signaled(1, &f, tracker.fence_epoch());
    {
        std::lock_guard lock(q2.mutex);
        EXPECT_EQ(q2.activity, QueueActivity::Idle);
    }
}

// A wait's answer that raced a reset and a resubmission of the same fence must not be taken
// for the new submission's completion.
TEST_F(IdleTrackerTest, StaleSignalAfterResetAndResubmitIsIgnored) {
    const VkFence f = fence(1);
    submit(q1, f);
    driver.signaled[f] = true;
    const uint64_t epoch = tracker.fence_epoch();  // B's wait starts, and the driver says signaled
    reset(f);                                      // A resets f and submits new work with it
    submit(q1, f);
    tracker.app_fences_signaled(1, &f, epoch);  // B's answer arrives late
    EXPECT_FALSE(tracker.known_signaled(1, &f, true));
    {
        std::lock_guard lock(q1.mutex);
        EXPECT_EQ(q1.activity, QueueActivity::Pending);
    }
    EXPECT_EQ(poll(q1), QueueActivity::Pending);
}

TEST_F(IdleTrackerTest, KnownSignaledUntilReset) {
    const VkFence a = fence(1), b = fence(2);
    submit(q1, a);
    EXPECT_FALSE(tracker.known_signaled(1, &a, true));
    driver.signaled[a] = true;
    tracker.app_fences_signaled(1, &a, tracker.fence_epoch());
    EXPECT_TRUE(tracker.known_signaled(1, &a, true));
    const VkFence both[2] = {a, b};
    EXPECT_FALSE(tracker.known_signaled(2, both, true));
    EXPECT_TRUE(tracker.known_signaled(2, both, false));
    reset(a);
    EXPECT_FALSE(tracker.known_signaled(1, &a, true));
    EXPECT_FALSE(tracker.known_signaled(2, both, false));
    // Resubmitted: not signaled until the driver says so again.
    driver.signaled[a] = true;
    tracker.app_fences_signaled(1, &a, tracker.fence_epoch());
    reset(a);
    submit(q1, a);
    EXPECT_FALSE(tracker.known_signaled(1, &a, true));
}

TEST_F(IdleTrackerTest, QueueIdleMarksItsLatestFenceSignaled) {
    const VkFence f = fence(1);
    submit(q1, f);
    {
        std::lock_guard lock(q1.mutex);
        tracker.mark_idle(q1);  // the driver's vkQueueWaitIdle returned
    }
    EXPECT_TRUE(tracker.known_signaled(1, &f, true));
}

TEST_F(IdleTrackerTest, ResetOfTheLatestFenceLeavesTheQueueUnknownUnlessSignaled) {
    const VkFence f = fence(1), g = fence(2);
    submit(q1, f);
    reset(f);  // not signaled: the layer can no longer tell when q1's work ends
    EXPECT_EQ(poll(q1), QueueActivity::Unknown);
    {
        std::lock_guard lock(q2.mutex);
        tracker.mark_idle(q2);
    }
    submit(q2, g);
    driver.signaled[g] = true;
    reset(g);  // signaled before the reset: q2's work is done
    EXPECT_EQ(poll(q2), QueueActivity::Idle);
}

TEST_F(IdleTrackerTest, FailedSubmitUndoesTheRegistration) {
    const VkFence f = fence(1);
    VkFence used = tracker.fence_for_submit(q1, f);
    tracker.after_submit(q1, f, used, VK_ERROR_DEVICE_LOST);
    EXPECT_EQ(poll(q1), QueueActivity::Unknown);
    driver.signaled[f] = true;
    tracker.app_fences_signaled(1, &f, tracker.fence_epoch());
    EXPECT_EQ(poll(q1), QueueActivity::Unknown);  // f says nothing about q1 any more
}

// Invalid usage drivers tolerate (tests/misuse): a fence submitted again while its first
// submission may still run can signal for that one (lavapipe does), so it says nothing about
// the second: the queue is Unknown, and idle waits go to the driver, until one returns.
TEST_F(IdleTrackerTest, FenceSubmittedAgainWhilePendingIsNotFollowed) {
    const VkFence f = fence(1);
    submit(q1, f);
    submit(q1, f);
    EXPECT_EQ(poll(q1), QueueActivity::Unknown);
    driver.signaled[f] = true;  // the first submission's signal
    tracker.app_fences_signaled(1, &f, tracker.fence_epoch());
    EXPECT_EQ(poll(q1), QueueActivity::Unknown);
    {
        std::lock_guard lock(q1.mutex);
        tracker.mark_idle(q1);  // the driver's vkQueueWaitIdle returned
    }
    reset(f);
    submit(q1, f);  // reset first: followed again
    EXPECT_EQ(poll(q1), QueueActivity::Pending);
}

// A fence created signaled (or seen signaled) and submitted without a reset.
TEST_F(IdleTrackerTest, SignaledFenceSubmittedIsNotFollowed) {
    const VkFence f = fence(1), g = fence(2);
    driver.signaled[f] = true;
    tracker.fence_created_signaled(f);
    submit(q1, f);
    driver.signaled[f] = true;  // still signaled from its creation, the work not done
    EXPECT_EQ(poll(q1), QueueActivity::Unknown);
    EXPECT_FALSE(tracker.known_signaled(1, &f, true));
    // Seen signaled by a wait, then submitted again.
    {
        std::lock_guard lock(q2.mutex);
        tracker.mark_idle(q2);
    }
    submit(q2, g);
    driver.signaled[g] = true;
    tracker.app_fences_signaled(1, &g, tracker.fence_epoch());
    EXPECT_EQ(poll(q2), QueueActivity::Idle);
    submit(q2, g);
    EXPECT_EQ(poll(q2), QueueActivity::Unknown);
}

TEST_F(IdleTrackerTest, FenceOfAFailedSubmitMaySubmitAgain) {
    const VkFence f = fence(1);
    VkFence used = tracker.fence_for_submit(q1, f);
    tracker.after_submit(q1, f, used, VK_ERROR_OUT_OF_HOST_MEMORY);
    {
        std::lock_guard lock(q1.mutex);
        tracker.mark_idle(q1);
    }
    submit(q1, f);
    EXPECT_EQ(poll(q1), QueueActivity::Pending);
}

TEST_F(IdleTrackerTest, FailedSubmitReturnsOurFenceToTheFreeList) {
    // Submit-then-wait teaches the queue to attach fences of ours at submit time.
    for (int i = 0; i < 4; ++i) {
        submit(q1, VK_NULL_HANDLE);
        std::lock_guard lock(q1.mutex);
        tracker.note_idle_wait(q1);
        tracker.mark_idle(q1);
    }
    ASSERT_TRUE(q1.fence_at_submit());
    VkFence own = tracker.fence_for_submit(q1, VK_NULL_HANDLE);
    ASSERT_NE(own, VK_NULL_HANDLE);
    tracker.after_submit(q1, VK_NULL_HANDLE, own, VK_ERROR_OUT_OF_HOST_MEMORY);
    EXPECT_TRUE(q1.own_pending.empty());
    EXPECT_EQ(std::count(q1.own_free.begin(), q1.own_free.end(), own), 1);
}

// An idle wait polls Slipstream's own fence with no lock held, so fence calls of other
// threads (and, through the per-queue locks, submissions to other queues) never wait behind it.
TEST_F(IdleTrackerTest, BusyQueueGetsOurFenceAndPollsItWithoutTheLock) {
    submit(q1, VK_NULL_HANDLE);
    {
        std::lock_guard lock(q1.mutex);
        ASSERT_TRUE(tracker.fence_busy_queue(q1, reinterpret_cast<VkQueue>(uintptr_t(7))));
    }
    EXPECT_EQ(driver.submits, 1);
    driver.probe = &q1;
    EXPECT_EQ(poll(q1), QueueActivity::Pending);
    driver.signaled[q1.last_fence] = true;
    EXPECT_EQ(poll(q1), QueueActivity::Idle);
    EXPECT_EQ(driver.own_polls_locked, 0);
    EXPECT_EQ(driver.own_polls_unlocked, 2);
    driver.probe = nullptr;
}

}  // namespace
