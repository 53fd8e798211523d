#include "idle/spin_wait.h"

#include <gtest/gtest.h>

using namespace slipstream;

namespace {
constexpr uint64_t kBudget = 100000;  // 100 us
}

TEST(AdaptiveSpinBudget, TimeoutZeroOrNoBudgetNeverSpins) {
    AdaptiveSpinBudget site;
    EXPECT_EQ(site.budget_ns(kBudget, 0, true), 0u);
    EXPECT_EQ(site.budget_ns(kBudget, 0, false), 0u);
    EXPECT_EQ(site.budget_ns(0, UINT64_MAX, true), 0u);
}

TEST(AdaptiveSpinBudget, NeverSpinsPastTheTimeout) {
    AdaptiveSpinBudget site;
    EXPECT_EQ(site.budget_ns(kBudget, 30000, true), 30000u);
    EXPECT_EQ(site.budget_ns(kBudget, UINT64_MAX, true), kBudget);
}

TEST(AdaptiveSpinBudget, StopsSpinningWhereWaitsAreLongAndProbes) {
    AdaptiveSpinBudget site;
    for (int i = 0; i < 3; ++i) site.record(50'000'000);  // 50 ms waits
    EXPECT_GE(site.typical_wait_ns(), AdaptiveSpinBudget::kSkipFactor * kBudget);
    int spun = 0;
    for (uint32_t i = 0; i < 4 * AdaptiveSpinBudget::kProbeInterval; ++i)
        if (site.budget_ns(kBudget, UINT64_MAX, true)) ++spun;
    EXPECT_EQ(spun, 4) << "one probe every kProbeInterval waits";
    // Not adaptive: always spins.
    EXPECT_EQ(site.budget_ns(kBudget, UINT64_MAX, false), kBudget);
}

TEST(AdaptiveSpinBudget, StartsSpinningAgainWhenWaitsGetShort) {
    AdaptiveSpinBudget site;
    for (int i = 0; i < 3; ++i) site.record(50'000'000);
    for (int i = 0; i < 40; ++i) site.record(20'000);  // 20 us waits
    EXPECT_LT(site.typical_wait_ns(), AdaptiveSpinBudget::kSkipFactor * kBudget);
    EXPECT_EQ(site.budget_ns(kBudget, UINT64_MAX, true), kBudget);
}

TEST(SpinUntil, ReturnsAtOnceOnSuccessOrErrorAndStopsAtTheBudget) {
    uint64_t spun = 0;
    int calls = 0;
    uint32_t polls = 0;
    EXPECT_EQ(spin_until([&] { return ++calls == 3 ? VK_SUCCESS : VK_NOT_READY; }, 1'000'000'000, &spun, &polls),
              VK_SUCCESS);
    EXPECT_EQ(polls, 3u);
    EXPECT_EQ(calls, 3);
    EXPECT_EQ(spin_until([] { return VK_ERROR_DEVICE_LOST; }, 1'000'000'000, &spun), VK_ERROR_DEVICE_LOST);
    EXPECT_EQ(spin_until([] { return VK_NOT_READY; }, 200'000, &spun), VK_NOT_READY);
    EXPECT_GE(spun, 200'000u);
}

TEST(RemainingTimeout, InfiniteStaysInfiniteAndFiniteNeverUnderflows) {
    EXPECT_EQ(remaining_timeout(UINT64_MAX, 123), UINT64_MAX);
    EXPECT_EQ(remaining_timeout(1000, 400), 600u);
    EXPECT_EQ(remaining_timeout(1000, 5000), 0u);
}
