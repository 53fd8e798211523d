#include "core/log.h"

#include <atomic>
#include <cstdio>

namespace slipstream {

static std::atomic<int> g_level{int(LogLevel::Warn)};

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
}

}  // namespace slipstream
