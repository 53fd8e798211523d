// Slipstream's knobs. A setting NAME is read from the environment as VK_SLIPSTREAM_NAME and
// from vk_layer_settings.txt as slipstream.name; the environment wins. A bad value prints one
// warning naming the setting and what it accepts, and the default is used.
#pragma once

#include "core/log.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace slipstream {

enum class ReadbackMode { Off, Auto, AllHostVisible };
// Test-only: how barrier elision decides (on: only where footprints prove it; off: blindly,
// every fuse barrier after a batch's first; trust-unknown: hidden descriptor sets and
// address-reaching shaders taken at face value), to prove the tests catch a wrong elision.
enum class ElideProof { On, Off, TrustUnknown };
// Lazy recording (fusion): off: every command buffer is recorded into the driver as well as
// captured; on: fusable ones only as captures; auto: as on, except that one begun for a queue
// family whose queues wait for every submission on an idle GPU (latency mode) is recorded into
// the driver at vkEndCommandBuffer, from its capture, unless the batch's replay would narrow
// barriers of it (submit/flush_policy.h: record_at_end), so its submission goes straight to the driver.
enum class LazyRecord { Off, On, Auto };
// Armed launches (submit/armed_replay.h): off; timeline: the replay waits on a timeline value
// the host signals (allowed by the specification); event: it waits on a host-set event
// (outside the specification's forward-progress rule; for measurement).
enum class ArmMode { Off, Timeline, Event };

struct Settings {
    LogLevel log = LogLevel::Warn;
    bool log_messengers = true;  // also to the application's debug-utils messengers
    bool stats = false;       // print a summary per device at vkDestroyDevice / exit
    std::string stats_file;   // also write the summary as JSON here ("" = no file)
    bool spin = true;         // spin before blocking in waits; follow queue idleness
    uint32_t spin_us = 100;   // the spin budget
    bool spin_adaptive = true;  // stop spinning where waits are usually much longer
    ReadbackMode readback = ReadbackMode::Auto;  // move host-read memory to cached memory
    bool readback_defer = true;  // decide uncovered host-visible memory at its first use
    bool readback_steer = false;  // hide uncached host-visible types from readback buffers
    bool fuse = true;         // fuse small command buffers into few at submission
    uint32_t batch_max = 32;  // operations (dispatches, copies...) per fused batch
    uint32_t max_defer_us = 500;  // the longest a fused batch waits for more work
    bool fuse_barrier = true;  // a compute|transfer barrier in front of each fused command buffer
    uint32_t flusher_poll_us = 10;  // fusion: the flusher's look at running batches (0: block)
    LazyRecord lazy_record = LazyRecord::Auto;  // fusion: capture only (or, on the latency path, record at the end)
    bool narrow_barriers = true;  // fusion: ALL_COMMANDS barriers narrowed to the batch's stages
    bool narrow_history = true;   // test-only: the full barriers that keep narrowing correct
    bool elide_barriers = true;   // fusion: no fuse barrier between captures of disjoint memory
    ElideProof elide_proof = ElideProof::On;  // test-only
    std::string fuse_trace;   // a file for a line per fused submission and batch ("" = none)
    bool object_pool = true;  // keep destroyed fences and timeline semaphores for reuse instead of destroying them
    // ... even where the driver creates and destroys them for less than pooling costs ("always");
    // otherwise such objects go to the driver (objects/pool_cost.h, worth_pooling)
    bool object_pool_always = false;
    uint32_t object_pool_fences = 256;  // fences kept at most per device
    bool alloc_cache = true;       // keep plain memory the application frees and hand it out again
    // ... even where zeroing it for reuse costs more than the driver's allocation ("always");
    // otherwise such memory goes back to the driver (objects/alloc_cache.h, worth_keeping)
    bool alloc_cache_always = false;
    uint32_t alloc_cache_mib = 0;  // bytes kept at most per heap, in MiB (0: min(256 MiB, 5% of the heap))
    bool alloc_cache_zero = true;  // zero recycled memory before handing it out
    uint32_t object_pool_timelines = 64;  // timeline semaphores kept at most per device
    ArmMode arm = ArmMode::Off;      // armed launches on latency-mode queues (research: off)
    uint32_t arm_deadline_us = 2000;  // an armed replay nobody claims is released this late
};

// Description of one setting, for warnings, `slipstream info` and the README.
struct SettingSpec {
    const char* name;      // lower case, as in the settings file after "slipstream."
    const char* accepted;  // what values it takes
    const char* fallback;  // the default, as text
    const char* help;
};
const std::vector<SettingSpec>& setting_specs();

// Looks a setting up by its lower-case name; nullopt when it is not set.
using SettingLookup = std::function<std::optional<std::string>(const std::string& name)>;

// Parses every setting through `lookup`; each bad value adds one message to `warnings` and
// keeps the default. Pure: unit tests call it with a map.
Settings parse_settings(const SettingLookup& lookup, std::vector<std::string>* warnings);

// The environment first, then vk_layer_settings.txt (VK_LAYER_SETTINGS_PATH or the working
// directory). Prints each warning once through the log.
Settings read_settings();
std::optional<std::string> lookup_setting(const std::string& name);

// Where lookup_setting looks, in order: the environment's VK_SLIPSTREAM_NAME; the settings
// file's `slipstream.app.EXECUTABLE.name` (a setting for one program, by the file name it was
// started as); the file's `slipstream.name`. Pure: unit tests pass their own sources.
using TextSource = std::function<const char*(const std::string& key)>;
std::optional<std::string> lookup_setting_in(const std::string& name, const std::string& executable,
                                             const TextSource& environment, const TextSource& file);
// The running program's file name, without its folder ("" where unknown).
std::string executable_name();

// The settings as (name, value) text pairs, for `slipstream info` and the statistics.
std::vector<std::pair<std::string, std::string>> describe_settings(const Settings& s);

// "on"/"off"/"1"/"0"/"true"/"false"/"yes"/"no", any case.
std::optional<bool> parse_bool(const std::string& text);

}  // namespace slipstream
