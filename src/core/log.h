// Messages to the user: one line each, prefixed "slipstream:", on stderr.
#pragma once

#include <cstdarg>
#include <cstddef>
#include <string>

namespace slipstream {

enum class LogLevel { Error = 0, Warn = 1, Info = 2, Debug = 3 };

void set_log_level(LogLevel level);
bool log_enabled(LogLevel level);

#if defined(__GNUC__)
#define SLIPSTREAM_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define SLIPSTREAM_PRINTF(a, b)
#endif

void log(LogLevel level, const char* format, ...) SLIPSTREAM_PRINTF(2, 3);

// `text` as a message may quote it (a setting's value, a path the user gave): bytes outside
// printable ASCII as \n, \t or \xNN, so a value cannot break the line or forge one, and at
// most `max_bytes` of it, then "... (N bytes)", so the rest of the message is not cut off.
std::string printable(const std::string& text, size_t max_bytes = 80);

}  // namespace slipstream
