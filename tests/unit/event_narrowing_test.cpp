// Barrier narrowing of event commands (capture/barrier_narrowing.h,
// src/capture/capture/narrowing.md case 7): the source rule over every stage bit, and real captures
// replayed as one batch through a recording dispatch table, both
// synchronization versions: which sets and waits are narrowed, and that a set
// and the waits that pair with it are always transformed alike.
#include "capture/barrier_narrowing.h"
#include "capture/batch_replay.h"
#include "capture_commands.h"

#include <gtest/gtest.h>

#include <vector>

using namespace slipstream;
using namespace slipstream::capture;

namespace {
constexpr uint64_t kAll = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT;
const VkEvent kE = VkEvent(uint64_t(0x11));
const VkEvent kF = VkEvent(uint64_t(0x22));

// What a replay recorded: one entry per event or barrier command, with its
// (first) masks.
struct Call {
    CommandId id;
    uint64_t src = 0, dst = 0;  // stage masks (v2: of the first memory barrier)
    uint64_t src_access = 0, dst_access = 0;
};
std::vector<Call> g_calls;
Call v2_call(CommandId id, const VkDependencyInfo& info) {
    Call c{id};
    if (info.memoryBarrierCount) {
        const VkMemoryBarrier2& m = info.pMemoryBarriers[0];
        c = {id, m.srcStageMask, m.dstStageMask, m.srcAccessMask, m.dstAccessMask};
    }
    return c;
}
VKAPI_ATTR void VKAPI_CALL set_v1(VkCommandBuffer, VkEvent, VkPipelineStageFlags mask) {
    g_calls.push_back({CommandId::CmdSetEvent, mask});
}
VKAPI_ATTR void VKAPI_CALL reset_v1(VkCommandBuffer, VkEvent, VkPipelineStageFlags mask) {
    g_calls.push_back({CommandId::CmdResetEvent, mask});
}
VKAPI_ATTR void VKAPI_CALL wait_v1(VkCommandBuffer, uint32_t, const VkEvent*, VkPipelineStageFlags src,
                                   VkPipelineStageFlags dst, uint32_t n, const VkMemoryBarrier* m, uint32_t,
                                   const VkBufferMemoryBarrier*, uint32_t, const VkImageMemoryBarrier*) {
    g_calls.push_back({CommandId::CmdWaitEvents, src, dst, n ? m[0].srcAccessMask : 0u, n ? m[0].dstAccessMask : 0u});
}
VKAPI_ATTR void VKAPI_CALL set_v2(VkCommandBuffer, VkEvent, const VkDependencyInfo* info) {
    g_calls.push_back(v2_call(CommandId::CmdSetEvent2, *info));
}
VKAPI_ATTR void VKAPI_CALL wait_v2(VkCommandBuffer, uint32_t n, const VkEvent*, const VkDependencyInfo* infos) {
    for (uint32_t i = 0; i < n; ++i) g_calls.push_back(v2_call(CommandId::CmdWaitEvents2, infos[i]));
}
VKAPI_ATTR void VKAPI_CALL barrier_v1(VkCommandBuffer, VkPipelineStageFlags src, VkPipelineStageFlags dst,
                                      VkDependencyFlags, uint32_t, const VkMemoryBarrier*, uint32_t,
                                      const VkBufferMemoryBarrier*, uint32_t, const VkImageMemoryBarrier*) {
    g_calls.push_back({CommandId::CmdPipelineBarrier, src, dst});
}
VKAPI_ATTR void VKAPI_CALL dispatch(VkCommandBuffer, uint32_t, uint32_t, uint32_t) {}
VKAPI_ATTR void VKAPI_CALL dispatch_indirect(VkCommandBuffer, VkBuffer, VkDeviceSize) {}
VkLayerDispatchTable table() {
    VkLayerDispatchTable d{};
    d.CmdSetEvent = set_v1;
    d.CmdResetEvent = reset_v1;
    d.CmdWaitEvents = wait_v1;
    d.CmdSetEvent2 = set_v2;
    d.CmdWaitEvents2 = wait_v2;
    d.CmdPipelineBarrier = barrier_v1;
    d.CmdDispatch = dispatch;
    d.CmdDispatchIndirect = dispatch_indirect;
    return d;
}

struct Rec {
    CommandCapture c;
    bool narrowed = true, indirect = false;
    Rec() {
        VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
        c.begin(VK_COMMAND_BUFFER_LEVEL_PRIMARY, &bi);
    }
    Rec& reset(VkEvent e) {
        CmdResetEvent(c, CommandId::CmdResetEvent, e, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT);
        return *this;
    }
    Rec& set(VkEvent e, uint64_t mask = kAll) {
        CmdSetEvent(c, CommandId::CmdSetEvent, e, VkPipelineStageFlags(mask));
        return *this;
    }
    Rec& wait(std::vector<VkEvent> events, uint64_t src = kAll, uint64_t dst = kAll,
              VkAccessFlags src_access = VK_ACCESS_MEMORY_WRITE_BIT) {
        VkMemoryBarrier m{VK_STRUCTURE_TYPE_MEMORY_BARRIER, nullptr, src_access,
                          VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT};
        CmdWaitEvents(c, CommandId::CmdWaitEvents, uint32_t(events.size()), events.data(), VkPipelineStageFlags(src),
                      VkPipelineStageFlags(dst), 1, &m, 0, nullptr, 0, nullptr);
        return *this;
    }
    static VkMemoryBarrier2 barrier2(uint64_t src, uint64_t dst) {
        return {
            VK_STRUCTURE_TYPE_MEMORY_BARRIER_2, nullptr, src,
            VK_ACCESS_2_MEMORY_WRITE_BIT,       dst,     VK_ACCESS_2_MEMORY_READ_BIT | VK_ACCESS_2_MEMORY_WRITE_BIT};
    }
    Rec& set2(VkEvent e, uint64_t src = kAll, uint64_t dst = kAll) {
        const VkMemoryBarrier2 m = barrier2(src, dst);
        VkDependencyInfo info{VK_STRUCTURE_TYPE_DEPENDENCY_INFO};
        info.memoryBarrierCount = 1;
        info.pMemoryBarriers = &m;
        CmdSetEvent2(c, CommandId::CmdSetEvent2, e, &info);
        return *this;
    }
    Rec& wait2(VkEvent e, uint64_t src = kAll, uint64_t dst = kAll) {
        const VkMemoryBarrier2 m = barrier2(src, dst);
        VkDependencyInfo info{VK_STRUCTURE_TYPE_DEPENDENCY_INFO};
        info.memoryBarrierCount = 1;
        info.pMemoryBarriers = &m;
        CmdWaitEvents2(c, CommandId::CmdWaitEvents2, 1, &e, &info);
        return *this;
    }
    Rec& work() {
        CmdDispatch(c, CommandId::CmdDispatch, 1, 1, 1);
        return *this;
    }
    Rec& end() {
        c.end(VK_SUCCESS);
        return *this;
    }
};

// One batch as fusion replays it: the plan over every capture, then each
// replayed (narrowed or as it is), the counts summed; `full_first`: the queue
// ran other work before the batch.
NarrowingState replay_batch(std::vector<Rec*> recs, bool full_first = false) {
    const VkLayerDispatchTable d = table();
    g_calls.clear();
    BatchReplay batch;
    batch.begin_batch();
    for (Rec* r : recs) batch.plan_events(r->c, r->narrowed, r->indirect);
    NarrowingState total;
    total.full_first = full_first;
    for (Rec* r : recs) {
        NarrowingState s;
        s.indirect = r->indirect;
        s.full_first = total.full_first;
        batch.replay(r->c, d, VK_NULL_HANDLE, r->narrowed, s);
        total.full_first = s.full_first;
        total.seen += s.seen;
        total.narrowed += s.narrowed;
        total.inserted += s.inserted;
        total.event_sets_narrowed += s.event_sets_narrowed;
        total.event_waits_narrowed += s.event_waits_narrowed;
    }
    return total;
}
std::vector<Call> calls(CommandId id) {
    std::vector<Call> out;
    for (const Call& c : g_calls)
        if (c.id == id) out.push_back(c);
    return out;
}
}  // namespace

TEST(EventNarrowing, NarrowableWorkAcceptsEventCommands) {
    Rec r;
    r.reset(kE).work().set(kE).wait({kE}).set2(kF).wait2(kF).end();
    EXPECT_TRUE(narrowable_work(r.c));
}

// Every stage bit, both versions, between two resets: what orders work before the set or wait
// stays (set masks, source sides); a destination naming ALL_COMMANDS is narrowed, and a
// vkCmdSetEvent2's info comes out exactly as its wait's.
TEST(EventNarrowing, OnlyDestinationsNamingAllCommandsNarrowOnEveryStageBit) {
    for (int bit = 0; bit < 64; ++bit) {
        const uint64_t stage = uint64_t(1) << bit;
        const uint64_t dst = stage == kAll ? kNarrowDstStages : stage;
        if (bit < 32) {  // VkPipelineStageFlags
            Rec v1;
            v1.reset(kE).set(kE, stage).wait({kE}, stage, stage, 0).reset(kE).end();
            replay_batch({&v1});
            const Call set = calls(CommandId::CmdSetEvent)[0], wait = calls(CommandId::CmdWaitEvents)[0];
            EXPECT_EQ(set.src, stage) << "bit " << bit;
            EXPECT_EQ(wait.src, stage) << "bit " << bit;  // VUID-vkCmdWaitEvents-srcStageMask-01158
            EXPECT_EQ(wait.dst, dst) << "bit " << bit;
        }
        Rec v2;
        v2.reset(kE).set2(kE, stage, stage).wait2(kE, stage, stage).reset(kE).end();
        replay_batch({&v2});
        const Call set2 = calls(CommandId::CmdSetEvent2)[0], wait2 = calls(CommandId::CmdWaitEvents2)[0];
        EXPECT_EQ(set2.src, stage) << "bit " << bit;
        EXPECT_EQ(set2.src_access, uint64_t(VK_ACCESS_2_MEMORY_WRITE_BIT)) << "bit " << bit;
        EXPECT_EQ(set2.dst, dst) << "bit " << bit;
        // VUID-vkCmdWaitEvents2-pEvents-03838: exactly equal.
        EXPECT_EQ(wait2.src, set2.src) << "bit " << bit;
        EXPECT_EQ(wait2.dst, set2.dst) << "bit " << bit;
        EXPECT_EQ(wait2.src_access, set2.src_access) << "bit " << bit;
        EXPECT_EQ(wait2.dst_access, set2.dst_access) << "bit " << bit;
    }
}

// Set, wait in the same and in the next command buffer, between two resets in the batch.
TEST(EventNarrowing, SetAndWaitsBetweenResetsOfOneBatchAreNarrowedAlike) {
    Rec a, b;
    a.reset(kE).work().set2(kE).work().wait2(kE).work().end();
    b.wait2(kE).work().reset(kE).end();
    const NarrowingState s = replay_batch({&a, &b});
    const auto sets = calls(CommandId::CmdSetEvent2), waits = calls(CommandId::CmdWaitEvents2);
    ASSERT_EQ(sets.size(), 1u);
    ASSERT_EQ(waits.size(), 2u);
    EXPECT_EQ(sets[0].src, kAll);
    EXPECT_EQ(sets[0].dst, kNarrowDstStages);
    EXPECT_EQ(sets[0].dst_access, uint64_t(VK_ACCESS_2_SHADER_READ_BIT | VK_ACCESS_2_UNIFORM_READ_BIT |
                                           VK_ACCESS_2_TRANSFER_READ_BIT | VK_ACCESS_2_SHADER_WRITE_BIT |
                                           VK_ACCESS_2_TRANSFER_WRITE_BIT));
    for (const Call& w : waits) {
        EXPECT_EQ(w.src, sets[0].src);
        EXPECT_EQ(w.dst, sets[0].dst);
        EXPECT_EQ(w.src_access, sets[0].src_access);
        EXPECT_EQ(w.dst_access, sets[0].dst_access);
    }
    for (const Call& r : calls(CommandId::CmdResetEvent)) EXPECT_EQ(r.src, kAll);  // resets stay
    EXPECT_EQ(s.event_sets_narrowed, 1u);
    EXPECT_EQ(s.event_waits_narrowed, 2u);
    EXPECT_EQ(s.narrowed, 3u);
    EXPECT_EQ(s.seen, 3u);
}

// Where a set or wait might pair with one fusion does not transform, synchronization2 infos
// stay whole; a vkCmdWaitEvents' destination side is its own and is narrowed anyway.
TEST(EventNarrowing, UnprovenPairingKeepsSynchronization2InfosWhole) {
    struct Case {
        const char* name;
        bool open_reset, close_reset, middle_whole;
    };
    for (const Case& k : {Case{"no reset before", false, true, false}, Case{"no reset after", true, false, false},
                          Case{"a capture replayed whole between", true, true, true}}) {
        Rec a, middle, b;
        if (k.open_reset) a.reset(kE);
        a.work().set2(kE).set(kF).end();
        middle.work().end();
        middle.narrowed = !k.middle_whole;
        b.wait2(kE).wait({kF}).work();
        if (k.close_reset) b.reset(kE);
        b.end();
        const NarrowingState s = replay_batch({&a, &middle, &b});
        const auto sets = calls(CommandId::CmdSetEvent2), waits = calls(CommandId::CmdWaitEvents2);
        ASSERT_EQ(sets.size(), 1u) << k.name;
        ASSERT_EQ(waits.size(), 1u) << k.name;
        EXPECT_EQ(sets[0].dst, kAll) << k.name;
        EXPECT_EQ(waits[0].dst, kAll) << k.name;
        const Call v1 = calls(CommandId::CmdWaitEvents)[0];
        EXPECT_EQ(v1.src, kAll) << k.name;
        EXPECT_EQ(v1.src_access, uint64_t(VK_ACCESS_MEMORY_WRITE_BIT)) << k.name;
        EXPECT_EQ(v1.dst, kNarrowDstStages) << k.name;
        EXPECT_EQ(s.event_sets_narrowed, 0u) << k.name;
        EXPECT_EQ(s.event_waits_narrowed, 1u) << k.name;
    }
}

// A vkCmdWaitEvents2 on two events: each info as its own event's pairing allows.
TEST(EventNarrowing, EachInfoOfAWaitFollowsItsOwnEvent) {
    Rec a;
    a.reset(kE).set2(kE).set2(kF).end();
    const VkMemoryBarrier2 m = Rec::barrier2(kAll, kAll);
    VkDependencyInfo infos[2] = {{VK_STRUCTURE_TYPE_DEPENDENCY_INFO}, {VK_STRUCTURE_TYPE_DEPENDENCY_INFO}};
    for (auto& i : infos) {
        i.memoryBarrierCount = 1;
        i.pMemoryBarriers = &m;
    }
    const VkEvent both[2] = {kE, kF};
    CmdWaitEvents2(a.c, CommandId::CmdWaitEvents2, 2, both, infos);
    a.reset(kE).end();  // kF: never reset in the batch
    replay_batch({&a});
    const auto sets = calls(CommandId::CmdSetEvent2), waits = calls(CommandId::CmdWaitEvents2);
    ASSERT_EQ(waits.size(), 2u);
    EXPECT_EQ(sets[0].dst, kNarrowDstStages);
    EXPECT_EQ(waits[0].dst, kNarrowDstStages);
    EXPECT_EQ(sets[1].dst, kAll);
    EXPECT_EQ(waits[1].dst, kAll);
}

// An indirect capture's wait makes set and wait both reach DRAW_INDIRECT.
TEST(EventNarrowing, IndirectWaitReachesDrawIndirectInSetAndWait) {
    Rec c, d;
    c.reset(kE).work().set2(kE).end();
    CmdDispatchIndirect(d.c, CommandId::CmdDispatchIndirect, VkBuffer(uint64_t(9)), 0);
    d.wait2(kE).reset(kE).end();
    d.indirect = true;
    const NarrowingState s = replay_batch({&c, &d});
    const Call set = calls(CommandId::CmdSetEvent2)[0], wait = calls(CommandId::CmdWaitEvents2)[0];
    EXPECT_EQ(set.src, kAll);
    EXPECT_EQ(set.dst, kNarrowDstIndirectStages);
    EXPECT_EQ(wait.dst, set.dst);
    EXPECT_EQ(wait.dst_access, set.dst_access);
    EXPECT_TRUE(wait.dst_access & VK_ACCESS_2_INDIRECT_COMMAND_READ_BIT);
    EXPECT_EQ(s.event_sets_narrowed, 1u);
    EXPECT_EQ(s.event_waits_narrowed, 1u);
}

// The history rule covers event commands as it covers barriers: after other work on the
// queue, a full barrier of ours goes in front of the first narrowed one.
TEST(EventNarrowing, FullBarrierInFrontOfTheFirstNarrowedEventCommandAfterOtherWork) {
    Rec a;
    a.reset(kE).set2(kE).wait2(kE).reset(kE).end();
    const NarrowingState s = replay_batch({&a}, true);
    ASSERT_EQ(g_calls.size(), 5u);
    EXPECT_EQ(g_calls[0].id, CommandId::CmdResetEvent);
    EXPECT_EQ(g_calls[1].id, CommandId::CmdPipelineBarrier);  // ours, from everything
    EXPECT_EQ(g_calls[1].src, kAll);
    EXPECT_EQ(g_calls[1].dst, kNarrowDstStages);
    EXPECT_EQ(g_calls[2].id, CommandId::CmdSetEvent2);
    EXPECT_EQ(g_calls[2].dst, kNarrowDstStages);
    EXPECT_EQ(s.inserted, 1u);
    EXPECT_FALSE(s.full_first);

    Rec b;
    b.set(kE).wait({kE}).end();
    const NarrowingState t = replay_batch({&b}, true);
    ASSERT_EQ(g_calls.size(), 3u);
    EXPECT_EQ(g_calls[0].id, CommandId::CmdSetEvent);
    EXPECT_EQ(g_calls[0].src, kAll);
    EXPECT_EQ(g_calls[1].id, CommandId::CmdPipelineBarrier);
    EXPECT_EQ(g_calls[2].id, CommandId::CmdWaitEvents);
    EXPECT_EQ(g_calls[2].dst, kNarrowDstStages);
    EXPECT_EQ(t.inserted, 1u);
}
