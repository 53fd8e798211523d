#include "submit/fuse_trace.h"

#include <cinttypes>
#include <cstdio>

namespace slipstream::submit {

void FuseTrace::add(const TraceRecord& r) {
    std::lock_guard lock(mutex_);
    if (records_.size() >= kMaxRecords) {
        ++dropped_;
        return;
    }
    records_.push_back(r);
}

bool FuseTrace::write() {
    std::lock_guard lock(mutex_);
    FILE* f = std::fopen(path_.c_str(), "w");
    if (!f) return false;
    std::fprintf(f, "# t_us queue event reason cbs ops waited_us in_flight submit_cost_us call_us (dropped %" PRIu64 ")\n",
                 dropped_);
    const uint64_t t0 = records_.empty() ? 0 : records_.front().t_ns;
    static const char* const kEvents[] = {"append", "flush", "direct", "woke"};
    for (const TraceRecord& r : records_)
        std::fprintf(f, "%.3f %u.%u %s %s %u %u %.3f %" PRIu64 " %.3f %.3f\n", double(int64_t(r.t_ns - t0)) / 1e3,
                     r.queue >> 16, r.queue & 0xffff, kEvents[int(r.event)],
                     r.event == TraceEvent::Flush ? flush_reason_name(r.reason) : "-", r.cbs, r.ops,
                     double(r.waited_ns) / 1e3, r.in_flight, double(r.submit_cost_ns) / 1e3, double(r.call_ns) / 1e3);
    records_.clear();
    return std::fclose(f) == 0;
}

}  // namespace slipstream::submit
