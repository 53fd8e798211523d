// VK_SLIPSTREAM_FUSE_TRACE=path: a record of every fused submission and every submission of
// ours, written as one text line each at vkDestroyDevice. It is how the flush rules are tuned
// on a real GPU: how big batches get, why each went, how long it waited and whether the GPU
// was busy. Off (a null pointer check) unless the setting names a file; bounded in memory.
#pragma once

#include "submit/flush_policy.h"

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace slipstream::submit {

enum class TraceEvent : uint8_t { Append, Flush, Direct, Woke };  // Woke: the flusher's wait returned

struct TraceRecord {
    uint64_t t_ns;        // now_ns() when the event ended
    uint32_t queue;       // family << 16 | index
    TraceEvent event;
    FlushReason reason;   // Flush only
    uint32_t cbs;         // Append: application command buffers in the call; else in the batch
    uint32_t ops;         // operations in the batch after the event
    uint64_t waited_ns;   // Flush: since the batch was opened
    uint64_t in_flight;   // submissions of ours still running before the event
    uint64_t submit_cost_ns;
    uint64_t call_ns;     // the driver's vkQueueSubmit (Flush, Direct), the wait (Woke); 0 for Append
    // (Woke: cbs holds the semaphores waited on, waited_ns the timeout, in_flight the VkResult.)
};

class FuseTrace {
public:
    explicit FuseTrace(std::string path) : path_(std::move(path)) {}
    void add(const TraceRecord& r);
    // Writes every record to the file (once); 0, or the errno of why the file was not written.
    int write();

private:
    static constexpr size_t kMaxRecords = size_t(1) << 21;
    std::string path_;
    std::mutex mutex_;
    std::vector<TraceRecord> records_;
    uint64_t dropped_ = 0;
};

}  // namespace slipstream::submit
