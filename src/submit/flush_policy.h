// When a fused batch goes to the driver, and which submissions can join one. Pure functions:
// unit tests call them without a driver (tests/unit/flush_policy_test.cpp).
//
// The rules (FUSION.md, DXVK's GpuFlushTracker, clvk's queue controller): a batch is submitted
// when it is full; when the GPU runs out of work (at most one batch of ours runs at a time, so
// a GPU that is idle at submit gets the work at once and submit-then-wait programs gain no
// latency, while a busy one lets the next batch grow); before anything that observes
// completion; and when it has waited max_defer_us (a background flusher, which also submits
// the open batch the moment the running one completes), so an application that never calls
// Vulkan again still sees its work finish.
//
// Why not DXVK's "fewer than two running": on the H200 one submission costs the driver ~10 us
// of CPU time against ~4 us of GPU time for a small batch, so with two allowed in flight the
// GPU finished each one-command-buffer batch before the next arrived and nothing ever fused
// (slipstream bench, 2026-12-01: 7603 of 7603 batches flushed with one command buffer).
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>

namespace slipstream::submit {

enum class FlushReason : uint8_t {
    Full,         // batch_max operations, or the record cap
    GpuStarving,  // at most one batch still running
    Observe,      // a wait, status query or result read, on this queue or the device
    Deadline,     // the batch waited max_defer_us
    PassThrough,  // work fusion cannot represent comes next on the queue
    Destroy,      // vkDestroyDevice
};
const char* flush_reason_name(FlushReason reason);

// Why a vkQueueSubmit(2) call went to the driver as it is (after the open batch was flushed).
enum class PassReason : uint8_t {
    None,              // fused
    NotCaptured,       // a command buffer without a complete capture (graphics, secondaries...)
    Semaphores,        // waits or signals: FUSION.md rule 1, a batch boundary
    SubmitExtension,   // a pNext, flags or device masks fusion does not represent
    OtherFamily,       // a command buffer allocated from another queue family's pool
    LayoutsDestroyed,  // a pipeline or set layout or template was destroyed since it was begun
    NoBatch,           // the queue has no batch of ours (fusion failed to start on it)
};
const char* pass_reason_name(PassReason reason);

// Hard cap on captured records per batch, whatever batch_max says: the cost of one replay
// (state commands included) stays bounded.
inline constexpr uint32_t kMaxRecordsPerBatch = 4096;

enum class AfterAppend : uint8_t { Keep, FlushFull, FlushGpuStarving };

// After a submission joined the open batch: `ops` operations and `records` commands in it,
// `in_flight` submissions of ours (batches, or direct ones) not yet complete.
inline AfterAppend decide_after_append(uint32_t ops, uint32_t records, uint32_t batch_max, uint64_t in_flight) {
    if (ops >= batch_max || records >= kMaxRecordsPerBatch) return AfterAppend::FlushFull;
    if (in_flight == 0) return AfterAppend::FlushGpuStarving;
    return AfterAppend::Keep;
}

// A fusable submission that finds no batch open and nothing of ours running goes to the driver
// as the application recorded it (with the queue's timeline signal added): re-recording it
// into a batch of ours would only add CPU time before the GPU starts.
inline bool submit_directly(bool batch_open, uint64_t in_flight) { return !batch_open && in_flight == 0; }

// Whether a batch opened at `opened_ns` has waited its time at `now_ns`.
inline bool deadline_passed(uint64_t opened_ns, uint64_t now_ns, uint32_t max_defer_us) {
    return now_ns >= opened_ns && now_ns - opened_ns >= uint64_t(max_defer_us) * 1000;
}

// What a submission itself allows (its command buffers are judged separately): no
// semaphores, no pNext (device groups, protected and performance-query submits, keyed
// mutexes, timeline values and WSI signals all live there), no flags, device mask 0.
PassReason classify_submit(const VkSubmitInfo& submit);
PassReason classify_submit(const VkSubmitInfo2& submit);

}  // namespace slipstream::submit
