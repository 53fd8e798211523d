#include "core/settings.h"

#include <vulkan/vk_layer_config.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <mutex>
#include <set>

namespace slipstream {

const std::vector<SettingSpec>& setting_specs() {
    static const std::vector<SettingSpec> specs = {
        {"log", "error|warn|info|debug", "warn", "how much the layer tells on stderr"},
        {"log_messengers", "on|off", "on", "also send the layer's messages to the application's VK_EXT_debug_utils messengers"},
        {"stats", "on|off", "off", "print a summary per device at vkDestroyDevice or exit"},
        {"stats_file", "a file path", "", "also write the summary as JSON to this file"},
        {"spin", "on|off", "on", "poll before blocking in fence, semaphore and idle waits"},
        {"spin_us", "0..100000 (microseconds)", "100", "how long a wait polls before it blocks"},
        {"spin_adaptive", "on|off", "on", "block at once where waits usually last far longer than the budget"},
        {"readback", "off|auto|all-host-visible", "auto", "move memory the host reads back to cached memory"},
        {"readback_defer", "on|off", "on", "with readback auto: defer buffer binds into uncovered host-visible memory until the first use says whether the host reads it back"},
        {"readback_steer", "on|off", "off", "report readback buffers' memoryTypeBits without uncached host-visible types"},
        {"fuse", "on|off", "on", "replay small compute/transfer command buffers into few batches of Slipstream's at submission"},
        {"batch_max", "1..4096 (operations)", "32", "operations (dispatches, copies, fills...) one fused batch may hold"},
        {"max_defer_us", "0..100000 (microseconds)", "500", "the longest a fused batch waits for more work before it is submitted"},
        {"fuse_barrier", "on|off", "on", "put a compute|transfer barrier in front of each fused command buffer (for applications that rely on command-buffer boundaries)"},
        {"flusher_poll_us", "0..1000 (microseconds)", "10", "with fuse on: while batches of Slipstream's run, the flusher thread looks at them this often (0: it blocks in the driver's semaphore wait instead)"},
        {"lazy_record", "on|auto|off", "auto", "with fuse on: record fusable command buffers only as captures, not into the driver (they are replayed at submission); auto records them into the driver at vkEndCommandBuffer where their queue family waits for every submission on an idle GPU"},
        {"narrow_barriers", "on|off", "on", "with fuse on: narrow ALL_COMMANDS barriers of fused command buffers to the stages a batch's work uses"},
        {"narrow_history", "on|off", "on", "test-only: off drops the full barriers that keep narrowed barriers correct across the queue's other work (to prove the tests catch it)"},
        {"elide_barriers", "on|off", "on", "with fuse on: leave the fuse barrier out in front of a command buffer whose memory footprint (descriptor sets, push descriptors, copy and fill ranges, indirect parameters, compared by VkDeviceMemory and offset) provably meets no write of, and writes nothing touched by, the command buffers since the last barrier"},
        {"elide_proof", "on|off|trust-unknown", "on", "test-only: off elides every fuse barrier after a batch's first, trust-unknown takes update-after-bind sets and buffer-device-address shaders at face value (to prove the tests catch a wrong elision)"},
        {"fuse_trace", "a file path", "", "write a line per fused submission and per batch to this file at vkDestroyDevice (for tuning the flush rules)"},
        {"object_pool", "on|always|off", "on", "keep fences and timeline semaphores the application destroys (created plainly) and hand them out again at vkCreateFence and vkCreateSemaphore instead of the driver creating new ones (a reused timeline semaphore's values are offset by the layer); on does so only where the driver's create and destroy cost more than pooling (measured per device and kind of object), always everywhere"},
        {"object_pool_fences", "1..65536 (fences)", "256", "with object_pool on: fences kept at most per device; beyond it destroyed fences go to the driver"},
        {"alloc_cache", "on|always|off", "on", "keep plain memory allocations the application frees and hand them out again at vkAllocateMemory of the same type and a size within 1/8 above, instead of the driver allocating anew; on does so only where zeroing for reuse costs less than the driver's allocation (measured per memory type), always everywhere"},
        {"alloc_cache_mib", "0..65536 (MiB per heap)", "0", "with alloc_cache on: bytes kept at most per memory heap; 0 means the smaller of 256 MiB and 5% of the heap"},
        {"alloc_cache_zero", "on|off", "on", "with alloc_cache on: zero recycled memory before handing it out (as drivers hand out fresh memory): map + memset, or, for memory the host cannot map, a GPU fill ahead of the next submission; off hands it out as the application left it"},
        {"object_pool_timelines", "1..65536 (semaphores)", "64", "with object_pool on: timeline semaphores kept at most per device; beyond it destroyed ones go to the driver"},
        {"arm", "off|on|timeline|event", "off", "with fuse on, research: on a queue that waits for every submission, keep a replay of the last command buffer submitted on the GPU, waiting; a submission of the same work releases it with one host call instead of a driver submission (on or timeline: a wait on a timeline value the host signals; event: a host-set event, outside the specification's forward-progress rule), any other use of the queue or of what it names releases it with its work skipped"},
        {"arm_deadline_us", "100..100000 (microseconds)", "2000", "with arm on: an armed replay nobody claims within this time is released with its work skipped"},
    };
    return specs;
}

static std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    return s;
}

std::optional<bool> parse_bool(const std::string& text) {
    const std::string t = lower(text);
    if (t == "1" || t == "on" || t == "true" || t == "yes") return true;
    if (t == "0" || t == "off" || t == "false" || t == "no") return false;
    return std::nullopt;
}

static std::optional<LogLevel> parse_log_level(const std::string& text) {
    const std::string t = lower(text);
    if (t == "error") return LogLevel::Error;
    if (t == "warn" || t == "warning") return LogLevel::Warn;
    if (t == "info") return LogLevel::Info;
    if (t == "debug") return LogLevel::Debug;
    return std::nullopt;
}

// A decimal number in [lo, hi]: digits only (no sign, spaces, hex or exponent), at most six
// of them, so stoul cannot overflow.
static std::optional<uint32_t> parse_range(const std::string& text, uint32_t lo, uint32_t hi) {
    if (text.empty() || text.size() > 6 || text.find_first_not_of("0123456789") != std::string::npos)
        return std::nullopt;
    unsigned long v = std::stoul(text);
    if (v < lo || v > hi) return std::nullopt;
    return uint32_t(v);
}

static std::optional<ReadbackMode> parse_readback(const std::string& text) {
    const std::string t = lower(text);
    if (t == "off" || t == "0") return ReadbackMode::Off;
    if (t == "auto" || t == "on" || t == "1") return ReadbackMode::Auto;
    if (t == "all-host-visible") return ReadbackMode::AllHostVisible;
    return std::nullopt;
}

static std::optional<ElideProof> parse_elide_proof(const std::string& text) {
    const std::string t = lower(text);
    if (t == "trust-unknown") return ElideProof::TrustUnknown;
    if (auto b = parse_bool(t)) return *b ? ElideProof::On : ElideProof::Off;
    return std::nullopt;
}

// alloc_cache, object_pool: 0 off, 1 on, 2 always.
static std::optional<int> parse_on_always_off(const std::string& text) {
    if (lower(text) == "always") return 2;
    if (auto b = parse_bool(text)) return *b ? 1 : 0;
    return std::nullopt;
}

static std::optional<LazyRecord> parse_lazy_record(const std::string& text) {
    if (lower(text) == "auto") return LazyRecord::Auto;
    if (auto b = parse_bool(text)) return *b ? LazyRecord::On : LazyRecord::Off;
    return std::nullopt;
}

static std::optional<ArmMode> parse_arm(const std::string& text) {
    const std::string t = lower(text);
    if (t == "timeline") return ArmMode::Timeline;
    if (t == "event") return ArmMode::Event;
    if (auto b = parse_bool(text)) return *b ? ArmMode::Timeline : ArmMode::Off;  // on: the conforming way
    return std::nullopt;
}

static const SettingSpec& spec(const char* name) {
    for (const SettingSpec& s : setting_specs())
        if (std::string(s.name) == name) return s;
    std::abort();  // a typo in this file: every parsed setting has a spec
}

namespace {
// Reads one setting with `parse`, or reports why it kept the default.
template <typename T, typename Parse>
void read_one(const SettingLookup& lookup, std::vector<std::string>* warnings, const char* name,
              Parse parse, T& out) {
    std::optional<std::string> text = lookup(name);
    if (!text) return;
    if (auto value = parse(*text)) {
        out = *value;
        return;
    }
    const SettingSpec& s = spec(name);
    std::string upper = lower(name);
    std::transform(upper.begin(), upper.end(), upper.begin(), [](unsigned char c) { return char(std::toupper(c)); });
    // The value quoted printable and short: it may be anything (binary, 64 KiB), and the
    // message must still end by saying which default is used.
    if (warnings)
        warnings->push_back("VK_SLIPSTREAM_" + upper + " (slipstream." + name + ") = '" + printable(*text) +
                            "' is not valid; it accepts " + s.accepted + ". Using the default '" +
                            s.fallback + "'.");
}

// An on|always|off setting into its two flags.
void read_on_always(const SettingLookup& lookup, std::vector<std::string>* warnings, const char* name, bool& on,
                    bool& always) {
    int value = on ? (always ? 2 : 1) : 0;
    read_one(lookup, warnings, name, parse_on_always_off, value);
    on = value != 0;
    always = value == 2;
}

const char* on_always_off(bool on, bool always) { return on ? (always ? "always" : "on") : "off"; }
}  // namespace

Settings parse_settings(const SettingLookup& lookup, std::vector<std::string>* warnings) {
    Settings s;
    read_one(lookup, warnings, "log", parse_log_level, s.log);
    read_one(lookup, warnings, "log_messengers", parse_bool, s.log_messengers);
    read_one(lookup, warnings, "stats", parse_bool, s.stats);
    read_one(lookup, warnings, "stats_file",
             [](const std::string& t) { return std::optional<std::string>(t); }, s.stats_file);
    read_one(lookup, warnings, "spin", parse_bool, s.spin);
    read_one(lookup, warnings, "spin_us", [](const std::string& t) { return parse_range(t, 0, 100000); }, s.spin_us);
    read_one(lookup, warnings, "spin_adaptive", parse_bool, s.spin_adaptive);
    read_one(lookup, warnings, "readback", parse_readback, s.readback);
    read_one(lookup, warnings, "readback_defer", parse_bool, s.readback_defer);
    read_one(lookup, warnings, "readback_steer", parse_bool, s.readback_steer);
    read_one(lookup, warnings, "fuse", parse_bool, s.fuse);
    read_one(lookup, warnings, "batch_max", [](const std::string& t) { return parse_range(t, 1, 4096); }, s.batch_max);
    read_one(lookup, warnings, "max_defer_us", [](const std::string& t) { return parse_range(t, 0, 100000); },
             s.max_defer_us);
    read_one(lookup, warnings, "fuse_barrier", parse_bool, s.fuse_barrier);
    read_one(lookup, warnings, "flusher_poll_us", [](const std::string& t) { return parse_range(t, 0, 1000); },
             s.flusher_poll_us);
    read_one(lookup, warnings, "lazy_record", parse_lazy_record, s.lazy_record);
    read_one(lookup, warnings, "narrow_barriers", parse_bool, s.narrow_barriers);
    read_one(lookup, warnings, "narrow_history", parse_bool, s.narrow_history);
    read_one(lookup, warnings, "elide_barriers", parse_bool, s.elide_barriers);
    read_one(lookup, warnings, "elide_proof", parse_elide_proof, s.elide_proof);
    read_one(lookup, warnings, "fuse_trace",
             [](const std::string& t) { return std::optional<std::string>(t); }, s.fuse_trace);
    read_on_always(lookup, warnings, "object_pool", s.object_pool, s.object_pool_always);
    read_one(lookup, warnings, "object_pool_fences", [](const std::string& t) { return parse_range(t, 1, 65536); },
             s.object_pool_fences);
    read_on_always(lookup, warnings, "alloc_cache", s.alloc_cache, s.alloc_cache_always);
    read_one(lookup, warnings, "alloc_cache_mib", [](const std::string& t) { return parse_range(t, 0, 65536); },
             s.alloc_cache_mib);
    read_one(lookup, warnings, "alloc_cache_zero", parse_bool, s.alloc_cache_zero);
    read_one(lookup, warnings, "object_pool_timelines", [](const std::string& t) { return parse_range(t, 1, 65536); },
             s.object_pool_timelines);
    read_one(lookup, warnings, "arm", parse_arm, s.arm);
    read_one(lookup, warnings, "arm_deadline_us", [](const std::string& t) { return parse_range(t, 100, 100000); },
             s.arm_deadline_us);
    return s;
}

std::optional<std::string> lookup_setting_in(const std::string& name, const std::string& executable,
                                             const TextSource& environment, const TextSource& file) {
    std::string env = "VK_SLIPSTREAM_" + name;
    std::transform(env.begin(), env.end(), env.begin(), [](unsigned char c) { return char(std::toupper(c)); });
    if (const char* value = environment(env)) return std::string(value);
    if (!executable.empty())
        if (const char* value = file("slipstream.app." + executable + "." + name); value && *value)
            return std::string(value);
    if (const char* value = file("slipstream." + name); value && *value) return std::string(value);
    return std::nullopt;
}

std::string executable_name() {
#ifdef __linux__
    // The file name the process was started as, as `ps` shows it, without its folder.
    return program_invocation_short_name ? program_invocation_short_name : "";
#else
    return "";
#endif
}

std::optional<std::string> lookup_setting(const std::string& name) {
    static const std::string executable = executable_name();
    return lookup_setting_in(
        name, executable, [](const std::string& key) { return static_cast<const char*>(std::getenv(key.c_str())); },
        [](const std::string& key) { return getLayerOption(key.c_str()); });
}

Settings read_settings() {
    std::vector<std::string> warnings;
    Settings s = parse_settings(lookup_setting, &warnings);
    set_log_level(s.log);
    // Once per process: the settings are read at every vkCreateInstance, and test suites
    // create hundreds of instances.
    static std::mutex mutex;
    static auto* warned = new std::set<std::string>();
    std::lock_guard lock(mutex);
    for (const std::string& w : warnings)
        if (warned->insert(w).second) log(LogLevel::Warn, "%s", w.c_str());
    return s;
}

std::vector<std::pair<std::string, std::string>> describe_settings(const Settings& s) {
    static const char* const kLevels[] = {"error", "warn", "info", "debug"};
    return {
        {"log", kLevels[int(s.log)]},
        {"log_messengers", s.log_messengers ? "on" : "off"},
        {"stats", s.stats ? "on" : "off"},
        {"stats_file", s.stats_file},
        {"spin", s.spin ? "on" : "off"},
        {"spin_us", std::to_string(s.spin_us)},
        {"spin_adaptive", s.spin_adaptive ? "on" : "off"},
        {"readback", s.readback == ReadbackMode::Off ? "off" : s.readback == ReadbackMode::Auto ? "auto" : "all-host-visible"},
        {"readback_defer", s.readback_defer ? "on" : "off"},
        {"readback_steer", s.readback_steer ? "on" : "off"},
        {"fuse", s.fuse ? "on" : "off"},
        {"batch_max", std::to_string(s.batch_max)},
        {"max_defer_us", std::to_string(s.max_defer_us)},
        {"fuse_barrier", s.fuse_barrier ? "on" : "off"},
        {"flusher_poll_us", std::to_string(s.flusher_poll_us)},
        {"lazy_record", s.lazy_record == LazyRecord::Auto ? "auto" : s.lazy_record == LazyRecord::On ? "on" : "off"},
        {"narrow_barriers", s.narrow_barriers ? "on" : "off"},
        {"narrow_history", s.narrow_history ? "on" : "off"},
        {"elide_barriers", s.elide_barriers ? "on" : "off"},
        {"elide_proof", s.elide_proof == ElideProof::On ? "on" : s.elide_proof == ElideProof::Off ? "off" : "trust-unknown"},
        {"fuse_trace", s.fuse_trace},
        {"object_pool", on_always_off(s.object_pool, s.object_pool_always)},
        {"object_pool_fences", std::to_string(s.object_pool_fences)},
        {"alloc_cache", on_always_off(s.alloc_cache, s.alloc_cache_always)},
        {"alloc_cache_mib", std::to_string(s.alloc_cache_mib)},
        {"alloc_cache_zero", s.alloc_cache_zero ? "on" : "off"},
        {"object_pool_timelines", std::to_string(s.object_pool_timelines)},
        {"arm", s.arm == ArmMode::Off ? "off" : s.arm == ArmMode::Timeline ? "timeline" : "event"},
        {"arm_deadline_us", std::to_string(s.arm_deadline_us)},
    };
}

}  // namespace slipstream
