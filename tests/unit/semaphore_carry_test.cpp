// Which submissions' semaphores a batch can carry (submit/semaphore_carry.h).
#include "submit/semaphore_carry.h"
#include "submit/batch_queue.h"
#include "submit/timeline_signal.h"

#include <gtest/gtest.h>

#include <map>

using namespace slipstream;
using namespace slipstream::submit;

namespace {
VkSemaphore sem(uint64_t n) { return reinterpret_cast<VkSemaphore>(uintptr_t(n)); }

// Semaphores 1-9: timelines; 10: binary; 11: a shared timeline; others: unknown.
std::optional<SemaphoreRecord> kind(VkSemaphore s) {
    const uint64_t n = uint64_t(reinterpret_cast<uintptr_t>(s));
    if (n >= 1 && n <= 9) return SemaphoreRecord{true, false};
    if (n == 10) return SemaphoreRecord{false, false};
    if (n == 11) return SemaphoreRecord{true, true};
    return std::nullopt;
}
}  // namespace

TEST(SemaphoreCarry, TimelineWaitsAndSignalsWithTheirValues) {
    const VkSemaphore waits[] = {sem(1), sem(2)}, signals[] = {sem(3)};
    const uint64_t wait_values[] = {5, 7}, signal_values[] = {9};
    const VkPipelineStageFlags stages[] = {VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT};
    VkTimelineSemaphoreSubmitInfo values{VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO};
    values.waitSemaphoreValueCount = 2;
    values.pWaitSemaphoreValues = wait_values;
    values.signalSemaphoreValueCount = 1;
    values.pSignalSemaphoreValues = signal_values;
    VkSubmitInfo s{VK_STRUCTURE_TYPE_SUBMIT_INFO, &values};
    s.waitSemaphoreCount = 2;
    s.pWaitSemaphores = waits;
    s.pWaitDstStageMask = stages;
    s.signalSemaphoreCount = 1;
    s.pSignalSemaphores = signals;
    std::vector<SemaphoreValue> w, g;
    ASSERT_TRUE(semaphore_uses(s, kind, w, g));
    ASSERT_EQ(w.size(), 2u);
    EXPECT_EQ(w[1].semaphore, sem(2));
    EXPECT_EQ(w[1].value, 7u);
    ASSERT_EQ(g.size(), 1u);
    EXPECT_EQ(g[0].value, 9u);

    EXPECT_FALSE(w[1].binary);
    EXPECT_EQ(w[1].stages, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT);

    // A shared or unknown semaphore: not carried.
    for (uint64_t other : {11, 12}) {
        const VkSemaphore mixed[] = {sem(1), sem(other)};
        s.pWaitSemaphores = mixed;
        w.clear();
        g.clear();
        EXPECT_FALSE(semaphore_uses(s, kind, w, g)) << other;
    }
    // A binary semaphore beside a timeline: carried, with value 0 whatever the chain says.
    const VkSemaphore mixed[] = {sem(1), sem(10)};
    s.pWaitSemaphores = mixed;
    w.clear();
    g.clear();
    ASSERT_TRUE(semaphore_uses(s, kind, w, g));
    EXPECT_TRUE(w[1].binary);
    EXPECT_EQ(w[1].value, 0u);
    s.pWaitSemaphores = waits;
    // Timelines need their values: no chain, or values that do not match the semaphores.
    s.pNext = nullptr;
    EXPECT_FALSE(semaphore_uses(s, kind, w, g));
    s.pNext = &values;
    values.waitSemaphoreValueCount = 1;
    EXPECT_FALSE(semaphore_uses(s, kind, w, g));
}

// Binary semaphores need no values; a VkSubmitInfo's wait stages are kept.
TEST(SemaphoreCarry, BinaryOnlySubmissionsNeedNoValues) {
    const VkSemaphore waits[] = {sem(10)}, signals[] = {sem(10)};
    const VkPipelineStageFlags stages[] = {VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT};
    VkSubmitInfo s{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    s.waitSemaphoreCount = 1;
    s.pWaitSemaphores = waits;
    s.pWaitDstStageMask = stages;
    s.signalSemaphoreCount = 1;
    s.pSignalSemaphores = signals;
    std::vector<SemaphoreValue> w, g;
    ASSERT_TRUE(semaphore_uses(s, kind, w, g));
    ASSERT_EQ(w.size(), 1u);
    EXPECT_TRUE(w[0].binary);
    EXPECT_EQ(w[0].stages, VkPipelineStageFlags2(stages[0]));
    ASSERT_EQ(g.size(), 1u);
    EXPECT_TRUE(g[0].binary);
    // A binary signal meets a binary wait of the same semaphore only.
    EXPECT_TRUE(meets(g[0], w[0]));
    EXPECT_FALSE(meets({sem(9), 0, true}, w[0]));
    // A timeline signal meets a wait of a value as high.
    EXPECT_TRUE(meets({sem(1), 5}, {sem(1), 5}));
    EXPECT_FALSE(meets({sem(1), 4}, {sem(1), 5}));
}

// Sync2 stages as a VkSubmitInfo's: wide flags widen to ALL_COMMANDS, NONE is TOP_OF_PIPE.
TEST(SemaphoreCarry, Sync1StagesOfSync2Masks) {
    EXPECT_EQ(sync1_stages(VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT), VkPipelineStageFlags(VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT));
    EXPECT_EQ(sync1_stages(VK_PIPELINE_STAGE_2_COPY_BIT), VkPipelineStageFlags(VK_PIPELINE_STAGE_ALL_COMMANDS_BIT));
    EXPECT_EQ(sync1_stages(VK_PIPELINE_STAGE_2_NONE), VkPipelineStageFlags(VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT));
}

TEST(SemaphoreCarry, Submit2NamesDeviceZeroOnly) {
    VkSemaphoreSubmitInfo wait{VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO};
    wait.semaphore = sem(1);
    wait.value = 3;
    VkSemaphoreSubmitInfo signal = wait;
    signal.semaphore = sem(2);
    signal.value = 4;
    VkSubmitInfo2 s{VK_STRUCTURE_TYPE_SUBMIT_INFO_2};
    s.waitSemaphoreInfoCount = 1;
    s.pWaitSemaphoreInfos = &wait;
    s.signalSemaphoreInfoCount = 1;
    s.pSignalSemaphoreInfos = &signal;
    std::vector<SemaphoreValue> w, g;
    ASSERT_TRUE(semaphore_uses(s, kind, w, g));
    EXPECT_EQ(w[0].value, 3u);
    EXPECT_EQ(g[0].semaphore, sem(2));
    signal.deviceIndex = 1;
    EXPECT_FALSE(semaphore_uses(s, kind, w, g));
    signal.deviceIndex = 0;
    signal.semaphore = sem(11);
    EXPECT_FALSE(semaphore_uses(s, kind, w, g));
    // A binary semaphore: its value is ignored; a wait keeps its stage mask.
    signal.semaphore = sem(10);
    wait.stageMask = VK_PIPELINE_STAGE_2_COPY_BIT;
    w.clear();
    g.clear();
    ASSERT_TRUE(semaphore_uses(s, kind, w, g));
    EXPECT_EQ(w[0].stages, VK_PIPELINE_STAGE_2_COPY_BIT);
    EXPECT_TRUE(g[0].binary);
    EXPECT_EQ(g[0].value, 0u);
}

// A batch signals every value its submissions asked for, in order: a semaphore's second value
// goes in the next round (an empty batch after the first).
TEST(SemaphoreCarry, EveryValueInItsOwnRound) {
    const auto rounds = signal_rounds({{sem(1), 3}, {sem(2), 1}, {sem(1), 5}, {sem(1), 6}, {sem(2), 2}});
    ASSERT_EQ(rounds.size(), 3u);
    ASSERT_EQ(rounds[0].size(), 2u);
    EXPECT_EQ(rounds[0][0].value, 3u);
    EXPECT_EQ(rounds[0][1].semaphore, sem(2));
    ASSERT_EQ(rounds[1].size(), 2u);
    EXPECT_EQ(rounds[1][0].value, 5u);
    EXPECT_EQ(rounds[1][1].value, 2u);
    ASSERT_EQ(rounds[2].size(), 1u);
    EXPECT_EQ(rounds[2][0].value, 6u);
    EXPECT_TRUE(signal_rounds({}).empty());
}

// Waits the driver already has: a signal that meets one says so once, then it is forgotten.
TEST(SemaphoreCarry, AwaitedWaitsMetBySignals) {
    AwaitedSemaphores a;
    EXPECT_FALSE(a.met_by({{sem(1), 5}}));
    a.waited({{sem(1), 4}, {sem(2), 9}});
    a.waited({{sem(1), 3}});  // the lowest wait of a semaphore is met first
    EXPECT_FALSE(a.met_by({{sem(2), 8}}));
    EXPECT_TRUE(a.met_by({{sem(1), 3}, {sem(3), 1}}));
    EXPECT_FALSE(a.met_by({{sem(1), 10}}));
    a.forget(sem(2));
    EXPECT_FALSE(a.met_by({{sem(2), 100}}));
    // A binary wait's signal came before it: no later signal meets it, so it is not kept.
    a.waited({{sem(10), 0, true}});
    EXPECT_FALSE(a.met_by({{sem(10), 0, true}}));
}

// The batch's submission: the work with each semaphore's first value, an empty batch per later
// value, and the queue's timeline signal in the last batch (it says everything before is done).
TEST(SemaphoreCarry, BatchSubmissionSignalsEveryValueThenTheTimeline) {
    VkCommandBuffer cb = reinterpret_cast<VkCommandBuffer>(uintptr_t(0x100));
    const TimelineSignal queue_timeline(sem(9), 77);
    const BatchSubmission one(1, &cb, &queue_timeline, {});
    ASSERT_EQ(one.count(), 1u);
    EXPECT_EQ(one.infos()[0].commandBufferCount, 1u);
    ASSERT_EQ(one.infos()[0].signalSemaphoreCount, 1u);
    EXPECT_EQ(one.infos()[0].pSignalSemaphores[0], sem(9));

    const BatchSubmission chain(1, &cb, &queue_timeline, {{sem(1), 1}, {sem(1), 2}, {sem(1), 3}});
    ASSERT_EQ(chain.count(), 3u);
    EXPECT_EQ(chain.infos()[0].commandBufferCount, 1u);
    EXPECT_EQ(chain.infos()[1].commandBufferCount, 0u);
    for (uint32_t r = 0; r < 3; ++r) {
        const auto* values = static_cast<const VkTimelineSemaphoreSubmitInfo*>(chain.infos()[r].pNext);
        ASSERT_NE(values, nullptr);
        EXPECT_EQ(values->pSignalSemaphoreValues[0], r + 1);
    }
    ASSERT_EQ(chain.infos()[2].signalSemaphoreCount, 2u);
    EXPECT_EQ(chain.infos()[2].pSignalSemaphores[1], sem(9));
    const BatchSubmission none(0, nullptr, nullptr, {});
    EXPECT_EQ(none.count(), 1u);
    EXPECT_EQ(none.infos()[0].signalSemaphoreCount, 0u);
}

// Carried waits go in the first batch, with their values and stages; signals after the work.
TEST(SemaphoreCarry, BatchSubmissionWaitsFirst) {
    VkCommandBuffer cb = reinterpret_cast<VkCommandBuffer>(uintptr_t(0x100));
    const TimelineSignal queue_timeline(sem(9), 77);
    const BatchSubmission b(1, &cb, &queue_timeline, {{sem(1), 1}, {sem(1), 2}},
                            {{sem(2), 6, false, VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT},
                             {sem(10), 0, true, VK_PIPELINE_STAGE_2_COPY_BIT}});
    ASSERT_EQ(b.count(), 2u);
    const VkSubmitInfo& first = b.infos()[0];
    ASSERT_EQ(first.waitSemaphoreCount, 2u);
    EXPECT_EQ(first.pWaitSemaphores[0], sem(2));
    EXPECT_EQ(first.pWaitDstStageMask[0], VkPipelineStageFlags(VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT));
    EXPECT_EQ(first.pWaitDstStageMask[1], VkPipelineStageFlags(VK_PIPELINE_STAGE_ALL_COMMANDS_BIT));
    const auto* values = static_cast<const VkTimelineSemaphoreSubmitInfo*>(first.pNext);
    ASSERT_NE(values, nullptr);
    ASSERT_EQ(values->waitSemaphoreValueCount, 2u);
    EXPECT_EQ(values->pWaitSemaphoreValues[0], 6u);
    EXPECT_EQ(values->pSignalSemaphoreValues[0], 1u);
    EXPECT_EQ(b.infos()[1].waitSemaphoreCount, 0u);
    // Waits alone (a failed batch's semaphores): one empty batch that waits.
    const BatchSubmission alone(0, nullptr, nullptr, {}, {{sem(10), 0, true}});
    ASSERT_EQ(alone.count(), 1u);
    EXPECT_EQ(alone.infos()[0].waitSemaphoreCount, 1u);
    EXPECT_EQ(alone.infos()[0].commandBufferCount, 0u);
}

// Waits already reached come after the carried ones, in the same first batch: the driver (and
// a validation layer between) sees every wait the application made.
TEST(SemaphoreCarry, BatchSubmissionNamesReachedWaitsAfterCarriedOnes) {
    VkCommandBuffer cb = reinterpret_cast<VkCommandBuffer>(uintptr_t(0x100));
    const TimelineSignal queue_timeline(sem(9), 78);
    const BatchSubmission b(1, &cb, &queue_timeline, {}, {{sem(2), 6}},
                            {{sem(3), 4, false, VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT}});
    ASSERT_EQ(b.count(), 1u);
    const VkSubmitInfo& first = b.infos()[0];
    ASSERT_EQ(first.waitSemaphoreCount, 2u);
    EXPECT_EQ(first.pWaitSemaphores[0], sem(2));
    EXPECT_EQ(first.pWaitSemaphores[1], sem(3));
    EXPECT_EQ(first.pWaitDstStageMask[1], VkPipelineStageFlags(VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT));
    const auto* values = static_cast<const VkTimelineSemaphoreSubmitInfo*>(first.pNext);
    ASSERT_NE(values, nullptr);
    ASSERT_EQ(values->waitSemaphoreValueCount, 2u);
    EXPECT_EQ(values->pWaitSemaphoreValues[1], 4u);
    ASSERT_EQ(first.signalSemaphoreCount, 1u);
    EXPECT_EQ(values->pSignalSemaphoreValues[0], 78u);
    // Reached waits alone: named all the same.
    const BatchSubmission only(1, &cb, nullptr, {}, {}, {{sem(3), 4}});
    EXPECT_EQ(only.infos()[0].waitSemaphoreCount, 1u);
}

// A batch that names only waits already met still holds semaphore operations: another queue's
// next signal of that semaphore goes after it (flush_holders_before), in the order the
// application made them.
TEST(SemaphoreCarry, ReachedWaitsAloneHoldTheBatch) {
    HeldBatch b;
    EXPECT_FALSE(b.holds_semaphores());
    b.reached_waits.push_back({sem(3), 4});
    EXPECT_TRUE(b.holds_semaphores());
}
