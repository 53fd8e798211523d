// The capture of every capturable command, round trip: fill the arguments with distinct
// values (arrays, nested structures, every structure that may extend each pNext chain),
// capture them, overwrite and free the originals, replay into a recording dispatch table, and
// compare what it received, deep, with a second fill made alike. The per-command code comes
// from tools/gen/gen_capture.py (capture_test.inl), like the capture itself.
#include "capture/capture_rules.h"
#include "capture_commands.h"
#include "capture_test_support.h"

#include <gtest/gtest.h>

#include <cstring>
#include <set>

#include "capture_test.inl"

using namespace slipstream;
using namespace slipstream::capture;
using namespace capture_test;

namespace {

VkCommandBuffer fake_cb() { return reinterpret_cast<VkCommandBuffer>(uintptr_t(0xcb00)); }

VkLayerDispatchTable recording_table() {
    VkLayerDispatchTable t{};
    install_recorders(t);
    return t;
}

constexpr uint32_t kSeeds = 12;

// One command, one seed, one mode: the whole round trip.
void round_trip(const RoundTripCase& c, uint32_t seed, bool full) {
    SCOPED_TRACE(std::string(c.name) + " seed " + std::to_string(seed) + (full ? " full" : " minimal"));
    CommandCapture capture;
    capture.begin(VK_COMMAND_BUFFER_LEVEL_PRIMARY, nullptr);
    {
        Filler original(seed, full);
        auto args = c.make();
        c.fill(original, *args);
        c.capture(capture, c.id, *args);
        // The originals die here: scribbled over, then freed.
        original.scribble();
        std::memset(static_cast<void*>(args.get()), 0xa5, sizeof(CaptureRecord));
    }
    ASSERT_TRUE(capture.capturable()) << capture.stopped_at() << ": " << stop_reason_name(capture.stop_reason());
    ASSERT_EQ(capture.size(), 1u);

    recorded_calls().clear();
    capture.replay(recording_table(), fake_cb());
    ASSERT_EQ(recorded_calls().size(), 1u);
    const RecordedCall& call = recorded_calls()[0];
    EXPECT_EQ(call.cb, fake_cb());
    EXPECT_EQ(call.args->id, c.id) << "replay called another dispatch-table member";

    Filler again(seed, full);
    auto expected = c.make();
    c.fill(again, *expected);
    Compare cmp;
    EXPECT_TRUE(c.equal(*expected, *call.args, cmp)) << cmp.message;
    recorded_calls().clear();
}

}  // namespace

TEST(CaptureRoundTrip, EveryCapturableCommandHasACase) {
    std::set<std::string> cases;
    for (const RoundTripCase& c : kRoundTripCases) cases.insert(c.name);
    size_t capturable = 0;
    for (const CommandInfo& info : kCommandInfo) {
        if (!info.capturable) continue;
        ++capturable;
        EXPECT_TRUE(cases.count(info.name)) << info.name;
    }
    EXPECT_EQ(capturable, cases.size());
    EXPECT_GE(capturable, 40u);
}

TEST(CaptureRoundTrip, EveryCommandFullArguments) {
    for (const RoundTripCase& c : kRoundTripCases)
        for (uint32_t seed = 1; seed <= kSeeds; ++seed) round_trip(c, seed, true);
}

TEST(CaptureRoundTrip, EveryCommandMinimalArguments) {
    for (const RoundTripCase& c : kRoundTripCases) round_trip(c, 1, false);
}

// All commands into one capture, in order: the records keep their order and their memory
// (the arena grows over several blocks on the way).
TEST(CaptureRoundTrip, AllCommandsInOneCaptureReplayInOrder) {
    CommandCapture capture;
    capture.begin(VK_COMMAND_BUFFER_LEVEL_PRIMARY, nullptr);
    std::vector<const RoundTripCase*> order;
    {
        Filler original(7, true);
        for (int round = 0; round < 4; ++round) {
            for (const RoundTripCase& c : kRoundTripCases) {
                auto args = c.make();
                c.fill(original, *args);
                c.capture(capture, c.id, *args);
                order.push_back(&c);
            }
        }
    }
    ASSERT_TRUE(capture.capturable()) << capture.stopped_at();
    ASSERT_EQ(capture.size(), order.size());
    EXPECT_GT(capture.arena().blocks(), 1u);

    recorded_calls().clear();
    capture.replay(recording_table(), fake_cb());
    ASSERT_EQ(recorded_calls().size(), order.size());
    Filler again(7, true);
    for (size_t i = 0; i < order.size(); ++i) {
        auto expected = order[i]->make();
        order[i]->fill(again, *expected);
        Compare cmp;
        EXPECT_EQ(recorded_calls()[i].args->id, order[i]->id) << i;
        EXPECT_TRUE(order[i]->equal(*expected, *recorded_calls()[i].args, cmp)) << order[i]->name << ": " << cmp.message;
    }
    recorded_calls().clear();
}

// Aliases (vkCmdCopyBuffer2KHR, vkCmdDispatchBaseKHR) share a record with their core command
// but must replay through their own dispatch-table member.
TEST(CaptureRoundTrip, AliasesReplayThroughTheirOwnMember) {
    std::set<CommandId> ids;
    for (const RoundTripCase& c : kRoundTripCases) ids.insert(c.id);
    EXPECT_TRUE(ids.count(CommandId::CmdCopyBuffer2KHR));
    EXPECT_TRUE(ids.count(CommandId::CmdDispatchBaseKHR));
    EXPECT_TRUE(ids.count(CommandId::CmdPipelineBarrier2KHR));
}

// vkBeginCommandBuffer's info, deep: usage flags, the device-group pNext, and for a secondary
// its inheritance info (with every structure that may extend it that Slipstream copies).
TEST(CaptureBegin, RecordsUsageAndInheritanceOfSecondaries) {
    for (uint32_t seed = 1; seed <= 4; ++seed) {
        CommandCapture capture;
        {
            Filler f(seed, true);
            VkCommandBufferBeginInfo info{};
            fill(f, info);
            auto* inheritance = f.array<VkCommandBufferInheritanceInfo>(1);
            fill(f, *inheritance);
            info.pInheritanceInfo = inheritance;
            capture.begin(VK_COMMAND_BUFFER_LEVEL_SECONDARY, &info);
            f.scribble();
        }
        ASSERT_TRUE(capture.capturable()) << capture.stopped_at() << ": " << stop_reason_name(capture.stop_reason());
        Filler f(seed, true);
        VkCommandBufferBeginInfo info{};
        fill(f, info);
        auto* inheritance = f.array<VkCommandBufferInheritanceInfo>(1);
        fill(f, *inheritance);
        EXPECT_EQ(capture.usage(), info.flags);
        ASSERT_NE(capture.begin_info(), nullptr);
        ASSERT_NE(capture.inheritance(), nullptr);
        EXPECT_EQ(capture.begin_info()->pInheritanceInfo, capture.inheritance());
        Compare cmp;
        VkCommandBufferBeginInfo copied = *capture.begin_info();
        copied.pInheritanceInfo = nullptr;  // compared on its own below
        EXPECT_TRUE(equal(info, copied, "beginInfo", cmp)) << cmp.message;
        EXPECT_TRUE(equal(*inheritance, *capture.inheritance(), "inheritance", cmp)) << cmp.message;
    }
}

TEST(CaptureBegin, APrimaryNeverReadsItsInheritancePointer) {
    VkCommandBufferBeginInfo info{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    info.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    // Ignored for primaries, so it may point anywhere.
    info.pInheritanceInfo = reinterpret_cast<const VkCommandBufferInheritanceInfo*>(uintptr_t(0xdead0000));
    CommandCapture capture;
    capture.begin(VK_COMMAND_BUFFER_LEVEL_PRIMARY, &info);
    ASSERT_TRUE(capture.capturable());
    EXPECT_EQ(capture.usage(), VkCommandBufferUsageFlags(VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT));
    EXPECT_EQ(capture.inheritance(), nullptr);
    EXPECT_EQ(capture.begin_info()->pInheritanceInfo, nullptr);
}
