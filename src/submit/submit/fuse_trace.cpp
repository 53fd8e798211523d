#include "submit/fuse_trace.h"

#include <cerrno>
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

int FuseTrace::write() {
    std::lock_guard lock(mutex_);
    FILE* f = std::fopen(path_.c_str(), "w");
    if (!f) return errno;
    errno = 0;  // what a failed write sets, read below
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
    // A full disk (/dev/full) fails the first write that leaves the buffer: with a trace
    // longer than the buffer that is inside an fprintf, and fclose fails again only if the
    // buffer still holds something, which depends on the trace's length; the stream's error
    // flag remembers it.
    int error = std::ferror(f) ? (errno ? errno : EIO) : 0;
    if (std::fclose(f) != 0 && !error) error = errno;
    return error;
}

}  // namespace slipstream::submit
