// The application's fences fusion answers from a timeline or, once their batch failed, with its
// error (submit/batch_fences.h): a failure is returned by every status query until the fence is
// reset, destroyed or imported, and it replaces any timeline answer.
#include "submit/batch_fences.h"

#include <gtest/gtest.h>

using slipstream::submit::BatchFences;
using slipstream::submit::PendingFence;

namespace {
VkFence fence(uintptr_t n) { return reinterpret_cast<VkFence>(n); }
}  // namespace

TEST(BatchFences, NoFailureWhenNoneFailed) {
    BatchFences f;
    const VkFence fences[] = {fence(1), fence(2)};
    EXPECT_EQ(f.failure(2, fences), VK_SUCCESS);
}

TEST(BatchFences, FailureStaysUntilForgotten) {
    BatchFences f;
    f.fail(fence(2), VK_ERROR_OUT_OF_DEVICE_MEMORY);
    const VkFence both[] = {fence(1), fence(2)};
    const VkFence other[] = {fence(1)};
    EXPECT_EQ(f.failure(2, both), VK_ERROR_OUT_OF_DEVICE_MEMORY);
    EXPECT_EQ(f.failure(2, both), VK_ERROR_OUT_OF_DEVICE_MEMORY);  // every wait, not just the first
    EXPECT_EQ(f.failure(1, other), VK_SUCCESS);
    const VkFence reset[] = {fence(2)};
    f.forget(1, reset);  // vkResetFences
    EXPECT_EQ(f.failure(2, both), VK_SUCCESS);
}

TEST(BatchFences, FailureReplacesTimelineAnswer) {
    BatchFences f;
    f.answer_later(PendingFence{fence(3), nullptr, VK_NULL_HANDLE, 7});
    EXPECT_FALSE(f.none());
    f.fail(fence(3), VK_ERROR_DEVICE_LOST);
    PendingFence p;
    EXPECT_FALSE(f.find(fence(3), &p));
    EXPECT_TRUE(f.none());
    const VkFence one[] = {fence(3)};
    EXPECT_EQ(f.failure(1, one), VK_ERROR_DEVICE_LOST);
    f.forget(1, one, true);  // vkDestroyFence
    EXPECT_EQ(f.failure(1, one), VK_SUCCESS);
}

// A fence answered from a timeline is known signaled, without a driver call, once a read of that
// timeline was seen at or past its value (the ring of fences a naive runtime waits on); all or
// any, as the wait asks; never for a fence not answered so, nor for an armed replay's (no
// counter of the layer's: `seen` null).
TEST(BatchFences, SeenDoneOnceTheTimelineWasSeenPastTheValue) {
    BatchFences f;
    std::atomic<uint64_t> seen{4};
    const VkFence ring[] = {fence(1), fence(2)};
    f.answer_later(ring, 2, {VK_NULL_HANDLE, nullptr, VK_NULL_HANDLE, 5, &seen});
    f.answer_later({fence(3), nullptr, VK_NULL_HANDLE, 1, nullptr});  // an armed replay's
    EXPECT_FALSE(f.seen_done(2, ring, true));
    seen = 5;
    EXPECT_TRUE(f.seen_done(1, ring, true));
    EXPECT_TRUE(f.seen_done(2, ring, true));
    const VkFence mixed[] = {fence(1), fence(9)};  // fence 9: not answered from a timeline
    EXPECT_FALSE(f.seen_done(2, mixed, true));
    EXPECT_TRUE(f.seen_done(2, mixed, false));
    const VkFence armed[] = {fence(3)};
    EXPECT_FALSE(f.seen_done(1, armed, true));
    f.forget(1, ring);  // vkResetFences of fence 1
    EXPECT_FALSE(f.seen_done(1, ring, true));
    EXPECT_TRUE(f.seen_done(1, ring + 1, true));
}
