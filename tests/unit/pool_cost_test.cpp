// Whether pooling pays (objects/pool_cost.h): the decision by the numbers, what the averages
// take from samples, the sampling, the probes while pooling pays; and the pools' side of it
// (fence_pool.h, timeline_pool.h): what they refuse and forget once pooling does not pay.
#include "objects/fence_pool.h"
#include "objects/pool_cost.h"
#include "objects/timeline_pool.h"

#include <gtest/gtest.h>

using namespace slipstream::objects;

namespace {
VkFence fence(uintptr_t n) { return reinterpret_cast<VkFence>(n); }
VkSemaphore semaphore(uintptr_t n) { return reinterpret_cast<VkSemaphore>(n); }

// A cost that has learnt these averages (warmed up: kWarmUp equal samples each; 0: none).
void learn(PoolCost& cost, uint64_t driver_create, uint64_t driver_destroy, uint64_t pool_create,
           uint64_t pool_destroy) {
    const std::pair<CostSite, uint64_t> samples[] = {{CostSite::DriverCreate, driver_create},
                                                     {CostSite::DriverDestroy, driver_destroy},
                                                     {CostSite::PoolCreate, pool_create},
                                                     {CostSite::PoolDestroy, pool_destroy}};
    for (auto [site, ns] : samples)
        for (uint64_t i = 0; ns && i < PoolCost::kWarmUp; ++i) cost.record(site, ns);
}
}  // namespace

TEST(PoolCost, PoolsOnlyWhatTheDriverChargesMoreFor) {
    EXPECT_TRUE(PoolCost::worth_pooling(0, 0, 0, 0));                 // nothing measured: pool, a miss measures
    EXPECT_TRUE(PoolCost::worth_pooling(40, 30, 0, 80));              // the pool's create not measured yet
    EXPECT_TRUE(PoolCost::worth_pooling(40, 30, 100, 0));             // ... nor its destroy
    EXPECT_FALSE(PoolCost::worth_pooling(40, 30, 100, 80));           // lavapipe: ~0.07 us a pair, the pool's 0.18
    EXPECT_TRUE(PoolCost::worth_pooling(270'000, 270'000, 500, 300)); // an H200: ~0.5 ms a pair
    EXPECT_TRUE(PoolCost::worth_pooling(40, 0, 100, 80));             // its destroy not timed yet (a probe times it)
    EXPECT_TRUE(PoolCost::worth_pooling(100, 200, 100, 80));          // a dear destroy
    EXPECT_FALSE(PoolCost::worth_pooling(300, 300, 100, 80, 500));    // translating a reused one costs more
    EXPECT_FALSE(PoolCost::worth_pooling(100, 80, 100, 80));          // a tie: the driver, the simpler path
}

TEST(PoolCost, LearnsPerSiteAndDecides) {
    PoolCost cost;
    EXPECT_TRUE(cost.pays());
    learn(cost, 40, 30, 100, 80);
    EXPECT_FALSE(cost.pays());
    EXPECT_EQ(cost.average(CostSite::DriverCreate), 40u);
    EXPECT_EQ(pooling(&cost), Pooling::NotWorth);
    EXPECT_EQ(pooling(nullptr), Pooling::None);
    // `always` pools whatever it learnt, and times nothing.
    PoolCost always(true);
    learn(always, 40, 30, 100, 80);
    EXPECT_TRUE(always.pays());
    EXPECT_FALSE(always.timed(CostSite::DriverCreate));
    EXPECT_FALSE(always.probe(CostSite::DriverCreate));
}

// The first samples: the fastest is the average (first calls into cold code are slow).
TEST(PoolCost, WarmUpTakesTheFastest) {
    PoolCost cost;
    cost.record(CostSite::DriverCreate, 3'000);
    EXPECT_EQ(cost.average(CostSite::DriverCreate), 3'000u);
    cost.record(CostSite::DriverCreate, 40);
    EXPECT_EQ(cost.average(CostSite::DriverCreate), 40u);
    for (uint64_t i = 2; i < PoolCost::kWarmUp; ++i) cost.record(CostSite::DriverCreate, 700);
    EXPECT_EQ(cost.average(CostSite::DriverCreate), 40u);
    // Then an average: each sample moves it an eighth of the way towards the smaller of it and
    // the one before.
    cost.record(CostSite::DriverCreate, 80);
    EXPECT_EQ(cost.average(CostSite::DriverCreate), 45u);  // (7 * 40 + min(700, 80)) / 8
    cost.record(CostSite::DriverCreate, 1'000);
    EXPECT_EQ(cost.average(CostSite::DriverCreate), 49u);  // (7 * 45 + min(80, 1000)) / 8
}

// No decision against pooling before the pool's own costs are warmed up: once pooling stops,
// nothing times the pool again, so its first, cold calls must not decide.
TEST(PoolCost, PoolJudgedOnlyWarmedUp) {
    PoolCost cost;
    learn(cost, 80, 50, 0, 0);
    cost.record(CostSite::PoolCreate, 5'000);
    cost.record(CostSite::PoolDestroy, 1'600);
    EXPECT_TRUE(cost.pays());
    EXPECT_EQ(cost.warm(CostSite::PoolCreate), 0u);
    for (uint64_t i = 1; i < PoolCost::kWarmUp; ++i) {
        cost.record(CostSite::PoolCreate, 120);
        cost.record(CostSite::PoolDestroy, 170);
    }
    EXPECT_EQ(cost.warm(CostSite::PoolCreate), 120u);
    EXPECT_FALSE(cost.pays());  // 0.29 us against the driver's 0.13
}

// One disturbed timing moves nothing; a driver that turned dear shows in two samples in a row.
TEST(PoolCost, DriverTurningDearIsPooledAgain) {
    PoolCost cost;
    learn(cost, 40, 30, 100, 80);
    ASSERT_FALSE(cost.pays());
    cost.record(CostSite::DriverCreate, 500'000);  // a preemption
    cost.record(CostSite::DriverCreate, 40);
    EXPECT_FALSE(cost.pays());
    EXPECT_LE(cost.average(CostSite::DriverCreate), 40u);
    cost.record(CostSite::DriverCreate, 500'000);
    cost.record(CostSite::DriverCreate, 500'000);
    EXPECT_TRUE(cost.pays());
}

TEST(PoolCost, TimesTheWarmUpThenOneCallInSampleEvery) {
    PoolCost cost;
    for (uint64_t i = 0; i < PoolCost::kWarmUp; ++i) {
        EXPECT_TRUE(cost.timed(CostSite::DriverCreate));
        cost.record(CostSite::DriverCreate, 40);
    }
    int timed = 0;
    for (uint64_t i = 0; i < 4 * PoolCost::kSampleEvery; ++i) timed += cost.timed(CostSite::DriverCreate);
    EXPECT_EQ(timed, 4);
    // Each site counts its own calls: alternating creates and destroys time both.
    PoolCost other;
    learn(other, 40, 30, 100, 80);
    int creates = 0, destroys = 0;
    for (uint64_t i = 0; i < 2 * PoolCost::kSampleEvery; ++i) {
        creates += other.timed(CostSite::DriverCreate);
        destroys += other.timed(CostSite::DriverDestroy);
    }
    EXPECT_EQ(creates, 2);
    EXPECT_EQ(destroys, 2);
}

// While pooling pays, one create (or destroy) in probe_interval goes to the driver: at once
// while the driver was never timed, often while it warms up, rarely later, rarer the dearer.
TEST(PoolCost, ProbesTheDriverWhilePooling) {
    EXPECT_EQ(PoolCost::probe_interval(0, 180, true), 1u);
    EXPECT_EQ(PoolCost::probe_interval(40, 0, true), 0u);  // the pool is timed first
    EXPECT_EQ(PoolCost::probe_interval(200, 180, false), PoolCost::kSampleEvery);
    EXPECT_EQ(PoolCost::probe_interval(270'000, 900, false), 300 * PoolCost::kSampleEvery);
    EXPECT_EQ(PoolCost::probe_interval(270'000, 900, true), 300u);
    PoolCost cost;
    EXPECT_TRUE(cost.probe(CostSite::DriverDestroy));  // never timed
    learn(cost, 1'000, 1'000, 60, 40);                 // interval: 10 * kSampleEvery
    ASSERT_TRUE(cost.pays());
    int probes = 0;
    for (uint64_t i = 0; i < 30 * PoolCost::kSampleEvery; ++i) probes += cost.probe(CostSite::DriverCreate);
    EXPECT_EQ(probes, 3);
    // Creates and destroys are probed on their own counts.
    probes = 0;
    for (uint64_t i = 0; i < 10 * PoolCost::kSampleEvery; ++i) probes += cost.probe(CostSite::DriverDestroy);
    EXPECT_EQ(probes, 1);
    EXPECT_EQ(pooling(&cost), Pooling::Pool);
}

// The driver's first create was a cold call: while it warms up, probes come one in driver /
// pool creates, and with its destroys timed too find it cheaper than the pool after all.
TEST(PoolCost, ProbesFindAColdDriverCheap) {
    PoolCost cost;
    learn(cost, 0, 0, 100, 80);
    cost.record(CostSite::DriverCreate, 5'400);
    ASSERT_TRUE(cost.pays());
    int probes = 0;
    for (int i = 0; i < 30; ++i) probes += cost.probe(CostSite::DriverCreate);
    EXPECT_EQ(probes, 1);
    for (uint64_t i = 1; i < PoolCost::kWarmUp; ++i) cost.record(CostSite::DriverCreate, 40);
    EXPECT_TRUE(cost.pays());  // its destroy not timed yet
    for (uint64_t i = 0; i < PoolCost::kWarmUp; ++i) cost.record(CostSite::DriverDestroy, 30);
    EXPECT_FALSE(cost.pays());
    EXPECT_EQ(pooling(&cost), Pooling::NotWorth);
}

// Translating the values of reused timeline semaphores is charged per hand-out.
TEST(PoolCost, UseOfPooledObjectsCountsPerHandout) {
    PoolCost cost;
    learn(cost, 300, 300, 100, 80);
    ASSERT_TRUE(cost.pays());
    cost.handed_out();
    cost.handed_out();
    // 40 translating calls of 30 ns (the first kWarmUp timed) for 2 hand-outs: 600 ns each.
    for (int i = 0; i < 40; ++i)
        if (cost.timed(CostSite::PoolUse)) cost.record(CostSite::PoolUse, 30);
    EXPECT_EQ(cost.use_per_handout(), 600u);
    cost.record(CostSite::PoolUse, 30);  // a decision follows samples
    EXPECT_FALSE(cost.pays());
}

TEST(PoolCost, WatchesOneHandleForItsDestroy) {
    PoolCost cost;
    EXPECT_FALSE(cost.watched(7));
    cost.watch(7);
    EXPECT_FALSE(cost.watched(8));
    EXPECT_TRUE(cost.watched(7));
    EXPECT_FALSE(cost.watched(7));  // once
    EXPECT_FALSE(cost.watched(0));
}

// A followed fence destroyed once pooling stopped paying goes to the driver, counted.
TEST(PoolCost, FencePoolRefusesWhatDoesNotPay) {
    FencePool pool(8);
    EXPECT_FALSE(pool.following());
    pool.created(fence(1));
    pool.created(fence(2));
    pool.created(fence(3));
    EXPECT_TRUE(pool.following());
    uint64_t created_at = 0;
    bool not_worth = false;
    EXPECT_TRUE(pool.wants(fence(1), &created_at, &not_worth));
    EXPECT_FALSE(not_worth);
    learn(pool.cost(), 40, 30, 100, 80);
    EXPECT_FALSE(pool.wants(fence(2), &created_at, &not_worth));
    EXPECT_TRUE(not_worth);
    // Creates that go to the driver forget the rest: destroys take no lock any more.
    pool.forget_live();
    EXPECT_FALSE(pool.following());
    not_worth = false;
    EXPECT_FALSE(pool.wants(fence(3), &created_at, &not_worth));
    EXPECT_FALSE(not_worth);
    // `always` keeps whatever it costs.
    FencePool always(8, true);
    learn(always.cost(), 40, 30, 100, 80);
    always.created(fence(4));
    EXPECT_TRUE(always.wants(fence(4), &created_at));
}

TEST(PoolCost, TimelinePoolRefusesWhatDoesNotPayAndKeepsOffsets) {
    TimelinePool pool(8);
    pool.created(semaphore(1), 5);  // handed out with an offset
    pool.created(semaphore(2), 0);
    learn(pool.cost(), 40, 30, 100, 80);
    bool not_worth = false;
    EXPECT_FALSE(pool.wants(semaphore(2), &not_worth));
    EXPECT_TRUE(not_worth);
    // Forgetting the followed ones keeps the offset of one still alive: its values stay
    // translated until its destroy, which forgets the offset too.
    pool.forget_live();
    EXPECT_FALSE(pool.following());
    EXPECT_EQ(pool.offsets().find(semaphore(1)), 5u);
    EXPECT_FALSE(pool.wants(semaphore(1)));
    EXPECT_EQ(pool.offsets().find(semaphore(1)), 0u);
    EXPECT_FALSE(pool.offsets().any());
}
