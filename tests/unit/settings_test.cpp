#include "core/settings.h"

#include <gtest/gtest.h>

#include <map>

using namespace slipstream;

namespace {
SettingLookup from(std::map<std::string, std::string> values) {
    return [values](const std::string& name) -> std::optional<std::string> {
        auto it = values.find(name);
        if (it == values.end()) return std::nullopt;
        return it->second;
    };
}
}  // namespace

TEST(Settings, DefaultsWhenNothingIsSet) {
    std::vector<std::string> warnings;
    Settings s = parse_settings(from({}), &warnings);
    EXPECT_EQ(s.log, LogLevel::Warn);
    EXPECT_FALSE(s.stats);
    EXPECT_EQ(s.stats_file, "");
    EXPECT_FALSE(s.fuse);  // capture only, so far: off until fusion consumes it
    EXPECT_TRUE(warnings.empty());
}

TEST(Settings, ParsesEveryAcceptedSpelling) {
    struct Case {
        const char* text;
        bool value;
    } cases[] = {{"1", true}, {"on", true}, {"ON", true}, {"true", true}, {"yes", true},
                 {"0", false}, {"off", false}, {"False", false}, {"no", false}};
    for (const Case& c : cases) {
        std::vector<std::string> warnings;
        Settings s = parse_settings(from({{"stats", c.text}}), &warnings);
        EXPECT_EQ(s.stats, c.value) << c.text;
        EXPECT_TRUE(warnings.empty()) << c.text;
    }
    EXPECT_EQ(parse_settings(from({{"log", "debug"}}), nullptr).log, LogLevel::Debug);
    EXPECT_EQ(parse_settings(from({{"log", "Info"}}), nullptr).log, LogLevel::Info);
    EXPECT_EQ(parse_settings(from({{"log", "error"}}), nullptr).log, LogLevel::Error);
    EXPECT_EQ(parse_settings(from({{"stats_file", "/tmp/x.json"}}), nullptr).stats_file, "/tmp/x.json");
    EXPECT_TRUE(parse_settings(from({{"fuse", "on"}}), nullptr).fuse);
}

TEST(Settings, BadValueWarnsOnceNamingTheSettingAndKeepsTheDefault) {
    std::vector<std::string> warnings;
    Settings s = parse_settings(from({{"log", "loud"}, {"stats", "maybe"}}), &warnings);
    EXPECT_EQ(s.log, LogLevel::Warn);
    EXPECT_FALSE(s.stats);
    ASSERT_EQ(warnings.size(), 2u);
    EXPECT_NE(warnings[0].find("VK_SLIPSTREAM_LOG"), std::string::npos);
    EXPECT_NE(warnings[0].find("'loud'"), std::string::npos);
    EXPECT_NE(warnings[0].find("error|warn|info|debug"), std::string::npos);
    EXPECT_NE(warnings[1].find("VK_SLIPSTREAM_STATS"), std::string::npos);
}

TEST(Settings, EveryParsedSettingIsDescribedAndHasASpec) {
    auto described = describe_settings(Settings{});
    const auto& specs = setting_specs();
    ASSERT_EQ(described.size(), specs.size());
    for (size_t i = 0; i < specs.size(); ++i) EXPECT_EQ(described[i].first, specs[i].name);
}
