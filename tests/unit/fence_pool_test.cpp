// The fence pool's policy (objects/fence_pool.h): what qualifies, which list a destroyed fence
// goes to, what a request gets, the bound, and the quarantine of fences a submission may still
// signal.
#include "objects/fence_pool.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

using slipstream::objects::FenceAtDestroy;
using slipstream::objects::FenceKept;
using slipstream::objects::FencePool;

namespace {
VkFence fence(uintptr_t n) { return reinterpret_cast<VkFence>(n); }

bool wants(FencePool& pool, VkFence f) {
    uint64_t created_at = 0;
    return pool.wants(f, &created_at);
}

// A fence created plainly and destroyed in `state`: where it went.
FenceKept create_destroy(FencePool& pool, VkFence f, FenceAtDestroy state) {
    pool.created(f);
    if (!wants(pool, f)) return FenceKept::No;
    return pool.keep(f, state);
}
}  // namespace

TEST(FencePool, OnlyPlainRequestsQualify) {
    VkFenceCreateInfo info{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    EXPECT_TRUE(FencePool::plain(info, nullptr));
    info.flags = VK_FENCE_CREATE_SIGNALED_BIT;
    EXPECT_TRUE(FencePool::plain(info, nullptr));
    VkExportFenceCreateInfo exported{VK_STRUCTURE_TYPE_EXPORT_FENCE_CREATE_INFO};
    info.pNext = &exported;
    EXPECT_FALSE(FencePool::plain(info, nullptr));  // anything in pNext goes to the driver
    info.pNext = nullptr;
    VkAllocationCallbacks callbacks{};
    EXPECT_FALSE(FencePool::plain(info, &callbacks));
    info.flags = 0x100;  // a flag a later Vulkan may add
    EXPECT_FALSE(FencePool::plain(info, nullptr));
}

TEST(FencePool, EmptyPoolServesNothing) {
    FencePool pool(8);
    EXPECT_EQ(pool.take(false).fence, VK_NULL_HANDLE);
    EXPECT_EQ(pool.take(true).fence, VK_NULL_HANDLE);
    EXPECT_TRUE(pool.take_quarantined(4).empty());
}

TEST(FencePool, SignaledAtDestroyServesBothKindsOfRequest) {
    FencePool pool(8);
    EXPECT_EQ(create_destroy(pool, fence(1), FenceAtDestroy::Signaled), FenceKept::Signaled);
    EXPECT_EQ(create_destroy(pool, fence(2), FenceAtDestroy::Signaled), FenceKept::Signaled);
    // A signaled request takes it as it is; an unsignaled one has it reset first.
    FencePool::Grant g = pool.take(true);
    EXPECT_NE(g.fence, VK_NULL_HANDLE);
    EXPECT_FALSE(g.reset);
    g = pool.take(false);
    EXPECT_NE(g.fence, VK_NULL_HANDLE);
    EXPECT_TRUE(g.reset);
    EXPECT_EQ(pool.pooled(), 0u);
}

TEST(FencePool, UnsubmittedFencesServeOnlyUnsignaledRequests) {
    FencePool pool(8);
    EXPECT_EQ(create_destroy(pool, fence(1), FenceAtDestroy::Unsubmitted), FenceKept::Unsignaled);
    EXPECT_EQ(pool.take(true).fence, VK_NULL_HANDLE);  // no cheap way to signal it
    FencePool::Grant g = pool.take(false);
    EXPECT_EQ(g.fence, fence(1));
    EXPECT_FALSE(g.reset);
}

TEST(FencePool, UnsignaledRequestsPreferFencesThatNeedNoReset) {
    FencePool pool(8);
    create_destroy(pool, fence(1), FenceAtDestroy::Signaled);
    create_destroy(pool, fence(2), FenceAtDestroy::Unsubmitted);
    FencePool::Grant g = pool.take(false);
    EXPECT_EQ(g.fence, fence(2));
    EXPECT_FALSE(g.reset);
    g = pool.take(true);  // the signaled one is still there for a signaled request
    EXPECT_EQ(g.fence, fence(1));
}

TEST(FencePool, MaybePendingIsQuarantinedUntilTheDriverSaysSignaled) {
    FencePool pool(8);  // two quarantined at most
    EXPECT_EQ(create_destroy(pool, fence(1), FenceAtDestroy::MaybePending), FenceKept::Quarantined);
    EXPECT_EQ(create_destroy(pool, fence(2), FenceAtDestroy::MaybePending), FenceKept::Quarantined);
    // Never handed out from the quarantine itself.
    EXPECT_EQ(pool.take(false).fence, VK_NULL_HANDLE);
    EXPECT_EQ(pool.take(true).fence, VK_NULL_HANDLE);
    std::vector<VkFence> check = pool.take_quarantined(1);
    ASSERT_EQ(check, std::vector<VkFence>{fence(1)});  // oldest first
    EXPECT_EQ(pool.pooled(), 2u);                       // still counted while checked
    pool.checked(fence(1), false);                      // still running: to the back
    check = pool.take_quarantined(1);
    ASSERT_EQ(check, std::vector<VkFence>{fence(2)});
    pool.checked(fence(2), true);
    EXPECT_EQ(pool.in_list(FenceKept::Quarantined), 1u);
    EXPECT_EQ(pool.in_list(FenceKept::Signaled), 1u);
    FencePool::Grant g = pool.take(false);
    EXPECT_EQ(g.fence, fence(2));
    EXPECT_TRUE(g.reset);
}

TEST(FencePool, UnsignaledAtDestroyIsUnsubmittedOnlyIfNothingWasGivenToTheDriverSince) {
    FencePool pool(8);
    uint64_t created_at = 0;
    pool.created(fence(1));
    ASSERT_TRUE(pool.wants(fence(1), &created_at));
    EXPECT_EQ(pool.unsignaled_state(created_at, false), FenceAtDestroy::Unsubmitted);

    pool.created(fence(2));
    pool.note_fence_given();  // a submission with some fence (maybe this one)
    ASSERT_TRUE(pool.wants(fence(2), &created_at));
    EXPECT_EQ(pool.unsignaled_state(created_at, false), FenceAtDestroy::MaybePending);
    // Answered from a fusion timeline: its driver fence never went to the driver.
    EXPECT_EQ(pool.unsignaled_state(created_at, true), FenceAtDestroy::Unsubmitted);

    // Created after the submission: counted from then.
    pool.created(fence(3));
    ASSERT_TRUE(pool.wants(fence(3), &created_at));
    EXPECT_EQ(pool.unsignaled_state(created_at, false), FenceAtDestroy::Unsubmitted);
}

TEST(FencePool, QuarantineHoldsAQuarterOfTheBound) {
    FencePool pool(8);
    EXPECT_EQ(create_destroy(pool, fence(1), FenceAtDestroy::MaybePending), FenceKept::Quarantined);
    EXPECT_EQ(create_destroy(pool, fence(2), FenceAtDestroy::MaybePending), FenceKept::Quarantined);
    // Fences that may never signal must not fill the pool: the rest goes to the driver.
    EXPECT_EQ(create_destroy(pool, fence(3), FenceAtDestroy::MaybePending), FenceKept::No);
    EXPECT_EQ(create_destroy(pool, fence(4), FenceAtDestroy::Signaled), FenceKept::Signaled);
    // One being checked still counts.
    std::vector<VkFence> check = pool.take_quarantined(1);
    EXPECT_EQ(create_destroy(pool, fence(5), FenceAtDestroy::MaybePending), FenceKept::No);
    pool.checked(check[0], true);
    EXPECT_EQ(create_destroy(pool, fence(6), FenceAtDestroy::MaybePending), FenceKept::Quarantined);
}

TEST(FencePool, FailedStatusIsNotKept) {
    FencePool pool(8);
    EXPECT_EQ(create_destroy(pool, fence(1), FenceAtDestroy::Failed), FenceKept::No);
    EXPECT_EQ(pool.pooled(), 0u);
}

TEST(FencePool, ImportedOrExportedFencesAreNeverKept) {
    FencePool pool(8);
    pool.created(fence(1));
    pool.not_poolable(fence(1));
    EXPECT_FALSE(wants(pool, fence(1)));
    // A fence the pool never saw created (not plain) is not wanted either.
    EXPECT_FALSE(wants(pool, fence(2)));
    // Created plainly again later (the driver reused the handle): poolable again.
    pool.created(fence(1));
    EXPECT_TRUE(wants(pool, fence(1)));
}

TEST(FencePool, DestroyForgetsTheLiveFence) {
    FencePool pool(8);
    pool.created(fence(1));
    EXPECT_TRUE(wants(pool, fence(1)));
    EXPECT_FALSE(wants(pool, fence(1)));  // a second destroy of the handle is not the pool's
}

TEST(FencePool, BoundCountsEveryList) {
    FencePool pool(4);
    EXPECT_EQ(create_destroy(pool, fence(1), FenceAtDestroy::Signaled), FenceKept::Signaled);
    EXPECT_EQ(create_destroy(pool, fence(2), FenceAtDestroy::Unsubmitted), FenceKept::Unsignaled);
    EXPECT_EQ(create_destroy(pool, fence(3), FenceAtDestroy::MaybePending), FenceKept::Quarantined);
    EXPECT_EQ(create_destroy(pool, fence(7), FenceAtDestroy::Signaled), FenceKept::Signaled);
    EXPECT_EQ(create_destroy(pool, fence(4), FenceAtDestroy::Signaled), FenceKept::No);  // to the driver
    EXPECT_EQ(pool.pooled(), 4u);
    // Room again once one is handed out.
    EXPECT_NE(pool.take(false).fence, VK_NULL_HANDLE);
    EXPECT_EQ(create_destroy(pool, fence(5), FenceAtDestroy::Signaled), FenceKept::Signaled);
}

TEST(FencePool, BoundReachedBetweenWantsAndKeep) {
    FencePool pool(1);
    pool.created(fence(1));
    pool.created(fence(2));
    ASSERT_TRUE(wants(pool, fence(1)));
    ASSERT_TRUE(wants(pool, fence(2)));  // both asked before either was kept
    EXPECT_EQ(pool.keep(fence(1), FenceAtDestroy::Signaled), FenceKept::Signaled);
    EXPECT_EQ(pool.keep(fence(2), FenceAtDestroy::Signaled), FenceKept::No);
}

TEST(FencePool, DrainReturnsEveryListOnce) {
    FencePool pool(8);
    create_destroy(pool, fence(1), FenceAtDestroy::Signaled);
    create_destroy(pool, fence(2), FenceAtDestroy::Unsubmitted);
    create_destroy(pool, fence(3), FenceAtDestroy::MaybePending);
    std::vector<VkFence> all = pool.drain();
    std::sort(all.begin(), all.end());
    EXPECT_EQ(all, (std::vector<VkFence>{fence(1), fence(2), fence(3)}));
    EXPECT_EQ(pool.pooled(), 0u);
    EXPECT_TRUE(pool.drain().empty());
}

// vkCreateFence and vkDestroyFence from many threads: a fence is never handed out while the
// application still holds it, and nothing pooled is lost or duplicated.
TEST(FencePool, ConcurrentCreateAndDestroyNeverShareAFence) {
    FencePool pool(64);
    constexpr int kThreads = 4, kRounds = 3000;
    std::mutex alive_mutex;
    std::set<VkFence> alive;
    std::atomic<int> shared{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t] {
            uintptr_t next = uintptr_t(t + 1) << 32;  // this thread's "driver" handles
            std::vector<VkFence> mine;
            for (int i = 0; i < kRounds; ++i) {
                VkFence f = pool.take(i % 3 == 0).fence;
                if (!f) f = fence(++next);
                pool.created(f);
                {
                    std::lock_guard lock(alive_mutex);
                    if (!alive.insert(f).second) ++shared;
                }
                mine.push_back(f);
                if (mine.size() < 4 && i + 1 < kRounds) continue;  // a few alive at once
                for (VkFence g : mine) {
                    {
                        std::lock_guard lock(alive_mutex);
                        alive.erase(g);
                    }
                    if (wants(pool, g)) pool.keep(g, i % 2 ? FenceAtDestroy::Signaled : FenceAtDestroy::Unsubmitted);
                }
                mine.clear();
            }
        });
    }
    for (std::thread& t : threads) t.join();
    EXPECT_EQ(shared.load(), 0);
    std::vector<VkFence> left = pool.drain();
    std::sort(left.begin(), left.end());
    EXPECT_TRUE(std::adjacent_find(left.begin(), left.end()) == left.end());
    EXPECT_GT(left.size(), 0u);
    EXPECT_LE(left.size(), 64u);
}
