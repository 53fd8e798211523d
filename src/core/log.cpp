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
