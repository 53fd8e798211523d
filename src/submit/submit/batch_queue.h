// The batches a fusing queue holds that the driver has not been given: the open batch (the
// application's fused command buffers, in submission order, whose captures a command buffer of
// ours replays when it goes), the sealed ones (full, waiting for the flusher, in order), and
// the one the flusher is recording. All under the queue lock, except has_pending(); only a
// holder of the recording lock takes a batch out (queue_locks.h), so batches go in order.
#pragma once

#include "submit/semaphore_carry.h"

#include <vulkan/vulkan.h>

#include <atomic>
#include <cstdint>
#include <deque>
#include <vector>

namespace slipstream {
struct DeviceState;
struct CommandBufferState;
}  // namespace slipstream

namespace slipstream::submit {

// A batch not yet submitted: the command buffers whose captures it replays, in order.
struct HeldBatch {
    std::vector<const CommandBufferState*> cbs;
    std::vector<VkFence> fences;
    // A bit per fence in `fences` (fence_bit): a wait whose fences have none set needs no scan.
    uint64_t fence_bits = 0;
    // Semaphores its submissions signal, in their order (semaphore_carry.h); the batch's
    // submission signals them once its work is done.
    std::vector<SemaphoreValue> signals;
    // Waits its first submission carried (semaphore_carry.h): the batch's submission waits.
    std::vector<SemaphoreValue> waits;
    // Timeline waits whose values were reached when their submissions joined: met already, so
    // they neither split the batch nor hold it, but its submission names them. A layer below
    // that pairs each wait with a signal (the validation layer pairs a wait with the oldest
    // signal no wait has taken yet) would otherwise pair a later wait of the same semaphore
    // with the signal this one took, and lose track of what the later one waits for.
    std::vector<SemaphoreValue> reached_waits;
    // It holds semaphore operations an observer elsewhere must see submitted first (reached
    // waits too: another queue's signal of that semaphore goes after them, as it came).
    bool holds_semaphores() const { return !signals.empty() || !waits.empty() || !reached_waits.empty(); }
    uint32_t ops = 0, records = 0, lazy = 0;
    uint64_t opened_ns = 0;
    // Opened by a submission made after the application saw everything before it on the
    // queue complete: its first command buffer needs no fuse barrier (BatchRecorder).
    bool after_wait = false;
    // The fence the batch's own submission carries; the earlier ones are answered apart.
    VkFence last_fence() const { return fences.empty() ? VK_NULL_HANDLE : fences.back(); }
};

class BatchQueue {
public:
    explicit BatchQueue(DeviceState& device) : d_(device) {}

    // --- with the queue lock held ---
    bool open() const { return !open_.cbs.empty(); }
    const HeldBatch& open_batch() const { return open_; }
    // No batch is sealed or being recorded.
    bool none_behind() const { return sealed_.empty() && !recording_; }
    // Opens a batch (no batch is open) at `now` (`after_wait`: see HeldBatch).
    void open_at(uint64_t now, bool after_wait);
    // Notes one application command buffer in the open batch.
    void add(const CommandBufferState& cb);
    // The application's fence of a fused submission: signaled after the batch that holds it.
    void add_fence(VkFence fence) {
        open_.fences.push_back(fence);
        open_.fence_bits |= fence_bit(fence);
    }
    // One of 64 bits for a fence handle (handles are pointers or counters: mix the bits).
    static uint64_t fence_bit(VkFence fence) {
        const uint64_t h = uint64_t(reinterpret_cast<uintptr_t>(fence)) * 0x9e3779b97f4a7c15ull;
        return uint64_t(1) << (h >> 58);
    }
    // A fused submission's signals: signaled by the batch that holds it.
    void add_signals(const std::vector<SemaphoreValue>& signals);
    // The waits of the submission that opened the batch: the batch's submission waits.
    void add_waits(const std::vector<SemaphoreValue>& waits);
    // Waits already met that the batch's submission names all the same (HeldBatch).
    void add_reached_waits(const std::vector<SemaphoreValue>& waits);
    // Whether the open batch signals binary `semaphore` (a later wait in it may take that).
    bool signals_binary(VkSemaphore semaphore) const;
    // A wait in the open batch took its last signal of binary `semaphore`: neither goes.
    void pair_binary(VkSemaphore semaphore);
    // Whether one of `signals` meets a timeline wait the open batch carries.
    bool waited_by_open(const std::vector<SemaphoreValue>& signals) const;
    // The open batch is full: it goes to the flusher. False when the flusher is behind (two
    // batches waiting): then the caller flushes itself.
    bool seal();
    // Whether a batch not yet submitted carries one of these fences.
    bool holds_any(uint32_t count, const VkFence* fences) const;
    // Whether a batch not yet submitted signals one of these semaphores.
    bool signals_any(uint32_t count, const VkSemaphore* semaphores) const;
    // Whether a batch not yet submitted waits on one of these semaphores (reached waits too).
    bool waits_any(uint32_t count, const VkSemaphore* semaphores) const;
    // With the recording lock held too: takes out the oldest sealed batch (there is one), or
    // the open one.
    HeldBatch take_sealed();
    HeldBatch take_open();
    bool sealed_empty() const { return sealed_.empty(); }
    // The batch the flusher records with the queue lock let go (null: none), which holds_any
    // still sees.
    void recording(const HeldBatch* b) { recording_ = b; }
    // A batch left the queue's hands: submitted, or (`error`) it never will be; waits on its
    // fences then return the error (batch_fences.h).
    void done_with(const HeldBatch& b);
    void failed(const HeldBatch& b, VkResult error);
    // The device is lost: every batch held is dropped (its fences failed). Returns the loss.
    VkResult abandon_all();

    // --- any thread, no lock ---
    // A batch is open, sealed or being recorded.
    bool has_pending() const { return pending_.load(std::memory_order_acquire) != 0; }
    // A batch held (open, sealed or being recorded) signals or waits for semaphores of the
    // application's.
    bool holds_signals() const { return signal_batches_.load(std::memory_order_acquire) != 0; }

private:
    DeviceState& d_;
    HeldBatch open_;
    std::deque<HeldBatch> sealed_;
    const HeldBatch* recording_ = nullptr;
    std::atomic<uint32_t> pending_{0};
    // Held batches with semaphores (HeldBatch::holds_semaphores; DeviceState::held_signal_batches too).
    std::atomic<uint32_t> signal_batches_{0};
    void count_holder(bool held_before);
};

// The application's command buffers of a batch no replay will carry: they may be reset or
// freed once their work is done.
void unhold(const HeldBatch& b);

}  // namespace slipstream::submit
