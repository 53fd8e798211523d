// VK_LAYER_SLIPSTREAM_test_faults: a test-only layer (never installed) that sits UNDER Slipstream
// and makes chosen driver calls fail, the way a driver does when the device is lost, memory runs
// out or a wait times out, so that tests can check where those errors reach the application.
// Every call of Slipstream's own (its batches, its flusher thread, its fences) passes through here
// as well as the application's.
//
// Environment:
//   SLIPSTREAM_TEST_FAULTS=<entry>[;<entry>...]   what to fail (grammar below); unset: nothing
//   SLIPSTREAM_TEST_FAULTS_REPORT=<path>          JSON written at each vkDestroyDevice and at exit
// Both are read once, at the first vkCreateInstance of the process; the layer stays loaded
// (-z nodelete) so that devices count across instances.
//
// The report: {"devices": [...]}, one entry per device in creation order: "device" (its number),
// "faulted", "lost" and "lost_at" (the function whose fault lost it), "submits_after_lost"
// (submissions that reached this layer after the loss), "functions" (per function: "seen" calls,
// faults "injected", "lost_returned" answers of a sticky loss), "injected_by_result",
// "injected_off_thread" (faults injected on a thread other than the one that created the
// device: Slipstream's flusher) and "injected" (all).
//
// Grammar (spaces are ignored; a bad entry prints one warning naming it and is ignored):
//   <rule>   = <function><trigger>[=<result>]
//   <function> one of the functions below, or * for all of them (vkQueueSubmit2 also names
//            vkQueueSubmit2KHR, vkWaitSemaphores vkWaitSemaphoresKHR, vkGetSemaphoreCounterValue
//            its KHR alias: one counter each); vkQueueSubmit:fenced and vkQueueSubmit2:fenced
//            count only submissions that carry a fence (the application's last one before a
//            fence wait, or the batch of Slipstream's that carries its fence)
//   <trigger>  @N     the Nth call (from 1) of the function on a faulted device
//              @N+    the Nth call and every call after it
//              @N-M   calls N to M
//              %P     each call with probability P (0 < P <= 1), drawn from the seed
//   <result>   a VkResult name the function may return (list below); left out: one of them,
//              drawn from the seed per fault
//   options    seed=<integer>        the random draws' seed (default 1)
//              device=<N>|all        which devices, by creation order in the process from 1,
//                                    get faults (default 1: a later device works normally)
//              lost=sticky|once      sticky (default): once a fault returned
//                                    VK_ERROR_DEVICE_LOST, every later call that can return it
//                                    does, as on a real driver, and nothing more reaches the
//                                    driver's queues; once: only the faulted call fails
//   Example: SLIPSTREAM_TEST_FAULTS="vkQueueSubmit@3=VK_ERROR_DEVICE_LOST;vkWaitForFences%0.1=VK_TIMEOUT;seed=7"
//
// Functions and what they can be made to return:
//   vkQueueSubmit, vkQueueSubmit2       DEVICE_LOST, OUT_OF_HOST_MEMORY, OUT_OF_DEVICE_MEMORY
//   vkWaitForFences, vkWaitSemaphores   TIMEOUT, DEVICE_LOST, OUT_OF_HOST/DEVICE_MEMORY
//   vkGetFenceStatus                    NOT_READY, DEVICE_LOST, OUT_OF_HOST/DEVICE_MEMORY
//   vkGetSemaphoreCounterValue,
//   vkQueueWaitIdle, vkDeviceWaitIdle   DEVICE_LOST, OUT_OF_HOST/DEVICE_MEMORY
//   vkAllocateMemory, vkAllocateCommandBuffers, vkCreateFence, vkCreateSemaphore,
//   vkCreateCommandPool, vkBeginCommandBuffer, vkEndCommandBuffer
//                                       OUT_OF_HOST_MEMORY, OUT_OF_DEVICE_MEMORY
// A faulted call does not reach the driver (a failed submission submits nothing; a failed
// creation creates nothing and returns null handles). VK_TIMEOUT is injected only into waits
// with a finite timeout (an infinite one cannot time out): a rule for it counts only those calls.
// It returns at once, as a driver returning early would; VK_NOT_READY from vkGetFenceStatus is
// a spurious "not yet". Calls of several threads count in the order they reach this layer.
//
// A lost device (sticky): before it answers, the layer lets the work the driver already has
// finish (vkQueueWaitIdle on each of the device's queues, each under that queue's lock, which
// every submission here takes), so that an application that destroys its objects after the
// loss does not pull them from under the driver; from then on vkQueueSubmit*, the waits, the
// status queries, vkGetQueryPoolResults, vkGetEventStatus and vkQueueBindSparse return
// VK_ERROR_DEVICE_LOST without calling down, and submissions that still arrive are counted
// ("submits_after_lost").
#include <vulkan/vk_layer.h>
#include <vulkan/vulkan.h>

#include "test_layer.h"

#include <atomic>
#include <condition_variable>
#include <cerrno>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

namespace {

using namespace slipstream::test_layer;

constexpr const char* kLayerName = "VK_LAYER_SLIPSTREAM_test_faults";


__attribute__((format(printf, 1, 2))) void message(const char* fmt, ...) {
    char text[1024];
    va_list args;
    va_start(args, fmt);
    std::vsnprintf(text, sizeof text, fmt, args);
    va_end(args);
    std::fprintf(stderr, "%s: %s\n", kLayerName, text);
}

// ---- the functions that can fail -----------------------------------------------------------

enum class Fn : uint8_t {
    QueueSubmit,
    QueueSubmit2,
    WaitForFences,
    WaitSemaphores,
    GetFenceStatus,
    GetSemaphoreCounterValue,
    QueueWaitIdle,
    DeviceWaitIdle,
    AllocateMemory,
    AllocateCommandBuffers,
    CreateFence,
    CreateSemaphore,
    CreateCommandPool,
    BeginCommandBuffer,
    EndCommandBuffer,
    Count
};
constexpr size_t kFnCount = size_t(Fn::Count);

constexpr VkResult kSubmitResults[] = {VK_ERROR_DEVICE_LOST, VK_ERROR_OUT_OF_HOST_MEMORY,
                                       VK_ERROR_OUT_OF_DEVICE_MEMORY};
constexpr VkResult kWaitResults[] = {VK_TIMEOUT, VK_ERROR_DEVICE_LOST, VK_ERROR_OUT_OF_HOST_MEMORY,
                                     VK_ERROR_OUT_OF_DEVICE_MEMORY};
constexpr VkResult kStatusResults[] = {VK_NOT_READY, VK_ERROR_DEVICE_LOST, VK_ERROR_OUT_OF_HOST_MEMORY,
                                       VK_ERROR_OUT_OF_DEVICE_MEMORY};
constexpr VkResult kMemoryResults[] = {VK_ERROR_OUT_OF_HOST_MEMORY, VK_ERROR_OUT_OF_DEVICE_MEMORY};

struct FnInfo {
    const char* name;
    const char* alias;  // the KHR name counted with it, or null
    const VkResult* results;
    size_t result_count;
};

template <size_t N>
constexpr FnInfo fn_info(const char* name, const char* alias, const VkResult (&results)[N]) {
    return {name, alias, results, N};
}

const FnInfo kFns[kFnCount] = {
    fn_info("vkQueueSubmit", nullptr, kSubmitResults),
    fn_info("vkQueueSubmit2", "vkQueueSubmit2KHR", kSubmitResults),
    fn_info("vkWaitForFences", nullptr, kWaitResults),
    fn_info("vkWaitSemaphores", "vkWaitSemaphoresKHR", kWaitResults),
    fn_info("vkGetFenceStatus", nullptr, kStatusResults),
    fn_info("vkGetSemaphoreCounterValue", "vkGetSemaphoreCounterValueKHR", kSubmitResults),
    fn_info("vkQueueWaitIdle", nullptr, kSubmitResults),
    fn_info("vkDeviceWaitIdle", nullptr, kSubmitResults),
    fn_info("vkAllocateMemory", nullptr, kMemoryResults),
    fn_info("vkAllocateCommandBuffers", nullptr, kMemoryResults),
    fn_info("vkCreateFence", nullptr, kMemoryResults),
    fn_info("vkCreateSemaphore", nullptr, kMemoryResults),
    fn_info("vkCreateCommandPool", nullptr, kMemoryResults),
    fn_info("vkBeginCommandBuffer", nullptr, kMemoryResults),
    fn_info("vkEndCommandBuffer", nullptr, kMemoryResults),
};

bool fn_by_name(const std::string& name, Fn* out) {
    for (size_t i = 0; i < kFnCount; ++i) {
        if (name == kFns[i].name || (kFns[i].alias && name == kFns[i].alias)) {
            *out = Fn(i);
            return true;
        }
    }
    return false;
}

const char* result_name(VkResult r) {
    switch (r) {
    case VK_SUCCESS: return "VK_SUCCESS";
    case VK_NOT_READY: return "VK_NOT_READY";
    case VK_TIMEOUT: return "VK_TIMEOUT";
    case VK_ERROR_OUT_OF_HOST_MEMORY: return "VK_ERROR_OUT_OF_HOST_MEMORY";
    case VK_ERROR_OUT_OF_DEVICE_MEMORY: return "VK_ERROR_OUT_OF_DEVICE_MEMORY";
    case VK_ERROR_DEVICE_LOST: return "VK_ERROR_DEVICE_LOST";
    default: return "?";
    }
}

constexpr VkResult kInjectable[] = {VK_NOT_READY, VK_TIMEOUT, VK_ERROR_OUT_OF_HOST_MEMORY,
                                    VK_ERROR_OUT_OF_DEVICE_MEMORY, VK_ERROR_DEVICE_LOST};

size_t injectable_index(VkResult r) {
    for (size_t i = 0; i < std::size(kInjectable); ++i)
        if (kInjectable[i] == r) return i;
    return 0;
}

bool result_by_name(const std::string& name, VkResult* out) {
    for (VkResult r : kInjectable) {
        if (name == result_name(r)) {
            *out = r;
            return true;
        }
    }
    return false;
}

bool allowed(Fn fn, VkResult r) {
    const FnInfo& f = kFns[size_t(fn)];
    for (size_t i = 0; i < f.result_count; ++i)
        if (f.results[i] == r) return true;
    return false;
}

// ---- configuration -----------------------------------------------------------------------------

struct Rule {
    std::string text;  // as written, for messages
    Fn fn = Fn::QueueSubmit;
    bool fenced_only = false;  // counts only submissions with a fence
    enum class Kind { Nth, From, Range, Probability } kind = Kind::Nth;
    uint64_t first = 0, last = 0;  // Nth: first; From: first..; Range: first..last
    double probability = 0;
    VkResult result = VK_SUCCESS;  // VK_SUCCESS: drawn per fault
};

struct Config {
    std::vector<Rule> rules;
    uint64_t seed = 1;
    uint32_t device = 1;  // 0: all
    bool sticky_lost = true;
    std::string report_path;
};

std::string strip(const std::string& s) {
    std::string out;
    for (char c : s)
        if (c != ' ' && c != '\t' && c != '\n') out += c;
    return out;
}

bool parse_u64(const std::string& text, uint64_t* out) {
    if (text.empty() || text[0] < '0' || text[0] > '9') return false;
    char* end = nullptr;
    errno = 0;
    const unsigned long long v = std::strtoull(text.c_str(), &end, 10);
    if (errno || *end) return false;
    *out = v;
    return true;
}

// One rule, or false with *why set.
bool parse_rule(const std::string& entry, std::vector<Rule>* rules, std::string* why) {
    const size_t trigger = entry.find_first_of("@%");
    if (trigger == std::string::npos) {
        *why = "expected <function>@N, @N+, @N-M or %P";
        return false;
    }
    std::string name = entry.substr(0, trigger);
    Rule rule;
    if (const size_t colon = name.find(':'); colon != std::string::npos) {
        if (name.substr(colon) != ":fenced" || (name.substr(0, colon) != "vkQueueSubmit" &&
                                                name.substr(0, colon).rfind("vkQueueSubmit2", 0) != 0)) {
            *why = "only vkQueueSubmit and vkQueueSubmit2 take a qualifier, :fenced";
            return false;
        }
        rule.fenced_only = true;
        name = name.substr(0, colon);
    }
    std::vector<Fn> fns;
    if (name == "*") {
        for (size_t i = 0; i < kFnCount; ++i) fns.push_back(Fn(i));
    } else {
        Fn fn;
        if (!fn_by_name(name, &fn)) {
            *why = "'" + name + "' is not a function this layer can fail";
            return false;
        }
        fns.push_back(fn);
    }
    const size_t equals = entry.find('=', trigger);
    const std::string when = entry.substr(trigger + 1, equals == std::string::npos ? std::string::npos : equals - trigger - 1);
    rule.text = entry;
    if (entry[trigger] == '%') {
        char* end = nullptr;
        errno = 0;
        rule.probability = when.empty() ? 0 : std::strtod(when.c_str(), &end);
        if (when.empty() || errno || *end || !(rule.probability > 0 && rule.probability <= 1)) {
            *why = "a probability is a number in (0, 1]";
            return false;
        }
        rule.kind = Rule::Kind::Probability;
    } else if (!when.empty() && when.back() == '+') {
        rule.kind = Rule::Kind::From;
        if (!parse_u64(when.substr(0, when.size() - 1), &rule.first) || rule.first == 0) {
            *why = "@N+ needs N >= 1";
            return false;
        }
    } else if (const size_t dash = when.find('-'); dash != std::string::npos) {
        rule.kind = Rule::Kind::Range;
        if (!parse_u64(when.substr(0, dash), &rule.first) || !parse_u64(when.substr(dash + 1), &rule.last) ||
            rule.first == 0 || rule.last < rule.first) {
            *why = "@N-M needs 1 <= N <= M";
            return false;
        }
    } else {
        rule.kind = Rule::Kind::Nth;
        if (!parse_u64(when, &rule.first) || rule.first == 0) {
            *why = "@N needs N >= 1";
            return false;
        }
    }
    if (equals != std::string::npos) {
        const std::string result = entry.substr(equals + 1);
        if (!result_by_name(result, &rule.result)) {
            *why = "'" + result + "' is not a result this layer injects";
            return false;
        }
        for (Fn fn : fns) {
            if (!allowed(fn, rule.result)) {
                *why = std::string(kFns[size_t(fn)].name) + " cannot return " + result;
                return false;
            }
        }
    }
    for (Fn fn : fns) {
        rule.fn = fn;
        rules->push_back(rule);
    }
    return true;
}

Config read_config() {
    Config config;
    if (const char* path = std::getenv("SLIPSTREAM_TEST_FAULTS_REPORT")) config.report_path = path;
    const char* spec = std::getenv("SLIPSTREAM_TEST_FAULTS");
    if (!spec) return config;
    std::string text(spec);
    size_t start = 0;
    while (start <= text.size()) {
        const size_t end = std::min(text.find(';', start), text.size());
        const std::string entry = strip(text.substr(start, end - start));
        start = end + 1;
        if (entry.empty()) continue;
        std::string why;
        bool ok = true;
        if (entry.rfind("seed=", 0) == 0) {
            ok = parse_u64(entry.substr(5), &config.seed);
            why = "seed=<integer>";
        } else if (entry.rfind("device=", 0) == 0) {
            uint64_t n = 0;
            if (entry.substr(7) == "all") config.device = 0;
            else if (parse_u64(entry.substr(7), &n) && n >= 1 && n <= UINT32_MAX) config.device = uint32_t(n);
            else ok = false;
            why = "device=<N>|all";
        } else if (entry.rfind("lost=", 0) == 0) {
            const std::string v = entry.substr(5);
            ok = v == "sticky" || v == "once";
            if (ok) config.sticky_lost = v == "sticky";
            why = "lost=sticky|once";
        } else {
            ok = parse_rule(entry, &config.rules, &why);
        }
        if (!ok) message("ignoring SLIPSTREAM_TEST_FAULTS entry '%s': %s", entry.c_str(), why.c_str());
    }
    return config;
}

// ---- state ---------------------------------------------------------------------------------------

struct QueueState {
    VkQueue queue = VK_NULL_HANDLE;
    std::mutex mutex;  // every submission and queue wait of this layer's holds it
};

struct FnCounts {
    uint64_t seen = 0, injected = 0, lost_returned = 0;
};

struct DeviceState : DeviceBase {
    VkDevice device = VK_NULL_HANDLE;
    uint32_t index = 0;  // in creation order, from 1
    bool faulted = false;
    std::atomic<bool> lost{false};

    std::mutex mutex;  // guards everything below
    std::vector<std::unique_ptr<QueueState>> queues;
    std::vector<uint64_t> rule_calls;  // eligible calls per rule
    uint64_t rng = 0;
    FnCounts counts[kFnCount];
    uint64_t submits_after_lost = 0;
    uint64_t injected_off_thread = 0;  // on a thread other than the one that created the device
    std::thread::id creator;
    uint64_t injected_by_result[5] = {};  // kInjectable's order
    std::string lost_at;  // the function whose fault lost the device
    bool drained = false;  // lost, and the work the driver had is done
    std::condition_variable drained_cv;
    std::mutex lose_mutex;  // one loss at a time (taken before any queue's mutex)
};

LayerState<DeviceState> g_layer;  // its mutex guards the configuration and the report too
Config g_config;
bool g_config_read = false;
uint32_t g_devices_created = 0;
std::vector<std::string> g_finished;  // report entries of destroyed devices

QueueState* queue_state(DeviceState& d, VkQueue queue) {
    std::lock_guard<std::mutex> lock(d.mutex);
    for (auto& q : d.queues)
        if (q->queue == queue) return q.get();
    d.queues.push_back(std::make_unique<QueueState>());
    d.queues.back()->queue = queue;
    return d.queues.back().get();
}

uint64_t next_random(uint64_t& state) {  // splitmix64
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

// ---- report ----------------------------------------------------------------------------------------

// Caller holds d.mutex.
std::string device_entry(const DeviceState& d) {
    std::string json = "    {\"device\": " + std::to_string(d.index) + ", \"faulted\": " +
                       (d.faulted ? "true" : "false") + ", \"lost\": " + (d.lost ? "true" : "false") +
                       ", \"lost_at\": \"" + d.lost_at + "\", \"submits_after_lost\": " +
                       std::to_string(d.submits_after_lost) + ",\n     \"functions\": {";
    uint64_t injected = 0;
    bool first = true;
    for (size_t i = 0; i < kFnCount; ++i) {
        const FnCounts& c = d.counts[i];
        injected += c.injected;
        char item[256];
        std::snprintf(item, sizeof item,
                      "%s\n       \"%s\": {\"seen\": %" PRIu64 ", \"injected\": %" PRIu64
                      ", \"lost_returned\": %" PRIu64 "}",
                      first ? "" : ",", kFns[i].name, c.seen, c.injected, c.lost_returned);
        json += item;
        first = false;
    }
    json += "},\n     \"injected_by_result\": {";
    for (size_t i = 0; i < std::size(kInjectable); ++i)
        json += std::string(i ? ", " : "") + "\"" + result_name(kInjectable[i]) + "\": " + std::to_string(d.injected_by_result[i]);
    json += "},\n     \"injected_off_thread\": " + std::to_string(d.injected_off_thread) +
            ",\n     \"injected\": " + std::to_string(injected) + "}";
    return json;
}

// Caller holds g_layer.mutex: every destroyed device, then the live ones.
void write_report_locked() {
    if (g_config.report_path.empty()) return;
    std::vector<std::string> entries = g_finished;
    for (auto& [key, d] : g_layer.devices) {
        std::lock_guard<std::mutex> lock(d->mutex);
        entries.push_back(device_entry(*d));
    }
    std::string json = "{\"layer\": \"" + std::string(kLayerName) + "\", \"rules\": " +
                       std::to_string(g_config.rules.size()) + ", \"devices\": [\n";
    for (size_t i = 0; i < entries.size(); ++i) json += entries[i] + (i + 1 < entries.size() ? ",\n" : "\n");
    json += "]}\n";
    if (!write_whole_file(g_config.report_path, json))
        message("cannot write the report to '%s'", g_config.report_path.c_str());
}

void write_report_at_exit() {
    std::lock_guard<std::mutex> lock(g_layer.mutex);
    write_report_locked();
}

// ---- injection ---------------------------------------------------------------------------------------

// Counts a call of `fn` and says whether it fails, with what. `finite_timeout`: the call is a wait
// with a finite timeout (or not a wait: then VK_TIMEOUT is never drawn, nor allowed by a rule).
// `fenced`: a submission with a fence.
VkResult decide(DeviceState& d, Fn fn, bool finite_timeout = false, bool fenced = false) {
    std::lock_guard<std::mutex> lock(d.mutex);
    FnCounts& counts = d.counts[size_t(fn)];
    ++counts.seen;
    if (!d.faulted) return VK_SUCCESS;
    const FnInfo& info = kFns[size_t(fn)];
    VkResult chosen = VK_SUCCESS;
    for (size_t i = 0; i < g_config.rules.size(); ++i) {
        const Rule& rule = g_config.rules[i];
        if (rule.fn != fn) continue;
        if (rule.result == VK_TIMEOUT && !finite_timeout) continue;  // cannot time out: not counted
        if (rule.fenced_only && !fenced) continue;
        const uint64_t n = ++d.rule_calls[i];
        bool fire = false;
        switch (rule.kind) {
        case Rule::Kind::Nth: fire = n == rule.first; break;
        case Rule::Kind::From: fire = n >= rule.first; break;
        case Rule::Kind::Range: fire = n >= rule.first && n <= rule.last; break;
        case Rule::Kind::Probability:
            fire = double(next_random(d.rng) >> 11) * 0x1.0p-53 < rule.probability;
            break;
        }
        if (!fire || chosen != VK_SUCCESS) continue;
        chosen = rule.result;
        if (chosen == VK_SUCCESS) {
            // Drawn from what the function may return (never VK_TIMEOUT for an infinite wait).
            std::vector<VkResult> pool;
            for (size_t k = 0; k < info.result_count; ++k)
                if (info.results[k] != VK_TIMEOUT || finite_timeout) pool.push_back(info.results[k]);
            chosen = pool[next_random(d.rng) % pool.size()];
        }
    }
    if (chosen != VK_SUCCESS) {
        ++counts.injected;
        ++d.injected_by_result[injectable_index(chosen)];
        if (std::this_thread::get_id() != d.creator) ++d.injected_off_thread;
    }
    return chosen;
}

// A sticky loss answers a call that can return VK_ERROR_DEVICE_LOST, once the work the driver had
// is done (the application may free everything it used the moment it hears of the loss). The
// caller holds no queue lock of this layer's.
void wait_drained(DeviceState& d, std::unique_lock<std::mutex>& lock) {
    d.drained_cv.wait(lock, [&] { return d.drained; });
}

void wait_drained(DeviceState& d) {
    std::unique_lock<std::mutex> lock(d.mutex);
    wait_drained(d, lock);
}

bool answer_lost(DeviceState& d, Fn fn, bool submission = false) {
    if (!d.lost.load(std::memory_order_acquire)) return false;
    std::unique_lock<std::mutex> lock(d.mutex);
    wait_drained(d, lock);
    ++d.counts[size_t(fn)].seen;
    ++d.counts[size_t(fn)].lost_returned;
    if (submission) ++d.submits_after_lost;
    return true;
}

// The device is lost (sticky): what the driver has runs to its end, then nothing more reaches it.
// No queue lock of this layer's may be held by the caller.
void lose(DeviceState& d, Fn at) {
    std::lock_guard<std::mutex> lose_lock(d.lose_mutex);
    if (d.lost.load(std::memory_order_acquire)) return;
    std::vector<QueueState*> queues;
    {
        std::lock_guard<std::mutex> lock(d.mutex);
        d.lost_at = kFns[size_t(at)].name;
        for (auto& q : d.queues) queues.push_back(q.get());
    }
    d.lost.store(true, std::memory_order_release);  // submissions that take a queue lock after this stop
    for (QueueState* q : queues) {
        std::lock_guard<std::mutex> lock(q->mutex);
        d.dispatch.QueueWaitIdle(q->queue);
    }
    std::lock_guard<std::mutex> lock(d.mutex);
    d.drained = true;
    d.drained_cv.notify_all();
}

// The result of a faulted call, after a loss where it is one.
VkResult injected(DeviceState& d, Fn fn, VkResult r) {
    if (r == VK_ERROR_DEVICE_LOST && g_config.sticky_lost) lose(d, fn);
    return r;
}

// ---- instance ----------------------------------------------------------------------------------------

VKAPI_ATTR VkResult VKAPI_CALL CreateInstance(const VkInstanceCreateInfo* pCreateInfo,
                                              const VkAllocationCallbacks* pAllocator, VkInstance* pInstance) {
    {
        std::lock_guard<std::mutex> lock(g_layer.mutex);
        if (!g_config_read) {
            g_config = read_config();
            g_config_read = true;
            std::atexit(write_report_at_exit);
        }
    }
    return g_layer.create_instance(pCreateInfo, pAllocator, pInstance);
}

VKAPI_ATTR void VKAPI_CALL DestroyInstance(VkInstance instance, const VkAllocationCallbacks* pAllocator) {
    g_layer.destroy_instance(instance, pAllocator);
}

// ---- device ------------------------------------------------------------------------------------------

VKAPI_ATTR VkResult VKAPI_CALL CreateDevice(VkPhysicalDevice physicalDevice, const VkDeviceCreateInfo* pCreateInfo,
                                            const VkAllocationCallbacks* pAllocator, VkDevice* pDevice) {
    auto init = [](DeviceState& state, VkDevice device) {  // with g_layer.mutex held
        state.device = device;
        state.index = ++g_devices_created;
        state.faulted = !g_config.rules.empty() && (g_config.device == 0 || g_config.device == state.index);
        state.rule_calls.assign(g_config.rules.size(), 0);
        state.rng = g_config.seed * 0x9e3779b97f4a7c15ull + state.index;
        state.creator = std::this_thread::get_id();
    };
    return g_layer.create_device(physicalDevice, pCreateInfo, pAllocator, pDevice, std::make_unique<DeviceState>(),
                                 init);
}

VKAPI_ATTR void VKAPI_CALL DestroyDevice(VkDevice device, const VkAllocationCallbacks* pAllocator) {
    // After a loss the application could not wait; lose() drained the queues and nothing
    // reached them since, but make sure.
    if (DeviceState* d = device ? g_layer.of(device) : nullptr; d && d->lost) d->dispatch.DeviceWaitIdle(device);
    g_layer.destroy_device(device, pAllocator, [](DeviceState& d) {
        std::lock_guard<std::mutex> device_lock(d.mutex);
        g_finished.push_back(device_entry(d));
    });
    std::lock_guard<std::mutex> lock(g_layer.mutex);
    write_report_locked();
}

VKAPI_ATTR void VKAPI_CALL GetDeviceQueue(VkDevice device, uint32_t family, uint32_t index, VkQueue* pQueue) {
    DeviceState* d = g_layer.device(key_of(device));
    d->dispatch.GetDeviceQueue(device, family, index, pQueue);
    if (*pQueue) queue_state(*d, *pQueue);
}

VKAPI_ATTR void VKAPI_CALL GetDeviceQueue2(VkDevice device, const VkDeviceQueueInfo2* pInfo, VkQueue* pQueue) {
    DeviceState* d = g_layer.device(key_of(device));
    d->dispatch.GetDeviceQueue2(device, pInfo, pQueue);
    if (*pQueue) queue_state(*d, *pQueue);
}

// ---- submissions and waits ---------------------------------------------------------------------------

template <typename Call>
VkResult queue_call(VkQueue queue, Fn fn, bool submission, Call&& call, bool fenced = false) {
    DeviceState* d = g_layer.device(key_of(queue));
    QueueState* q = queue_state(*d, queue);
    VkResult r = VK_SUCCESS;
    bool lost = false;
    {
        std::lock_guard<std::mutex> lock(q->mutex);
        lost = d->lost.load(std::memory_order_acquire);
        if (!lost) {
            r = decide(*d, fn, false, fenced);
            if (r == VK_SUCCESS) return call(*d);
        }
    }
    // Outside the queue lock: a loss drains every queue under its lock.
    if (lost && answer_lost(*d, fn, submission)) return VK_ERROR_DEVICE_LOST;
    return injected(*d, fn, r);
}

VKAPI_ATTR VkResult VKAPI_CALL QueueSubmit(VkQueue queue, uint32_t count, const VkSubmitInfo* submits, VkFence fence) {
    return queue_call(queue, Fn::QueueSubmit, true,
                      [&](DeviceState& d) { return d.dispatch.QueueSubmit(queue, count, submits, fence); }, fence != VK_NULL_HANDLE);
}

VKAPI_ATTR VkResult VKAPI_CALL QueueSubmit2(VkQueue queue, uint32_t count, const VkSubmitInfo2* submits, VkFence fence) {
    return queue_call(queue, Fn::QueueSubmit2, true,
                      [&](DeviceState& d) { return d.dispatch.QueueSubmit2(queue, count, submits, fence); }, fence != VK_NULL_HANDLE);
}

VKAPI_ATTR VkResult VKAPI_CALL QueueSubmit2KHR(VkQueue queue, uint32_t count, const VkSubmitInfo2* submits,
                                               VkFence fence) {
    return queue_call(queue, Fn::QueueSubmit2, true,
                      [&](DeviceState& d) { return d.dispatch.QueueSubmit2KHR(queue, count, submits, fence); },
                      fence != VK_NULL_HANDLE);
}

VKAPI_ATTR VkResult VKAPI_CALL QueueWaitIdle(VkQueue queue) {
    return queue_call(queue, Fn::QueueWaitIdle, false, [&](DeviceState& d) { return d.dispatch.QueueWaitIdle(queue); });
}

VKAPI_ATTR VkResult VKAPI_CALL QueueBindSparse(VkQueue queue, uint32_t count, const VkBindSparseInfo* binds,
                                               VkFence fence) {
    DeviceState* d = g_layer.device(key_of(queue));
    QueueState* q = queue_state(*d, queue);
    {
        std::lock_guard<std::mutex> lock(q->mutex);
        if (!d->lost) return d->dispatch.QueueBindSparse(queue, count, binds, fence);
    }
    wait_drained(*d);
    return VK_ERROR_DEVICE_LOST;
}

// A device-level call: a sticky loss answers it, else a fault, else the driver.
template <typename Call>
VkResult device_call(DeviceState& d, Fn fn, bool finite_timeout, Call&& call) {
    if (answer_lost(d, fn)) return VK_ERROR_DEVICE_LOST;
    const VkResult r = decide(d, fn, finite_timeout);
    if (r != VK_SUCCESS) return injected(d, fn, r);
    return call();
}

VKAPI_ATTR VkResult VKAPI_CALL DeviceWaitIdle(VkDevice device) {
    DeviceState* d = g_layer.device(key_of(device));
    return device_call(*d, Fn::DeviceWaitIdle, false, [&] { return d->dispatch.DeviceWaitIdle(device); });
}

VKAPI_ATTR VkResult VKAPI_CALL WaitForFences(VkDevice device, uint32_t count, const VkFence* fences, VkBool32 wait_all,
                                             uint64_t timeout) {
    DeviceState* d = g_layer.device(key_of(device));
    return device_call(*d, Fn::WaitForFences, timeout != UINT64_MAX,
                       [&] { return d->dispatch.WaitForFences(device, count, fences, wait_all, timeout); });
}

VKAPI_ATTR VkResult VKAPI_CALL GetFenceStatus(VkDevice device, VkFence fence) {
    DeviceState* d = g_layer.device(key_of(device));
    return device_call(*d, Fn::GetFenceStatus, false, [&] { return d->dispatch.GetFenceStatus(device, fence); });
}

VKAPI_ATTR VkResult VKAPI_CALL WaitSemaphores(VkDevice device, const VkSemaphoreWaitInfo* info, uint64_t timeout) {
    DeviceState* d = g_layer.device(key_of(device));
    return device_call(*d, Fn::WaitSemaphores, timeout != UINT64_MAX,
                       [&] { return d->dispatch.WaitSemaphores(device, info, timeout); });
}

VKAPI_ATTR VkResult VKAPI_CALL WaitSemaphoresKHR(VkDevice device, const VkSemaphoreWaitInfo* info, uint64_t timeout) {
    DeviceState* d = g_layer.device(key_of(device));
    return device_call(*d, Fn::WaitSemaphores, timeout != UINT64_MAX,
                       [&] { return d->dispatch.WaitSemaphoresKHR(device, info, timeout); });
}

VKAPI_ATTR VkResult VKAPI_CALL GetSemaphoreCounterValue(VkDevice device, VkSemaphore semaphore, uint64_t* value) {
    DeviceState* d = g_layer.device(key_of(device));
    return device_call(*d, Fn::GetSemaphoreCounterValue, false,
                       [&] { return d->dispatch.GetSemaphoreCounterValue(device, semaphore, value); });
}

VKAPI_ATTR VkResult VKAPI_CALL GetSemaphoreCounterValueKHR(VkDevice device, VkSemaphore semaphore, uint64_t* value) {
    DeviceState* d = g_layer.device(key_of(device));
    return device_call(*d, Fn::GetSemaphoreCounterValue, false,
                       [&] { return d->dispatch.GetSemaphoreCounterValueKHR(device, semaphore, value); });
}

VKAPI_ATTR VkResult VKAPI_CALL GetQueryPoolResults(VkDevice device, VkQueryPool pool, uint32_t first, uint32_t count,
                                                   size_t size, void* data, VkDeviceSize stride,
                                                   VkQueryResultFlags flags) {
    DeviceState* d = g_layer.device(key_of(device));
    if (d->lost) {
        wait_drained(*d);
        return VK_ERROR_DEVICE_LOST;
    }
    return d->dispatch.GetQueryPoolResults(device, pool, first, count, size, data, stride, flags);
}

VKAPI_ATTR VkResult VKAPI_CALL GetEventStatus(VkDevice device, VkEvent event) {
    DeviceState* d = g_layer.device(key_of(device));
    if (d->lost) {
        wait_drained(*d);
        return VK_ERROR_DEVICE_LOST;
    }
    return d->dispatch.GetEventStatus(device, event);
}

// ---- creation ----------------------------------------------------------------------------------------

// A creation that fails creates nothing: its handle is null.
template <typename Handle, typename Call>
VkResult create(VkDevice device, Fn fn, Handle* out, Call&& call) {
    DeviceState* d = g_layer.device(key_of(device));
    if (VkResult r = decide(*d, fn); r != VK_SUCCESS) {
        *out = VK_NULL_HANDLE;
        return r;
    }
    return call(*d);
}

VKAPI_ATTR VkResult VKAPI_CALL AllocateMemory(VkDevice device, const VkMemoryAllocateInfo* info,
                                              const VkAllocationCallbacks* allocator, VkDeviceMemory* memory) {
    return create(device, Fn::AllocateMemory, memory,
                  [&](DeviceState& d) { return d.dispatch.AllocateMemory(device, info, allocator, memory); });
}

VKAPI_ATTR VkResult VKAPI_CALL AllocateCommandBuffers(VkDevice device, const VkCommandBufferAllocateInfo* info,
                                                      VkCommandBuffer* cbs) {
    DeviceState* d = g_layer.device(key_of(device));
    if (VkResult r = decide(*d, Fn::AllocateCommandBuffers); r != VK_SUCCESS) {
        for (uint32_t i = 0; i < info->commandBufferCount; ++i) cbs[i] = VK_NULL_HANDLE;  // as the spec requires
        return r;
    }
    return d->dispatch.AllocateCommandBuffers(device, info, cbs);
}

VKAPI_ATTR VkResult VKAPI_CALL CreateFence(VkDevice device, const VkFenceCreateInfo* info,
                                           const VkAllocationCallbacks* allocator, VkFence* fence) {
    return create(device, Fn::CreateFence, fence,
                  [&](DeviceState& d) { return d.dispatch.CreateFence(device, info, allocator, fence); });
}

VKAPI_ATTR VkResult VKAPI_CALL CreateSemaphore(VkDevice device, const VkSemaphoreCreateInfo* info,
                                               const VkAllocationCallbacks* allocator, VkSemaphore* semaphore) {
    return create(device, Fn::CreateSemaphore, semaphore,
                  [&](DeviceState& d) { return d.dispatch.CreateSemaphore(device, info, allocator, semaphore); });
}

VKAPI_ATTR VkResult VKAPI_CALL CreateCommandPool(VkDevice device, const VkCommandPoolCreateInfo* info,
                                                 const VkAllocationCallbacks* allocator, VkCommandPool* pool) {
    return create(device, Fn::CreateCommandPool, pool,
                  [&](DeviceState& d) { return d.dispatch.CreateCommandPool(device, info, allocator, pool); });
}

VKAPI_ATTR VkResult VKAPI_CALL BeginCommandBuffer(VkCommandBuffer cb, const VkCommandBufferBeginInfo* info) {
    DeviceState* d = g_layer.device(key_of(cb));
    if (VkResult r = decide(*d, Fn::BeginCommandBuffer); r != VK_SUCCESS) return r;
    return d->dispatch.BeginCommandBuffer(cb, info);
}

VKAPI_ATTR VkResult VKAPI_CALL EndCommandBuffer(VkCommandBuffer cb) {
    DeviceState* d = g_layer.device(key_of(cb));
    if (VkResult r = decide(*d, Fn::EndCommandBuffer); r != VK_SUCCESS) {
        // The driver's recording ends anyway (the command buffer becomes invalid, not stuck in
        // the recording state), as a failed vkEndCommandBuffer leaves it.
        d->dispatch.EndCommandBuffer(cb);
        return r;
    }
    return d->dispatch.EndCommandBuffer(cb);
}

// ---- entry-point tables ------------------------------------------------------------------------------

#define HOOK(name) {"vk" #name, reinterpret_cast<PFN_vkVoidFunction>(name)}

const Hook kInstanceHooks[] = {
    HOOK(CreateInstance),
    HOOK(DestroyInstance),
    HOOK(CreateDevice),
};

const Hook kDeviceHooks[] = {
    HOOK(DestroyDevice),
    HOOK(GetDeviceQueue),
    HOOK(GetDeviceQueue2),
    HOOK(QueueSubmit),
    HOOK(QueueSubmit2),
    HOOK(QueueSubmit2KHR),
    HOOK(QueueWaitIdle),
    HOOK(QueueBindSparse),
    HOOK(DeviceWaitIdle),
    HOOK(WaitForFences),
    HOOK(GetFenceStatus),
    HOOK(WaitSemaphores),
    HOOK(WaitSemaphoresKHR),
    HOOK(GetSemaphoreCounterValue),
    HOOK(GetSemaphoreCounterValueKHR),
    HOOK(GetQueryPoolResults),
    HOOK(GetEventStatus),
    HOOK(AllocateMemory),
    HOOK(AllocateCommandBuffers),
    HOOK(CreateFence),
    HOOK(CreateSemaphore),
    HOOK(CreateCommandPool),
    HOOK(BeginCommandBuffer),
    HOOK(EndCommandBuffer),
};

#undef HOOK

}  // namespace

SLIPSTREAM_TEST_LAYER_ENTRY_POINTS(g_layer, kInstanceHooks, kDeviceHooks)
