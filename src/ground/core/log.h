// Messages to the user: one line each, prefixed "slipstream:", on stderr, and to every sink
// registered (an instance whose application enabled VK_EXT_debug_utils: its messengers).
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

// Also send each message (without the "slipstream: level:" prefix) to `sink(context, ...)`
// until remove_log_sink(key); sinks are called one at a time, under a lock that
// remove_log_sink takes too, so a sink is never called after its removal returned.
using LogSink = void (*)(void* context, LogLevel level, const char* message);
void add_log_sink(const void* key, LogSink sink, void* context);
void remove_log_sink(const void* key);

// The Vulkan loader holds a lock of its own through vkCreateInstance, vkDestroyInstance,
// vkCreateDevice and vkDestroyDevice, and takes it again to hand a message to the messengers:
// messages logged meanwhile on that thread wait (at most 64, then dropped) until a message is
// logged, or deliver_held_log() is called, outside such a call.
class LoaderLockedCall {
public:
    LoaderLockedCall();
    ~LoaderLockedCall();
    LoaderLockedCall(const LoaderLockedCall&) = delete;
    LoaderLockedCall& operator=(const LoaderLockedCall&) = delete;
};
void deliver_held_log();

// `text` as a message may quote it (a setting's value, a path the user gave): bytes outside
// printable ASCII as \n, \t or \xNN, so a value cannot break the line or forge one, and at
// most `max_bytes` of it, then "... (N bytes)", so the rest of the message is not cut off.
std::string printable(const std::string& text, size_t max_bytes = 80);

}  // namespace slipstream
