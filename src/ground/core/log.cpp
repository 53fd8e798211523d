#include "core/log.h"

#include <atomic>
#include <cstdio>
#include <mutex>
#include <string>
#include <vector>

namespace slipstream {

static std::atomic<int> g_level{int(LogLevel::Warn)};

namespace {
struct Sink {
    const void* key;
    LogSink sink;
    void* context;
};
std::mutex& sinks_mutex() {
    static std::mutex m;
    return m;
}
std::vector<Sink>& sinks() {
    static std::vector<Sink> v;
    return v;
}
std::atomic<size_t> g_sink_count{0};  // one load per message while there is none
thread_local int t_loader_locked = 0;
struct Held {
    LogLevel level;
    std::string message;
};
constexpr size_t kMaxHeld = 64;
std::vector<Held>& held() {  // (sinks_mutex())
    static std::vector<Held> v;
    return v;
}
void deliver_held_locked() {
    for (const Held& h : held())
        for (const Sink& s : sinks()) s.sink(s.context, h.level, h.message.c_str());
    held().clear();
}
}  // namespace

LoaderLockedCall::LoaderLockedCall() { ++t_loader_locked; }
LoaderLockedCall::~LoaderLockedCall() { --t_loader_locked; }

void deliver_held_log() {
    if (g_sink_count.load(std::memory_order_acquire) == 0 || t_loader_locked) return;
    std::lock_guard lock(sinks_mutex());
    deliver_held_locked();
}

void add_log_sink(const void* key, LogSink sink, void* context) {
    std::lock_guard lock(sinks_mutex());
    sinks().push_back({key, sink, context});
    g_sink_count.store(sinks().size(), std::memory_order_release);
}

void remove_log_sink(const void* key) {
    std::lock_guard lock(sinks_mutex());
    auto& v = sinks();
    for (size_t i = 0; i < v.size();)
        if (v[i].key == key) v.erase(v.begin() + std::ptrdiff_t(i));
        else ++i;
    g_sink_count.store(v.size(), std::memory_order_release);
    if (v.empty()) held().clear();
}

void set_log_level(LogLevel level) { g_level.store(int(level), std::memory_order_relaxed); }

bool log_enabled(LogLevel level) { return int(level) <= g_level.load(std::memory_order_relaxed); }

void log(LogLevel level, const char* format, ...) {
    if (!log_enabled(level)) return;
    static const char* const kNames[] = {"error", "warning", "info", "debug"};
    char line[1024];
    va_list args;
    va_start(args, format);
    std::vsnprintf(line, sizeof line, format, args);
    va_end(args);
    // One fprintf per message so lines from several threads do not interleave.
    std::fprintf(stderr, "slipstream: %s: %s\n", kNames[int(level)], line);
    if (g_sink_count.load(std::memory_order_acquire) == 0) return;
    std::lock_guard lock(sinks_mutex());
    if (t_loader_locked) {
        if (held().size() < kMaxHeld) held().push_back({level, line});
        return;
    }
    deliver_held_locked();
    for (const Sink& s : sinks()) s.sink(s.context, level, line);
}

std::string printable(const std::string& text, size_t max_bytes) {
    std::string out;
    const size_t shown = text.size() <= max_bytes ? text.size() : max_bytes;
    for (size_t i = 0; i < shown; ++i) {
        const unsigned char c = static_cast<unsigned char>(text[i]);
        if (c == '\n') out += "\\n";
        else if (c == '\t') out += "\\t";
        else if (c == '\\') out += "\\\\";
        else if (c >= 0x20 && c < 0x7f) out += char(c);
        else {
            char hex[5];
            std::snprintf(hex, sizeof hex, "\\x%02x", c);
            out += hex;
        }
    }
    if (shown < text.size()) out += "... (" + std::to_string(text.size()) + " bytes)";
    return out;
}

}  // namespace slipstream
