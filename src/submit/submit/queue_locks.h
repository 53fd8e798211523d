// A fusing queue's two locks, and the one guard that takes both (FUSION.md rule 4).
//
// The queue lock is the queue's own while fusion is on: every VkQueue entry point of the layer
// takes it, and so does the flusher for its driver calls on the queue, so the driver never sees
// two threads on it. It guards the batches held (BatchQueue), our submissions and the timeline
// (QueueTimeline) and the kept error. The recording lock guards recording our command buffers
// (BatchRecorder: the replay's state and the narrowing history); only a holder of it takes a
// batch out, so batches are recorded and submitted in order.
//
// Order: the recording lock before the queue lock, never the reverse. The flusher records a
// batch holding the recording lock only, so submissions that join the open batch meanwhile do
// not wait for it. Two queues' locks are held together only by IdleWaitHold (fusion.h).
#pragma once

#include "core/clock.h"
#include "core/cpu_relax.h"

#include <cstdint>
#include <mutex>

namespace slipstream::submit {

// A mutex whose lock() polls for a while before it blocks. The queue lock is held for a driver
// call of ours at most (the flusher's vkQueueSubmit of a batch: 6.2 us on average, p90 10 us,
// H100), while blocking costs the waiter a futex sleep and the scheduler's wake-up: a streaming
// application's submissions that found the flusher in the driver waited 11.3 us on average, a
// whole submission's CPU time once per batch. Polling up to kPollNs covers such a hold; a longer
// one (an idle wait under the lock) blocks after it.
class PollingMutex {
public:
    static constexpr uint64_t kPollNs = 20000;
    void lock() {
        if (m_.try_lock()) return;
        const uint64_t start = now_ns();
        do {
            for (int i = 0; i < 32; ++i) cpu_relax();
            if (m_.try_lock()) return;
        } while (now_ns() - start < kPollNs);
        m_.lock();
    }
    bool try_lock() { return m_.try_lock(); }
    void unlock() { m_.unlock(); }

private:
    std::mutex m_;
};

class QueueLocks {
public:
    PollingMutex& queue() { return queue_; }
    std::mutex& recording() { return recording_; }

private:
    std::mutex recording_;
    PollingMutex queue_;
};

// Holds a queue's locks, taken in QueueLocks' order, until it goes; the only code that takes
// both. It may start with the queue lock alone (a submission that may not need to flush) and
// add the recording lock later, and the flusher lets the queue lock go while it records.
class QueueLock {
public:
    enum class Take { Both, QueueOnly };
    explicit QueueLock(QueueLocks& locks, Take take = Take::Both) : locks_(locks) {
        if (take == Take::Both) recording_ = std::unique_lock(locks.recording());
        queue_ = std::unique_lock(locks.queue(), std::try_to_lock);
        if (!queue_.owns_lock()) {
            // Contended (the flusher in a driver call on the queue, most often): timed, for
            // the statistics; the uncontended path costs what a plain lock costs.
            const uint64_t start = now_ns();
            queue_.lock();
            waited_ns_ = now_ns() - start;
        }
    }
    // How long the constructor waited for the queue lock (0: it was free).
    uint64_t waited_ns() const { return waited_ns_; }
    // Holding the queue lock alone: takes the recording lock as well. The queue lock is let go
    // first (the order), so what the caller read under it may have changed meanwhile; of a
    // submitting thread's queue, only the flusher can act then, and it only submits what is
    // held, in order. (Already held: nothing to do.)
    void add_recording() {
        if (recording_.owns_lock()) return;
        queue_.unlock();
        recording_ = std::unique_lock(locks_.recording());
        queue_.lock();
    }
    // Keeps the queue lock only (the flush a call needed is done; the call runs under it).
    void release_recording() { recording_.unlock(); }
    // With the recording lock held: the queue lock goes while a batch is recorded, and comes
    // back for its submission.
    void release_queue() { queue_.unlock(); }
    void retake_queue() { queue_.lock(); }

private:
    QueueLocks& locks_;
    std::unique_lock<std::mutex> recording_;
    std::unique_lock<PollingMutex> queue_;
    uint64_t waited_ns_ = 0;
};

}  // namespace slipstream::submit
