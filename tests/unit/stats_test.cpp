#include "core/stats.h"

#include <gtest/gtest.h>

using namespace slipstream;

TEST(Stats, SnapshotCopiesCountersAndCommands) {
    DeviceStats stats;
    stats.add(Counter::QueueSubmits, 3);
    stats.add(Counter::FenceWaits);
    uint32_t by_kind[kCommandKindCount] = {};
    by_kind[int(CommandKind::Compute)] = 7;
    stats.add_commands(by_kind);
    stats.add_commands(by_kind);
    StatsSnapshot s = snapshot(stats);
    EXPECT_EQ(s.counters[int(Counter::QueueSubmits)], 3u);
    EXPECT_EQ(s.counters[int(Counter::FenceWaits)], 1u);
    EXPECT_EQ(s.counters[int(Counter::DeviceWaitIdles)], 0u);
    EXPECT_EQ(s.commands[int(CommandKind::Compute)], 14u);
}

TEST(Stats, DisabledCountsNothing) {
    DeviceStats stats;
    stats.set_enabled(false);
    stats.add(Counter::QueueSubmits, 3);
    uint32_t by_kind[kCommandKindCount] = {};
    by_kind[int(CommandKind::Compute)] = 7;
    stats.add_commands(by_kind);
    StatsSnapshot s = snapshot(stats);
    EXPECT_EQ(s.counters[int(Counter::QueueSubmits)], 0u);
    EXPECT_EQ(s.commands[int(CommandKind::Compute)], 0u);
}

TEST(Stats, WantedOnlyWhenAReportIsAskedFor) {
    Settings s;
    EXPECT_FALSE(stats_wanted(s));
    s.stats = true;
    EXPECT_TRUE(stats_wanted(s));
    s.stats = false;
    s.stats_file = "/tmp/x.json";
    EXPECT_TRUE(stats_wanted(s));
}

TEST(Stats, JsonNamesEveryCounterAndEscapesStrings) {
    StatsSnapshot s;
    s.device_name = "GPU \"quoted\"\\";
    s.counters[int(Counter::QueueSubmits)] = 42;
    s.commands[int(CommandKind::Transfer)] = 5;
    std::string json = format_stats_json({s}, {{"log", "warn"}});
    EXPECT_NE(json.find("\"device_name\": \"GPU \\\"quoted\\\"\\\\\""), std::string::npos) << json;
    EXPECT_NE(json.find("\"queue_submits\": 42"), std::string::npos);
    EXPECT_NE(json.find("\"Transfer\": 5"), std::string::npos);
    for (const char* name : kCounterNames) EXPECT_NE(json.find(std::string("\"") + name + "\""), std::string::npos);
    EXPECT_NE(json.find("\"settings\": {\"log\": \"warn\"}"), std::string::npos);
}

TEST(Stats, TextSaysNoneWhenNothingWasSubmitted) {
    StatsSnapshot s;
    s.device_name = "dev";
    std::string text = format_stats_text(s);
    EXPECT_NE(text.find("statistics for dev"), std::string::npos);
    EXPECT_NE(text.find("by kind: none"), std::string::npos);
}
