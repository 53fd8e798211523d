// Messages to the user: one line each, prefixed "slipstream:", on stderr.
#pragma once

#include <cstdarg>

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

}  // namespace slipstream
