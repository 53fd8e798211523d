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
// When the GPU runs dry with a batch open, waiting is worth it only up to what a submission
// costs (like renting skis until their price is paid, that wastes at most as much GPU time as
// the submissions it saves). What a submission costs is measured per queue as its round trip
// on an idle GPU: from the vkQueueSubmit of a batch of one operation while nothing of ours ran
// to the first counter read that sees it complete (a slowly decaying minimum, since reads can
// come late). Bigger batches are not samples: their round trip holds their work too.
// The CPU time of vkQueueSubmit alone (~2-3 us on the H200) says nothing of what each
// submission costs the GPU (~11-16 us however small it is): flushing once a batch had waited
// that long kept batches at 1.2-1.3 command buffers in bench runs on the H200. A submitting
// thread never flushes a streaming queue's batch for an idle GPU; the deadline flusher does.
//
// Queues whose application waits for about every submission (submit, wait, read) are in
// latency mode: an idle GPU gets each submission at once, as the application recorded it.
// Which mode a queue is in is learnt from how many submissions come per wait on the latest of
// them (a fence wait on the newest fence of the queue, a queue or device idle wait).
#pragma once

#include <vulkan/vulkan.h>

#include <atomic>
#include <cstdint>

namespace slipstream::submit {

enum class FlushReason : uint8_t {
    Full,         // batch_max operations, or the record cap
    GpuStarving,  // at most one batch still running
    Observe,      // a wait, status query or result read, on this queue or the device
    Deadline,     // the batch waited max_defer_us
    PassThrough,  // work fusion cannot represent comes next on the queue
    Destroy,      // vkDestroyDevice, or the destruction of an object a held batch may name
};
const char* flush_reason_name(FlushReason reason);

// Why a vkQueueSubmit(2) call went to the driver as it is (after the open batch was flushed).
enum class PassReason : uint8_t {
    None,              // fused
    NotCaptured,       // a command buffer without a complete capture (graphics, secondaries...)
    Semaphores,        // waits or signals fusion cannot carry (semaphore_carry.h)
    SubmitExtension,   // a pNext, flags or device masks fusion does not represent
    OtherFamily,       // a command buffer allocated from another queue family's pool
    LayoutsDestroyed,  // a pipeline or set layout or template was destroyed since it was begun
};
const char* pass_reason_name(PassReason reason);

// Hard cap on captured records per batch, whatever batch_max says: the cost of one replay
// (state commands included) stays bounded.
inline constexpr uint32_t kMaxRecordsPerBatch = 4096;

enum class AfterAppend : uint8_t { Keep, FlushFull, FlushGpuStarving };

// The open batch as the flush rules see it.
struct OpenBatch {
    uint32_t ops = 0;          // operations (dispatches, copies, fills, queries) in it
    uint32_t records = 0;      // commands in it
    uint64_t waited_ns = 0;    // since it was opened
    uint64_t in_flight = 0;    // submissions of ours (batches or direct ones) still running
    uint64_t submit_cost_ns = 0;  // one submission's round trip on an idle GPU, on this queue
    bool latency_mode = false;
};

// After a submission joined the open batch (streaming queues: see above for the idle GPU).
inline AfterAppend decide_after_append(const OpenBatch& b, uint32_t batch_max) {
    if (b.ops >= batch_max || b.records >= kMaxRecordsPerBatch) return AfterAppend::FlushFull;
    if (b.in_flight == 0 && b.latency_mode) return AfterAppend::FlushGpuStarving;
    return AfterAppend::Keep;
}

// A fusable submission that finds no batch open and nothing of ours running on a queue in
// latency mode goes to the driver as the application recorded it (with the queue's timeline
// signal added): re-recording it into a batch of ours would only add CPU time before the GPU
// starts.
inline bool submit_directly(bool latency_mode, bool batch_open, uint64_t in_flight) {
    return latency_mode && !batch_open && in_flight == 0;
}

// Which queue families are in latency mode with an idle GPU, as their latest fusable
// submission found them (one bit per family, families 0..63; a later one is never marked).
// vkBeginCommandBuffer reads it for the command buffer's pool's family: a naive runtime may
// create a pool and a command buffer for every operation, so neither knows the queue's habits.
class LatencyFamilies {
public:
    bool has(uint32_t family) const {
        return family < 64 && (bits_.load(std::memory_order_relaxed) >> family & 1);
    }
    void note(uint32_t family, bool idle_latency) {
        if (family >= 64 || has(family) == idle_latency) return;  // (the common case: no write)
        const uint64_t bit = uint64_t(1) << family;
        if (idle_latency) bits_.fetch_or(bit, std::memory_order_relaxed);
        else bits_.fetch_and(~bit, std::memory_order_relaxed);
    }

private:
    std::atomic<uint64_t> bits_{0};
};

// LAZY_RECORD=auto, at vkEndCommandBuffer of a lazily recorded command buffer: whether the
// driver records it now, from its capture, so that its submission to a queue in latency mode
// goes straight to the driver (submit_directly) instead of through a batch replayed on the
// submitting thread, which costs that thread the replay (~10 us for a naive runtime's small
// command buffer on the H200, fusion trace) and the GPU a fuse barrier. Not where the replay
// would narrow a barrier of it (or an event's): on the H200 a tiny dispatch behind an
// ALL_COMMANDS barrier waited for at once took 27.9 us recorded at vkEndCommandBuffer and
// submitted directly, 21.6 us replayed into a batch with the barrier narrowed (knob matrix).
inline constexpr uint32_t kLatencyNarrowMin = 1;
inline bool record_at_end(bool latency_family, uint32_t narrowable_barriers) {
    return latency_family && narrowable_barriers < kLatencyNarrowMin;
}

// The deadline flusher's rule for an open batch: what to do now.
enum class FlusherAction : uint8_t { Wait, FlushDeadline, FlushGpuStarving };
inline FlusherAction decide_in_flusher(const OpenBatch& b, uint64_t max_defer_ns) {
    if (b.waited_ns >= max_defer_ns) return FlusherAction::FlushDeadline;
    if (b.in_flight == 0 && b.waited_ns >= b.submit_cost_ns) return FlusherAction::FlushGpuStarving;
    return FlusherAction::Wait;
}

// Latency mode: at most two submissions per wait on average (x16, weight 1/2, as the idle
// tracker learns fences), and no more than two since the last wait.
struct SyncPattern {
    uint32_t since_wait = 0;
    uint32_t per_wait_x16 = 16;
    bool latency_mode() const { return per_wait_x16 <= 2 * 16 && since_wait <= 2; }
    void submitted() {
        if (since_wait < 1024) ++since_wait;
    }
    void waited() {
        per_wait_x16 = (per_wait_x16 + since_wait * 16) / 2;
        since_wait = 0;
    }
};

// The submission cost after one more round trip measured: the minimum, decaying upward by
// 1/8 per sample so that a queue whose submissions got slower is followed.
inline uint64_t next_submit_cost(uint64_t cost_ns, uint64_t sample_ns) {
    const uint64_t decayed = cost_ns + cost_ns / 8 + 1;
    return sample_ns < decayed ? sample_ns : decayed;
}

// Whether a submission of `ops` operations (UINT32_MAX: not known) may sample the round trip.
inline bool samples_submit_cost(uint32_t ops) { return ops <= 1; }

// Whether a batch opened at `opened_ns` has waited its time at `now_ns`.
inline bool deadline_passed(uint64_t opened_ns, uint64_t now_ns, uint32_t max_defer_us) {
    return now_ns >= opened_ns && now_ns - opened_ns >= uint64_t(max_defer_us) * 1000;
}

// Where the full barrier goes that closes a batch's narrowed barriers toward the queue's later
// work (capture/narrowing.md, case 4). Later batches and later command buffers that stay in the
// narrowed stages need none: the narrowed second scopes reach them. Work in other stages (a
// render pass, a query) does. At the end of every batch it costs ~2.5 us of GPU time (H200,
// slipstream-sync-latency: "trailing" against "tuned"); owed instead, it costs a submission
// of ours with only that barrier when such work comes after a batch that did not end with it
// (a command buffer costs ~11-16 us of GPU time however it is submitted, BACKGROUND.md; one
// holding only a barrier was not measured apart). So a queue whose other work came after one of
// its last kWindow batches with narrowed barriers gets the barrier at the end of each such
// batch; a queue of compute and transfer only owes it. An alternation of the two costs at most
// one barrier submission per kWindow + 1 batches, each of the others a barrier at its end.
class TrailingBarrierPolicy {
public:
    static constexpr uint32_t kWindow = 8;
    bool at_batch_end() const { return batches_since_other_ < kWindow; }
    // A batch with narrowed barriers was recorded.
    void narrowed_batch() {
        if (batches_since_other_ < kWindow) ++batches_since_other_;
    }
    // Work outside the narrowed stages came after narrowed batches.
    void other_work() { batches_since_other_ = 0; }

private:
    uint32_t batches_since_other_ = kWindow;  // none seen yet
};

// What a submission itself allows (its command buffers are judged separately): no
// semaphores (Semaphores: the caller may still carry them, semaphore_carry.h), no flags, and in its pNext chain only structures that say nothing fusion would
// drop: timeline values (VkTimelineSemaphoreSubmitInfo: with no semaphores there is no value
// to carry; runtimes attach one to every submission), device-group masks and indices naming
// the one device of a device that has one (`one_device`), a protected-submit structure that
// asks for none. A command buffer's device mask must be 0 or name that device. Anything else
// (performance-query passes, keyed mutexes, WSI and vendor structures) passes through;
// `*unknown` (when given) is then the sType of the first such structure.
PassReason classify_submit(const VkSubmitInfo& submit, bool one_device, VkStructureType* unknown = nullptr);
PassReason classify_submit(const VkSubmitInfo2& submit, bool one_device, VkStructureType* unknown = nullptr);

}  // namespace slipstream::submit
