// slipstream-armed-launch: is a launch that the GPU already holds, released by one host write,
// cheaper than a submission? (issue 26; the spec's rules on host-set events, the lavapipe run
// and what the H200 must show: docs/armed-launch.md). No layer: the driver's and the GPU's own
// price of each way to run one tiny dispatch (tiny.comp, one invocation incrementing a counter)
// and wait for it by spinning on its fence, side by side in one process:
//   submit_spin:    vkQueueSubmit of a recorded command buffer (compute barrier, dispatch) with
//                   a fence, spin on vkGetFenceStatus
//   submit_wait:    the same, waiting in vkWaitForFences
//   armed_event:    a command buffer whose first command is vkCmdWaitEvents on a host-set
//                   event, then the same barrier and dispatch, submitted ahead with a fence;
//                   once the delay (--delay-us, default 50) has passed since the submission
//                   returned, the timed part is vkSetEvent + spin on the fence
//   armed_indirect: the same with vkCmdDispatchIndirect; the timed part also writes the
//                   arguments (1,1,1) to host-visible coherent memory before vkSetEvent
//   armed_disarm:   the armed_indirect command buffer released with arguments 0,0,0 (the work
//                   skipped: what not wanting an armed launch costs)
//   armed_timeline: submit_spin's command buffer submitted ahead waiting on a timeline
//                   semaphore value, released by vkSignalSemaphore: the spec allows a wait
//                   before its signal there, which it does not allow for host-set events.
//                   It runs on a second device, beside that device's own submit_spin
//                   (tl_submit_spin): a wait before its signal may change how the driver runs
//                   the queue (Mesa then hands every later submission of it to a thread; on
//                   lavapipe that slowed the event rows' releases to ~4 ms on one device)
// Resetting fences and events and arming are not timed. vkCmdWaitEvents, not
// vkCmdWaitEvents2: it needs no feature, it is what issue 26 measured, and both carry the
// same rule on when a host-set event must be set.
// Rounds interleave the rows (one round trip each, the order rotating), so drift hits them
// alike; every armed row runs once per delay of --delay-us. Each row's dispatches increment a
// counter of its own, read back at the end: a count that differs from the dispatches that
// should have run (disarmed ones not counted), or an armed launch whose fence signaled before
// its release, fails the run (exit status 1). Prints a table and one JSON line (--json: also
// to a file).
#include "tiny_rig.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>
#include <vector>

namespace {
using Clock = std::chrono::steady_clock;

enum class Kind { submit_spin, submit_wait, armed_event, armed_indirect, armed_disarm, armed_timeline };
const char* const kKindNames[] = {"submit_spin",    "submit_wait",  "armed_event",
                                  "armed_indirect", "armed_disarm", "armed_timeline"};
constexpr int kWarmupRounds = 10;  // untimed (their dispatches are counted)

bool armed(Kind k) { return k != Kind::submit_spin && k != Kind::submit_wait; }
bool indirect(Kind k) { return k == Kind::armed_indirect || k == Kind::armed_disarm; }

struct Row {
    Kind kind = Kind::submit_spin;
    unsigned delay_us = 0;  // armed rows
    std::string name;
    vkapp::Buffer counter;  // this row's dispatches increment its first word
    vkapp::StorageSet set;
    VkCommandBuffer cb = VK_NULL_HANDLE;
    uint64_t expected = 0;  // dispatches that should have run
    uint32_t counted = 0;   // dispatches that ran (read_counters)
    std::vector<double> ns;
};

struct Rig {
    overhead::TinyRig tiny;
    vkapp::Context& ctx = tiny.ctx;
    vkapp::Buffer args;  // VkDispatchIndirectCommand, host-visible coherent
    VkFence fence = VK_NULL_HANDLE;
    VkEvent event = VK_NULL_HANDLE;
    VkSemaphore timeline = VK_NULL_HANDLE;
    uint64_t timeline_value = 0;  // the last one waited for
    std::vector<Row> rows;
    int early = 0;  // armed launches whose fence had signaled before their release

    // The timeline device has tl_submit_spin and armed_timeline; the other has the rest.
    Rig(const std::vector<unsigned>& delays, bool timelines)
        : tiny("slipstream-armed-launch", options(timelines)) {
        args = vkapp::create_buffer(ctx, 64, VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT,
                                    VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
        write_args(0);
        VkFenceCreateInfo fi{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
        VK_CHECK(vkCreateFence(ctx.device, &fi, nullptr, &fence));
        VkEventCreateInfo ei{VK_STRUCTURE_TYPE_EVENT_CREATE_INFO};
        VK_CHECK(vkCreateEvent(ctx.device, &ei, nullptr, &event));
        if (timelines) timeline = vkapp::create_timeline_semaphore(ctx);
        add_row(Kind::submit_spin, 0, timelines ? "tl_" : "");
        if (!timelines) add_row(Kind::submit_wait, 0);
        for (Kind k : {Kind::armed_event, Kind::armed_indirect, Kind::armed_disarm, Kind::armed_timeline})
            if ((k == Kind::armed_timeline) == timelines)
                for (unsigned d : delays) add_row(k, d);
        vkapp::one_shot(ctx, tiny.pool, [&](VkCommandBuffer cb) {
            for (Row& row : rows) vkCmdFillBuffer(cb, row.counter.buffer, 0, VK_WHOLE_SIZE, 0);
            vkapp::barrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                           VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                           VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
        });
    }
    ~Rig() {
        VK_CHECK(vkQueueWaitIdle(ctx.queue));
        for (Row& row : rows) {
            vkapp::destroy_storage_set(ctx, row.set);
            vkapp::destroy_buffer(ctx, row.counter);
        }
        if (timeline) vkDestroySemaphore(ctx.device, timeline, nullptr);
        vkDestroyEvent(ctx.device, event, nullptr);
        vkDestroyFence(ctx.device, fence, nullptr);
        vkapp::destroy_buffer(ctx, args);
    }
    static vkapp::ContextOptions options(bool timelines) {
        vkapp::ContextOptions o;
        o.timeline_semaphores = timelines;
        return o;
    }
    Rig(const Rig&) = delete;
    Rig& operator=(const Rig&) = delete;

    void add_row(Kind kind, unsigned delay_us, const char* prefix = "") {
        Row row;
        row.kind = kind;
        row.delay_us = delay_us;
        row.name = std::string(prefix) + kKindNames[int(kind)];
        if (armed(kind)) row.name += "_" + std::to_string(delay_us) + "us";
        row.counter = vkapp::create_buffer(ctx, 256,
                                           VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                               VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                                           VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
        row.set = vkapp::create_storage_set(ctx, tiny.pipe, {row.counter.buffer});
        row.cb = tiny.allocate();
        record(row);
        rows.push_back(std::move(row));
    }

    // The event's wait comes first; the barrier orders the dispatch after the previous
    // submission's write of the same counter, as submit_spin's does.
    void record(const Row& row) {
        VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
        VK_CHECK(vkBeginCommandBuffer(row.cb, &bi));
        if (armed(row.kind) && row.kind != Kind::armed_timeline) {
            // Host writes before vkSetEvent (the arguments) are in the wait's first scope
            // because HOST is in srcStageMask (VUID-vkCmdWaitEvents-srcStageMask-01158).
            VkMemoryBarrier host{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
            host.srcAccessMask = VK_ACCESS_HOST_WRITE_BIT;
            host.dstAccessMask = VK_ACCESS_INDIRECT_COMMAND_READ_BIT;
            const bool ind = indirect(row.kind);
            vkCmdWaitEvents(row.cb, 1, &event, VK_PIPELINE_STAGE_HOST_BIT,
                            ind ? VK_PIPELINE_STAGE_DRAW_INDIRECT_BIT : VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                            ind ? 1 : 0, &host, 0, nullptr, 0, nullptr);
        }
        vkCmdBindPipeline(row.cb, VK_PIPELINE_BIND_POINT_COMPUTE, tiny.pipe.pipeline);
        vkCmdBindDescriptorSets(row.cb, VK_PIPELINE_BIND_POINT_COMPUTE, tiny.pipe.layout, 0, 1, &row.set.set, 0,
                                nullptr);
        vkapp::barrier(row.cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                       VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
        if (indirect(row.kind)) vkCmdDispatchIndirect(row.cb, args.buffer, 0);
        else vkCmdDispatch(row.cb, 1, 1, 1);
        VK_CHECK(vkEndCommandBuffer(row.cb));
    }

    void write_args(uint32_t n) {
        auto* a = static_cast<VkDispatchIndirectCommand*>(args.mapped);
        *a = VkDispatchIndirectCommand{n, n, n};
    }
    // With `wait_value`, the batch waits for the timeline to reach it.
    void submit(const Row& row, uint64_t wait_value = 0) {
        VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
        si.commandBufferCount = 1;
        si.pCommandBuffers = &row.cb;
        VkTimelineSemaphoreSubmitInfo ts{VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO};
        const VkPipelineStageFlags stage = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT;
        if (wait_value) {
            ts.waitSemaphoreValueCount = 1;
            ts.pWaitSemaphoreValues = &wait_value;
            si.pNext = &ts;
            si.waitSemaphoreCount = 1;
            si.pWaitSemaphores = &timeline;
            si.pWaitDstStageMask = &stage;
        }
        VK_CHECK(vkQueueSubmit(ctx.queue, 1, &si, fence));
    }
    void spin() {
        for (;;) {
            const VkResult r = vkGetFenceStatus(ctx.device, fence);
            if (r == VK_SUCCESS) return;
            if (r != VK_NOT_READY) vkapp::fail("vkGetFenceStatus", r, __FILE__, __LINE__);
        }
    }

    // One round trip of `row`, in ns.
    double trip(Row& row) {
        if (armed(row.kind)) return armed_trip(row);
        const Clock::time_point t0 = Clock::now();
        submit(row);
        if (row.kind == Kind::submit_wait) VK_CHECK(vkWaitForFences(ctx.device, 1, &fence, VK_TRUE, UINT64_MAX));
        else spin();
        const double ns = std::chrono::duration<double, std::nano>(Clock::now() - t0).count();
        VK_CHECK(vkResetFences(ctx.device, 1, &fence));
        ++row.expected;
        return ns;
    }

    double armed_trip(Row& row) {
        const bool by_timeline = row.kind == Kind::armed_timeline;
        submit(row, by_timeline ? ++timeline_value : 0);
        const Clock::time_point armed_at = Clock::now();
        while (Clock::now() - armed_at < std::chrono::microseconds(row.delay_us)) {
        }
        if (vkGetFenceStatus(ctx.device, fence) != VK_NOT_READY) ++early;  // it did not wait for us
        const Clock::time_point t0 = Clock::now();
        if (indirect(row.kind)) write_args(row.kind == Kind::armed_indirect ? 1 : 0);
        if (by_timeline) {
            VkSemaphoreSignalInfo signal{VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO};
            signal.semaphore = timeline;
            signal.value = timeline_value;
            VK_CHECK(vkSignalSemaphore(ctx.device, &signal));
        } else {
            VK_CHECK(vkSetEvent(ctx.device, event));
        }
        spin();
        const double ns = std::chrono::duration<double, std::nano>(Clock::now() - t0).count();
        if (!by_timeline) VK_CHECK(vkResetEvent(ctx.device, event));
        VK_CHECK(vkResetFences(ctx.device, 1, &fence));
        // Leave the opposite arguments behind: a release that read stale ones miscounts.
        if (indirect(row.kind)) write_args(row.kind == Kind::armed_indirect ? 0 : 1);
        if (row.kind != Kind::armed_disarm) ++row.expected;
        return ns;
    }

    // Each row's counter into its `counted`, through host-visible memory.
    void read_counters() {
        vkapp::Buffer readback = vkapp::create_buffer(
            ctx, 4 * rows.size(), VK_BUFFER_USAGE_TRANSFER_DST_BIT,
            VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
        vkapp::one_shot(ctx, tiny.pool, [&](VkCommandBuffer cb) {
            vkapp::barrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                           VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT);
            for (size_t i = 0; i < rows.size(); ++i) {
                const VkBufferCopy region{0, 4 * i, 4};
                vkCmdCopyBuffer(cb, rows[i].counter.buffer, readback.buffer, 1, &region);
            }
            vkapp::barrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                           VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
        });
        const auto* words = static_cast<const uint32_t*>(readback.mapped);
        for (size_t i = 0; i < rows.size(); ++i) rows[i].counted = words[i];
        vkapp::destroy_buffer(ctx, readback);
    }
};

struct Options {
    int trips = 300;
    std::vector<unsigned> delays{50};
    std::string json_path;
};

// "5,50,1000" into `out`; false when a field is not a number.
bool parse_delays(const char* text, std::vector<unsigned>& out) {
    out.clear();
    for (const char* p = text; *p;) {
        char* end = nullptr;
        const unsigned long v = std::strtoul(p, &end, 10);
        if (end == p || v > 1000000) return false;
        out.push_back(unsigned(v));
        p = *end == ',' ? end + 1 : end;
        if (*end && *end != ',') return false;
    }
    return !out.empty();
}

bool parse(int argc, char** argv, Options& o) {
    for (int i = 1; i < argc; ++i) {
        const bool has_value = i + 1 < argc;
        if (!std::strcmp(argv[i], "--trips") && has_value) o.trips = std::atoi(argv[++i]);
        else if (!std::strcmp(argv[i], "--delay-us") && has_value) {
            if (!parse_delays(argv[++i], o.delays)) return false;
        } else if (!std::strcmp(argv[i], "--sweep")) o.delays = {5, 50, 1000};
        else if (!std::strcmp(argv[i], "--json") && has_value) o.json_path = argv[++i];
        else return false;
    }
    return o.trips >= 1;
}

double percentile(std::vector<double> v, double p) {
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, size_t(p * double(v.size())))];
}

std::string number(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3f", v);
    return buf;
}

std::string row_json(const Row& r, double med, double p10, double p90, double min) {
    return "\"" + r.name + "\": {\"median_us\": " + number(med) + ", \"p10_us\": " + number(p10) +
           ", \"p90_us\": " + number(p90) + ", \"min_us\": " + number(min) + ", \"delay_us\": " +
           std::to_string(r.delay_us) + ", \"dispatches_expected\": " + std::to_string(r.expected) +
           ", \"dispatches_counted\": " + std::to_string(r.counted) + "}";
}

// The table on stdout; the JSON object returned.
std::string report(const std::vector<Rig*>& rigs, const Options& o, bool ok) {
    const VkPhysicalDeviceProperties& props = rigs[0]->ctx.properties;
    std::printf("%s: %d round trips per row, interleaved (%d warm-up rounds); armed_event, _indirect and _disarm\n"
                "wait in vkCmdWaitEvents; tl_ rows and armed_timeline run on a second device\n",
                props.deviceName, o.trips, kWarmupRounds);
    std::printf("%-26s%10s%10s%10s%10s%16s%12s\n", "row (us)", "median", "p10", "p90", "min", "vs submit_spin",
                "dispatches");
    std::string json = std::string("{\"device\": \"") + props.deviceName + "\", \"driver_version\": " +
                       std::to_string(props.driverVersion) + ", \"trips\": " + std::to_string(o.trips) +
                       ", \"warmup_rounds\": " + std::to_string(kWarmupRounds) +
                       ", \"wait_command\": \"vkCmdWaitEvents\", \"rows\": {";
    const double base = percentile(rigs[0]->rows[0].ns, 0.5) / 1000;
    int early = 0;
    for (const Rig* rig : rigs) {
        early += rig->early;
        for (const Row& r : rig->rows) {
            const double med = percentile(r.ns, 0.5) / 1000, p10 = percentile(r.ns, 0.1) / 1000;
            const double p90 = percentile(r.ns, 0.9) / 1000, min = percentile(r.ns, 0) / 1000;
            const std::string counted = std::to_string(r.counted) + "/" + std::to_string(r.expected);
            std::printf("%-26s%10.2f%10.2f%10.2f%10.2f%+16.2f%12s%s\n", r.name.c_str(), med, p10, p90, min,
                        med - base, counted.c_str(), r.counted == r.expected ? "" : "  MISCOUNT");
            json += (json.back() == '{' ? "" : ", ") + row_json(r, med, p10, p90, min);
        }
    }
    if (early) std::printf("%d armed launches had completed before their release\n", early);
    json += "}, \"early_releases\": " + std::to_string(early) + ", \"validation_messages\": " +
            std::to_string(vkapp::g_validation_messages.load()) + ", \"ok\": " + (ok ? "true" : "false") + "}";
    return json;
}
}  // namespace

int main(int argc, char** argv) {
    Options o;
    if (!parse(argc, argv, o)) {
        std::fprintf(stderr, "usage: %s [--trips N] [--delay-us D[,D...]] [--sweep] [--json PATH]\n", argv[0]);
        return 2;
    }
    std::string json;
    bool ok = true;
    {
        Rig events(o.delays, false), timelines(o.delays, true);
        std::vector<std::pair<Rig*, Row*>> all;
        for (Rig* rig : {&events, &timelines})
            for (Row& row : rig->rows) all.emplace_back(rig, &row);
        const size_t n = all.size();
        for (int round = -kWarmupRounds; round < o.trips; ++round) {
            for (size_t k = 0; k < n; ++k) {
                auto [rig, row] = all[(k + size_t(round + kWarmupRounds)) % n];  // rotate who goes first
                const double ns = rig->trip(*row);
                if (round >= 0) row->ns.push_back(ns);
            }
        }
        for (Rig* rig : {&events, &timelines}) {
            rig->read_counters();
            for (const Row& row : rig->rows) ok = ok && row.counted == row.expected;
            ok = ok && rig->early == 0;
        }
        ok = ok && vkapp::g_validation_messages.load() == 0;
        json = report({&events, &timelines}, o, ok);
    }
    std::printf("%s\n", json.c_str());
    if (!o.json_path.empty()) {
        FILE* f = std::fopen(o.json_path.c_str(), "w");
        if (!f || std::fprintf(f, "%s\n", json.c_str()) < 0 || std::fclose(f) != 0) {
            std::fprintf(stderr, "cannot write %s\n", o.json_path.c_str());
            return 2;
        }
    }
    if (!ok) std::fprintf(stderr, "FAILED: miscounted dispatches, early releases or validation messages\n");
    return ok ? 0 : 1;
}
