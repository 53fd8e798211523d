#include "core/stats.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <sstream>

namespace slipstream {

const char* const kCounterNames[kCounterCount] = {
#define X(id, name) name,
    SLIPSTREAM_COUNTERS(X)
#undef X
};

bool DeviceStats::add_passed_extension(VkStructureType type, uint64_t n) {
    const uint32_t t = uint32_t(type) ? uint32_t(type) : 1u;  // (sType 0 is VkApplicationInfo: never chained here)
    for (int i = 0; i < kExtensionSlots; ++i) {
        uint32_t seen = extension_types_[i].load(std::memory_order_acquire);
        bool first = false;
        if (seen == 0 && i + 1 < kExtensionSlots) {
            first = extension_types_[i].compare_exchange_strong(seen, t, std::memory_order_acq_rel);
            if (first) seen = t;
        }
        if (seen == t || i + 1 == kExtensionSlots) {
            if (enabled_) extension_counts_[i].fetch_add(n, std::memory_order_relaxed);
            return first;
        }
    }
    return false;
}

std::vector<std::pair<uint32_t, uint64_t>> DeviceStats::passed_extensions() const {
    std::vector<std::pair<uint32_t, uint64_t>> out;
    for (int i = 0; i < kExtensionSlots; ++i) {
        const uint64_t n = extension_counts_[i].load(std::memory_order_relaxed);
        if (n) out.push_back({i + 1 < kExtensionSlots ? extension_types_[i].load(std::memory_order_relaxed) : 0u, n});
    }
    return out;
}

StatsSnapshot snapshot(const DeviceStats& stats) {
    StatsSnapshot s;
    for (int i = 0; i < kCounterCount; ++i) s.counters[i] = stats.get(Counter(i));
    for (int k = 0; k < kCommandKindCount; ++k) s.commands[k] = stats.commands(CommandKind(k));
    s.passed_extensions = stats.passed_extensions();
    return s;
}

std::string format_stats_text(const StatsSnapshot& s) {
    std::ostringstream out;
    out << "slipstream: statistics for " << s.device_name << "\n";
    for (int i = 0; i < kCounterCount; ++i)
        out << "slipstream:   " << kCounterNames[i] << " = " << s.counters[i] << "\n";
    out << "slipstream:   commands submitted by kind:";
    bool any = false;
    for (int k = 0; k < kCommandKindCount; ++k) {
        if (!s.commands[k]) continue;
        out << " " << kCommandKindNames[k] << "=" << s.commands[k];
        any = true;
    }
    out << (any ? "\n" : " none\n");
    for (const auto& [type, n] : s.passed_extensions)
        out << "slipstream:   passed_submit_extension sType " << (type ? std::to_string(type) : "other") << " = " << n
            << "\n";
    return out.str();
}

static std::string json_string(const std::string& text) {
    std::string out = "\"";
    for (char c : text) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += c;
        } else if (static_cast<unsigned char>(c) < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", c);
            out += buf;
        } else {
            out += c;
        }
    }
    return out + "\"";
}

std::string format_stats_json(const std::vector<StatsSnapshot>& devices,
                              const std::vector<std::pair<std::string, std::string>>& settings) {
    std::ostringstream out;
    out << "{\n  \"layer\": \"VK_LAYER_slipstream\",\n  \"settings\": {";
    for (size_t i = 0; i < settings.size(); ++i)
        out << (i ? ", " : "") << json_string(settings[i].first) << ": " << json_string(settings[i].second);
    out << "},\n  \"devices\": [";
    for (size_t d = 0; d < devices.size(); ++d) {
        const StatsSnapshot& s = devices[d];
        out << (d ? ",\n" : "\n") << "    {\"device_name\": " << json_string(s.device_name)
            << ", \"vendor_id\": " << s.vendor_id << ", \"device_id\": " << s.device_id
            << ", \"driver_version\": " << s.driver_version;
        for (int i = 0; i < kCounterCount; ++i) out << ", \"" << kCounterNames[i] << "\": " << s.counters[i];
        out << ", \"commands\": {";
        for (int k = 0; k < kCommandKindCount; ++k)
            out << (k ? ", " : "") << "\"" << kCommandKindNames[k] << "\": " << s.commands[k];
        // By sType (a number, as vk.xml gives it; "other" past the first few).
        out << "}, \"passed_submit_extension_by_stype\": {";
        for (size_t i = 0; i < s.passed_extensions.size(); ++i) {
            const auto& [type, n] = s.passed_extensions[i];
            out << (i ? ", " : "") << "\"" << (type ? std::to_string(type) : "other") << "\": " << n;
        }
        out << "}, \"live_layer_objects\": {\"devices\": " << s.live_devices << ", \"queues\": " << s.live_queues
            << ", \"command_buffers\": " << s.live_command_buffers << "}}";
    }
    out << "\n  ]\n}\n";
    return out.str();
}

void report_device_stats(const StatsSnapshot& s, const Settings& settings) {
    if (settings.stats) std::fputs(format_stats_text(s).c_str(), stderr);
    if (settings.stats_file.empty()) return;
    // Every device reported in this process, by file: a process may create several devices.
    static std::mutex mutex;
    static auto* reported = new std::map<std::string, std::vector<StatsSnapshot>>();
    std::lock_guard lock(mutex);
    auto& list = (*reported)[settings.stats_file];
    list.push_back(s);
    std::string json = format_stats_json(list, describe_settings(settings));
    // A full disk (/dev/full) shows only at fclose, when the buffer goes out.
    FILE* f = std::fopen(settings.stats_file.c_str(), "w");
    int error = f ? 0 : errno;
    if (f && std::fputs(json.c_str(), f) < 0) error = errno;
    if (f && std::fclose(f) != 0 && !error) error = errno;
    if (error)
        log(LogLevel::Error, "cannot write the statistics file '%s' (VK_SLIPSTREAM_STATS_FILE): %s",
            printable(settings.stats_file).c_str(), std::strerror(error));
}

}  // namespace slipstream
