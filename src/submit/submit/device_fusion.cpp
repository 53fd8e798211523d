#include "submit/device_fusion.h"

#include "core/clock.h"
#include "core/log.h"
#include "state/object_state.h"
#include "submit/fusing_queues.h"
#include "submit/queue_fusion.h"

#include <algorithm>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include <chrono>
#include <cstring>

namespace slipstream::submit {

DeviceFusion::DeviceFusion(DeviceState& device) : d_(device) {
    if (!d_.settings.fuse_trace.empty()) trace_ = std::make_unique<FuseTrace>(d_.settings.fuse_trace);
    thread_ = std::thread([this] { run(); });
}

DeviceFusion::~DeviceFusion() {
    stop();
    if (const int error = trace_ ? trace_->write() : 0)
        log(LogLevel::Error, "cannot write the fusion trace '%s' (VK_SLIPSTREAM_FUSE_TRACE): %s",
            printable(d_.settings.fuse_trace).c_str(), std::strerror(error));
}

void DeviceFusion::stop() {
    if (!thread_.joinable()) return;
    {
        std::lock_guard lock(mutex_);
        stop_ = true;
    }
    cv_.notify_one();
    thread_.join();
}

void DeviceFusion::wake() {
    {
        std::lock_guard lock(mutex_);
        woken_ = true;
    }
    cv_.notify_one();
}

namespace {
constexpr uint64_t kSealedPollNs = 20000;
}

void DeviceFusion::run() {
    const uint64_t max_defer_ns = uint64_t(d_.settings.max_defer_us) * 1000;
    const uint64_t poll_ns = uint64_t(d_.settings.flusher_poll_us) * 1000;
#ifdef __linux__
    // Sleeps of a few microseconds, not the default 50 us of timer slack.
    if (poll_ns > 0) prctl(PR_SET_TIMERSLACK, 1000UL, 0UL, 0UL, 0UL);
#endif
    std::unique_lock lock(mutex_);
    while (!stop_) {
        if (d_.open_batches.load(std::memory_order_seq_cst) == 0) {
            if (watch_running(lock, poll_ns)) continue;
            watching_.store(false, std::memory_order_seq_cst);
            if (d_.armed_replays.load(std::memory_order_acquire) == 0) {
                cv_.wait(lock, [&] { return stop_ || woken_ || d_.open_batches.load(std::memory_order_seq_cst) != 0; });
            } else {
                lock.unlock();
                uint64_t wake_at = UINT64_MAX;
                watch_armed(&wake_at);
                lock.lock();
                const uint64_t now = now_ns();
                if (!stop_ && !woken_ && wake_at > now) cv_.wait_for(lock, std::chrono::nanoseconds(wake_at - now));
            }
            woken_ = false;
            continue;
        }
        lock.unlock();
        uint64_t wake_at = UINT64_MAX;
        serve_queues(max_defer_ns, &wake_at);
        watch_until_ = now_ns() + max_defer_ns;
        if (d_.armed_replays.load(std::memory_order_acquire) != 0) watch_armed(&wake_at);
        const uint64_t now = now_ns();
        const uint64_t timeout = wake_at == UINT64_MAX ? kSealedPollNs : wake_at > now ? wake_at - now : 0;
        if (!semaphores_.empty() && poll_ns > 0) {
            // Polling: the next look at the queues' counters (flusher_turn reads them) comes
            // after poll_ns, or at once when a batch is sealed or opened (wake()).
            watching_.store(true, std::memory_order_seq_cst);
            lock.lock();
            if (!stop_ && !woken_) cv_.wait_for(lock, std::chrono::nanoseconds(std::min(timeout, poll_ns)));
            woken_ = false;
        } else if (!semaphores_.empty()) {
            watching_.store(false, std::memory_order_seq_cst);
            wait_for_timelines(timeout);
            lock.lock();
        } else {
            watching_.store(false, std::memory_order_seq_cst);
            lock.lock();
            if (timeout > 0 && !stop_) cv_.wait_for(lock, std::chrono::nanoseconds(timeout));
        }
    }
}

void DeviceFusion::serve_queues(uint64_t max_defer_ns, uint64_t* wake_at) {
    const FusingQueues queues(d_);
    semaphores_.clear();
    values_.clear();
    queues_.clear();
    for (size_t i = 0; i < queues.size(); ++i) {
        QueueFusion* f = queues[i];
        uint64_t value = 0;
        // Sealed batches, and the open one when its time has come, one after the other.
        while (f->has_pending() && f->flusher_turn(max_defer_ns, wake_at, &value)) {
        }
        if (value) {
            // The GPU runs dry once what runs now is done.
            semaphores_.push_back(f->timeline());
            values_.push_back(value);
            queues_.push_back(f);
        }
    }
}

void DeviceFusion::watch_armed(uint64_t* wake_at) {
    const FusingQueues queues(d_);
    const uint64_t now = now_ns();
    for (size_t i = 0; i < queues.size(); ++i) {
        queues[i]->unblock_arming(now, wake_at);  // (its submitting thread holds the queue's lock)
        if (!queues[i]->armed()) continue;
        std::lock_guard lock(queues[i]->locks().queue());
        queues[i]->disarm_if_late(now, wake_at);
    }
}

bool DeviceFusion::watch_running(std::unique_lock<std::mutex>& lock, uint64_t poll_ns) {
    // Our work still runs (a stream's batches, most often): look again in poll_ns rather than
    // sleep until the next batch opens and wakes us. Only for as long as a batch may wait
    // (MAX_DEFER_US) since the last one was served: a long GPU job with nothing submitted after
    // it costs no polling beyond that.
    if (d_.armed_replays.load(std::memory_order_acquire) != 0 || poll_ns == 0 || semaphores_.empty() ||
        now_ns() >= watch_until_)
        return false;
    watching_.store(true, std::memory_order_seq_cst);
    if (!stop_ && !woken_ && d_.open_batches.load(std::memory_order_seq_cst) == 0)
        cv_.wait_for(lock, std::chrono::nanoseconds(poll_ns));
    woken_ = false;
    lock.unlock();
    drop_completed_timelines();
    lock.lock();
    return true;
}

void DeviceFusion::drop_completed_timelines() {
    size_t kept = 0;
    for (size_t i = 0; i < semaphores_.size(); ++i) {
        uint64_t value = 0;
        if (d_.fusion_counter_value(d_.device, semaphores_[i], &value) != VK_SUCCESS) continue;
        queues_[i]->saw_completed(value);
        if (value < values_[i]) {
            semaphores_[kept] = semaphores_[i];
            values_[kept] = values_[i];
            queues_[kept++] = queues_[i];
        }
    }
    semaphores_.resize(kept);
    values_.resize(kept);
    queues_.resize(kept);
}

void DeviceFusion::wait_for_timelines(uint64_t timeout_ns) {
    // No lock is held: submissions go on meanwhile. A batch sealed meanwhile waits at most
    // kSealedPollNs: only the driver could end this wait early, and a host signal of a
    // semaphore of ours for it (vkSignalSemaphore) stalled the submitting thread for ~100 us
    // on the H200.
    VkSemaphoreWaitInfo wait{VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO};
    wait.flags = VK_SEMAPHORE_WAIT_ANY_BIT;
    wait.semaphoreCount = uint32_t(semaphores_.size());
    wait.pSemaphores = semaphores_.data();
    wait.pValues = values_.data();
    const uint64_t start = trace_ ? now_ns() : 0;
    const VkResult r =
        watch_device_loss(d_, d_.fusion_wait_semaphores(d_.device, &wait, std::min(timeout_ns, kSealedPollNs)));
    if (trace_)
        trace_->add({now_ns(), 0, TraceEvent::Woke, FlushReason::Full, uint32_t(semaphores_.size()), 0, timeout_ns,
                     uint64_t(int64_t(r)), 0, now_ns() - start});
}

}  // namespace slipstream::submit
