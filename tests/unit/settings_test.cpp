#include "core/settings.h"

#include <gtest/gtest.h>

#include <cctype>
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
    EXPECT_TRUE(s.fuse);  // on since the hardening issue went through it
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
    EXPECT_EQ(parse_settings(from({}), nullptr).lazy_record, LazyRecord::Auto);
    EXPECT_EQ(parse_settings(from({{"lazy_record", "AUTO"}}), nullptr).lazy_record, LazyRecord::Auto);
    EXPECT_EQ(parse_settings(from({{"lazy_record", "on"}}), nullptr).lazy_record, LazyRecord::On);
    EXPECT_EQ(parse_settings(from({{"lazy_record", "0"}}), nullptr).lazy_record, LazyRecord::Off);
    EXPECT_TRUE(parse_settings(from({}), nullptr).object_pool);
    EXPECT_FALSE(parse_settings(from({{"object_pool", "off"}}), nullptr).object_pool);
    // on pools where it pays, always whatever it costs.
    EXPECT_FALSE(parse_settings(from({}), nullptr).object_pool_always);
    EXPECT_FALSE(parse_settings(from({{"object_pool", "on"}}), nullptr).object_pool_always);
    EXPECT_TRUE(parse_settings(from({{"object_pool", "Always"}}), nullptr).object_pool);
    EXPECT_TRUE(parse_settings(from({{"object_pool", "always"}}), nullptr).object_pool_always);
    EXPECT_FALSE(parse_settings(from({{"object_pool", "off"}}), nullptr).object_pool_always);
    EXPECT_EQ(parse_settings(from({}), nullptr).object_pool_fences, 256u);
    EXPECT_EQ(parse_settings(from({{"object_pool_fences", "1"}}), nullptr).object_pool_fences, 1u);
    EXPECT_EQ(parse_settings(from({{"object_pool_fences", "65536"}}), nullptr).object_pool_fences, 65536u);
    EXPECT_TRUE(parse_settings(from({}), nullptr).alloc_cache);
    EXPECT_FALSE(parse_settings(from({{"alloc_cache", "off"}}), nullptr).alloc_cache);
    EXPECT_EQ(parse_settings(from({}), nullptr).alloc_cache_mib, 0u);
    EXPECT_EQ(parse_settings(from({{"alloc_cache_mib", "3"}}), nullptr).alloc_cache_mib, 3u);
    EXPECT_TRUE(parse_settings(from({}), nullptr).alloc_cache_zero);
    EXPECT_FALSE(parse_settings(from({{"alloc_cache_zero", "no"}}), nullptr).alloc_cache_zero);
    EXPECT_EQ(parse_settings(from({}), nullptr).object_pool_timelines, 64u);
    EXPECT_TRUE(parse_settings(from({}), nullptr).log_messengers);
    EXPECT_FALSE(parse_settings(from({{"log_messengers", "off"}}), nullptr).log_messengers);
    EXPECT_EQ(parse_settings(from({{"object_pool_timelines", "1"}}), nullptr).object_pool_timelines, 1u);
    EXPECT_EQ(parse_settings(from({{"object_pool_timelines", "0"}}), nullptr).object_pool_timelines, 64u);
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

// --- hostile values (issue 12) -----------------------------------------------------------------
// Every setting of setting_specs() (never a copy of the list) against values an environment or
// a settings file may hold by mistake or malice. A setting that takes a path takes any text;
// every other one must keep its default and say so in exactly one warning.
namespace {

enum class Kind { Path, Range, Words };

Kind kind_of(const SettingSpec& s) {
    const std::string accepted = s.accepted;
    if (accepted == "a file path") return Kind::Path;
    if (!accepted.empty() && std::isdigit(static_cast<unsigned char>(accepted[0]))) return Kind::Range;
    return Kind::Words;
}

// "lo..hi (unit)" of a range setting's spec.
std::pair<uint64_t, uint64_t> range_of(const SettingSpec& s) {
    const std::string accepted = s.accepted;
    const size_t dots = accepted.find("..");
    return {std::stoull(accepted.substr(0, dots)), std::stoull(accepted.substr(dots + 2))};
}

// "a|b|c" of a word setting's spec.
std::vector<std::string> words_of(const SettingSpec& s) {
    std::vector<std::string> words;
    std::string accepted = s.accepted;
    for (size_t start = 0; start <= accepted.size();) {
        size_t bar = accepted.find('|', start);
        if (bar == std::string::npos) bar = accepted.size();
        words.push_back(accepted.substr(start, bar - start));
        start = bar + 1;
    }
    return words;
}

std::string env_name(const SettingSpec& s) {
    std::string upper = s.name;
    for (char& c : upper) c = char(std::toupper(static_cast<unsigned char>(c)));
    return "VK_SLIPSTREAM_" + upper;
}

struct Hostile {
    const char* what;
    std::string text;
};

// Invalid for every setting that is not a path.
std::vector<Hostile> hostile_values() {
    return {
        {"empty", ""},
        {"2^64", "18446744073709551616"},
        {"2^32", "4294967296"},
        {"1e300", "1e300"},
        {"negative", "-1"},
        {"negative zero", "-0"},
        {"non-numeric", "abc"},
        {"unknown word", "sometimes"},
        {"64 KiB of digits", std::string(65536, '9')},
        {"64 KiB of letters", std::string(65536, 'x')},
        {"leading space", " 1"},
        {"trailing space", "on "},
        {"inner space", "o n"},
        {"newline", "on\nVK_SLIPSTREAM_FUSE=on"},
        {"tab", "\t1"},
        {"UTF-8", "\xc3\xbc"},
        {"UTF-8 digits", "\xef\xbc\x91"},  // FULLWIDTH DIGIT ONE
        {"binary", std::string("\x01\xff\x7f\x80", 4)},
        {"leading plus", "+1"},
        {"hex", "0x10"},
        {"octal-looking", "010abc"},
        {"trailing garbage", "10abc"},
        {"fraction", "1.5"},
        {"exponent", "1e3"},
        {"embedded NUL-free escape", "\\0"},
    };
}

std::string described(const Settings& s, const std::string& name) {
    for (const auto& [n, v] : describe_settings(s))
        if (n == name) return v;
    ADD_FAILURE() << "describe_settings has no " << name;
    return "";
}

// Parses `name` = `text` alone; checks that every other setting kept its default.
Settings parse_one(const SettingSpec& spec, const std::string& text, std::vector<std::string>* warnings) {
    Settings s = parse_settings(from({{spec.name, text}}), warnings);
    const auto defaults = describe_settings(Settings{});
    const auto got = describe_settings(s);
    for (size_t i = 0; i < got.size(); ++i) {
        if (got[i].first == spec.name) continue;
        EXPECT_EQ(got[i], defaults[i]) << spec.name << " changed another setting";
    }
    return s;
}

// The value stays the default; exactly one warning, which names the setting both ways, says
// which default is used, and stays one short line whatever the value was.
void expect_rejected(const SettingSpec& spec, const std::string& text, const std::string& what) {
    SCOPED_TRACE(std::string(spec.name) + " = " + what);
    std::vector<std::string> warnings;
    Settings s = parse_one(spec, text, &warnings);
    EXPECT_EQ(described(s, spec.name), described(Settings{}, spec.name));
    ASSERT_EQ(warnings.size(), 1u);
    const std::string& w = warnings[0];
    EXPECT_NE(w.find(env_name(spec)), std::string::npos) << w;
    EXPECT_NE(w.find(std::string("slipstream.") + spec.name), std::string::npos) << w;
    EXPECT_NE(w.find(std::string("Using the default '") + spec.fallback + "'"), std::string::npos) << w;
    EXPECT_NE(w.find(spec.accepted), std::string::npos) << w;
    EXPECT_EQ(w.find('\n'), std::string::npos) << w;
    EXPECT_LT(w.size(), 600u);
    for (char c : w) EXPECT_TRUE(c >= 0x20 && c < 0x7f) << "byte " << int(static_cast<unsigned char>(c));
}

}  // namespace

TEST(SettingsHostile, EverySpecsDefaultIsTheParsedDefault) {
    for (const SettingSpec& spec : setting_specs()) EXPECT_EQ(described(Settings{}, spec.name), spec.fallback) << spec.name;
}

TEST(SettingsHostile, EverySettingRejectsEveryHostileValue) {
    size_t rejected = 0;
    for (const SettingSpec& spec : setting_specs()) {
        if (kind_of(spec) == Kind::Path) continue;
        for (const Hostile& h : hostile_values()) {
            expect_rejected(spec, h.text, h.what);
            ++rejected;
        }
    }
    // Most settings are not paths: a spec table that lost them would pass vacuously.
    EXPECT_GE(rejected, hostile_values().size() * 10);
}

TEST(SettingsHostile, RangesRejectTheirEdgesOutside) {
    for (const SettingSpec& spec : setting_specs()) {
        if (kind_of(spec) != Kind::Range) continue;
        const auto [lo, hi] = range_of(spec);
        expect_rejected(spec, std::to_string(hi + 1), "hi + 1");
        expect_rejected(spec, std::to_string(hi * 10), "hi * 10");
        expect_rejected(spec, std::to_string((uint64_t(1) << 32) + lo), "2^32 + lo (wraps to lo)");
        if (lo > 0) expect_rejected(spec, std::to_string(lo - 1), "lo - 1");
        // In range, both ends.
        for (uint64_t v : {lo, hi}) {
            std::vector<std::string> warnings;
            Settings s = parse_one(spec, std::to_string(v), &warnings);
            EXPECT_EQ(described(s, spec.name), std::to_string(v)) << spec.name;
            EXPECT_TRUE(warnings.empty()) << spec.name << " = " << v;
        }
    }
}

TEST(SettingsHostile, WordsRejectNearMisses) {
    for (const SettingSpec& spec : setting_specs()) {
        if (kind_of(spec) != Kind::Words) continue;
        for (const std::string& word : words_of(spec)) {
            expect_rejected(spec, word + "x", "word + x");
            expect_rejected(spec, " " + word, "space + word");
            expect_rejected(spec, word.substr(0, word.size() - 1), "word cut short");
            expect_rejected(spec, word + "\n", "word + newline");
            // The word itself is taken, in any case.
            std::string upper = word;
            for (char& c : upper) c = char(std::toupper(static_cast<unsigned char>(c)));
            for (const std::string& spelling : {word, upper}) {
                std::vector<std::string> warnings;
                parse_one(spec, spelling, &warnings);
                EXPECT_TRUE(warnings.empty()) << spec.name << " = " << spelling;
            }
        }
    }
}

TEST(SettingsHostile, PathsTakeAnyTextVerbatim) {
    size_t paths = 0;
    for (const SettingSpec& spec : setting_specs()) {
        if (kind_of(spec) != Kind::Path) continue;
        ++paths;
        for (const Hostile& h : hostile_values()) {
            std::vector<std::string> warnings;
            Settings s = parse_one(spec, h.text, &warnings);
            EXPECT_EQ(described(s, spec.name), h.text) << spec.name << " = " << h.what;
            EXPECT_TRUE(warnings.empty()) << spec.name << " = " << h.what;
        }
    }
    EXPECT_GE(paths, 2u);  // stats_file, fuse_trace
}

TEST(SettingsHostile, EverySettingHostileAtOnceWarnsOncePerSetting) {
    std::map<std::string, std::string> values;
    size_t not_paths = 0;
    for (const SettingSpec& spec : setting_specs()) {
        values[spec.name] = "10abc";
        if (kind_of(spec) != Kind::Path) ++not_paths;
    }
    std::vector<std::string> warnings;
    Settings s = parse_settings(from(values), &warnings);
    ASSERT_EQ(warnings.size(), not_paths);
    for (const SettingSpec& spec : setting_specs()) {
        if (kind_of(spec) == Kind::Path) continue;
        EXPECT_EQ(described(s, spec.name), spec.fallback);
        size_t naming = 0;
        for (const std::string& w : warnings) naming += w.find(env_name(spec) + " ") != std::string::npos;
        EXPECT_EQ(naming, 1u) << spec.name;
    }
}

TEST(SettingsHostile, PrintableEscapesAndShortens) {
    EXPECT_EQ(printable("on"), "on");
    EXPECT_EQ(printable("a\nb\tc\\"), "a\\nb\\tc\\\\");
    EXPECT_EQ(printable(std::string("\x01\xff", 2)), "\\x01\\xff");
    EXPECT_EQ(printable(std::string(100, 'x'), 4), "xxxx... (100 bytes)");
}

// Per-application settings: the environment, then the settings file's section for the running
// program (`slipstream.app.EXECUTABLE.name`), then the file's general `slipstream.name`.
TEST(SettingsLookup, EnvironmentThenTheProgramsSectionThenTheFile) {
    std::map<std::string, std::string> env, file;
    auto source = [](const std::map<std::string, std::string>& m) {
        return [&m](const std::string& key) -> const char* {
            auto it = m.find(key);
            return it == m.end() ? nullptr : it->second.c_str();
        };
    };
    auto look = [&](const std::string& exe) { return lookup_setting_in("fuse", exe, source(env), source(file)); };
    EXPECT_FALSE(look("app").has_value());
    file["slipstream.fuse"] = "on";
    EXPECT_EQ(look("app"), "on");
    file["slipstream.app.app.fuse"] = "off";
    EXPECT_EQ(look("app"), "off");
    EXPECT_EQ(look("other"), "on");  // another program keeps the general value
    EXPECT_EQ(look(""), "on");       // a program whose name is unknown too
    file["slipstream.app.other.fuse"] = "";
    EXPECT_EQ(look("other"), "on");  // an empty value does not count
    env["VK_SLIPSTREAM_FUSE"] = "on";
    EXPECT_EQ(look("app"), "on");    // the environment wins
}

TEST(SettingsLookup, ThisProgramHasAName) { EXPECT_FALSE(executable_name().empty()); }
