#include "submit/fusion.h"

#include "capture/capture_control.h"
#include "core/clock.h"
#include "core/log.h"
#include "core/object_state.h"
#include "submit/queue_fusion.h"
#include "waits/queue_idle.h"

#include <algorithm>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include <cerrno>
#include <chrono>
#include <cstring>

namespace slipstream::submit {

namespace {
// The device's fusing queues, copied under the device's lock: the list only grows, and each
// QueueFusion lives until vkDestroyDevice. (QueueState::fusion itself is read only by the
// thread that submits to its queue.)
// The first kSmall are also published lock-free (DeviceState::fusing_fast), so that every
// fence wait and status query on a device of few queues reads them without the device's lock.
class FusingQueues {
public:
    explicit FusingQueues(DeviceState& d) {
        n_ = d.fusing_fast_count.load(std::memory_order_acquire);
        if (n_ <= kSmall) {
            for (size_t i = 0; i < n_; ++i) small_[i] = d.fusing_fast[i].load(std::memory_order_relaxed);
            return;
        }
        std::lock_guard lock(d.mutex);
        n_ = d.fusing_queues.size();
        many_ = d.fusing_queues;
    }
    size_t size() const { return n_; }
    QueueFusion* operator[](size_t i) const { return n_ <= kSmall ? small_[i] : many_[i]; }

private:
    static constexpr size_t kSmall = DeviceState::kFusingFast;
    size_t n_ = 0;
    QueueFusion* small_[kSmall] = {};
    std::vector<QueueFusion*> many_;
};
}  // namespace

// --- device creation ------------------------------------------------------------------------

bool request_timeline_semaphores(const InstanceState& instance, VkPhysicalDevice physical_device,
                                 const VkDeviceCreateInfo& app_info, DeviceCreateStorage& storage) {
    storage.info = app_info;
    const VkLayerInstanceDispatchTable& id = instance.dispatch;
    VkPhysicalDeviceProperties props;
    id.GetPhysicalDeviceProperties(physical_device, &props);
    const uint32_t version = std::min(instance.api_version, props.apiVersion);
    const bool core = VK_API_VERSION_MAJOR(version) > 1 || VK_API_VERSION_MINOR(version) >= 2;

    // Where the application already speaks of the feature.
    VkBool32* feature = nullptr;
    for (auto* p = static_cast<const VkBaseInStructure*>(app_info.pNext); p; p = p->pNext) {
        if (p->sType == VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES)
            feature = &const_cast<VkPhysicalDeviceVulkan12Features*>(
                           reinterpret_cast<const VkPhysicalDeviceVulkan12Features*>(p))->timelineSemaphore;
        else if (p->sType == VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_FEATURES)
            feature = &const_cast<VkPhysicalDeviceTimelineSemaphoreFeatures*>(
                           reinterpret_cast<const VkPhysicalDeviceTimelineSemaphoreFeatures*>(p))->timelineSemaphore;
    }
    if (feature && *feature) return true;

    bool extension_enabled = false;
    for (uint32_t i = 0; i < app_info.enabledExtensionCount; ++i)
        if (std::strcmp(app_info.ppEnabledExtensionNames[i], VK_KHR_TIMELINE_SEMAPHORE_EXTENSION_NAME) == 0)
            extension_enabled = true;
    if (!core && !extension_enabled) {
        uint32_t count = 0;
        id.EnumerateDeviceExtensionProperties(physical_device, nullptr, &count, nullptr);
        std::vector<VkExtensionProperties> exts(count);
        id.EnumerateDeviceExtensionProperties(physical_device, nullptr, &count, exts.data());
        const bool available = std::any_of(exts.begin(), exts.begin() + count, [](const VkExtensionProperties& e) {
            return std::strcmp(e.extensionName, VK_KHR_TIMELINE_SEMAPHORE_EXTENSION_NAME) == 0;
        });
        if (!available) return false;
    }
    // Does the device support it? (A 1.0 instance without properties2 cannot ask: no fusion.)
    const bool instance_11 = VK_API_VERSION_MAJOR(instance.api_version) > 1 || VK_API_VERSION_MINOR(instance.api_version) >= 1;
    PFN_vkGetPhysicalDeviceFeatures2 features2 =
        instance_11 && id.GetPhysicalDeviceFeatures2 ? id.GetPhysicalDeviceFeatures2 : id.GetPhysicalDeviceFeatures2KHR;
    if (!features2) return false;
    VkPhysicalDeviceTimelineSemaphoreFeatures supported{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_FEATURES};
    VkPhysicalDeviceFeatures2 all{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &supported};
    features2(physical_device, &all);
    if (!supported.timelineSemaphore) return false;

    if (feature) {
        // The application's own structure says false: true for the call, put back after it.
        *feature = VK_TRUE;
        storage.patched = feature;
    } else {
        storage.timeline.timelineSemaphore = VK_TRUE;
        storage.timeline.pNext = const_cast<void*>(app_info.pNext);
        storage.info.pNext = &storage.timeline;
    }
    if (!core && !extension_enabled) {
        storage.extensions.assign(app_info.ppEnabledExtensionNames,
                                  app_info.ppEnabledExtensionNames + app_info.enabledExtensionCount);
        storage.extensions.push_back(VK_KHR_TIMELINE_SEMAPHORE_EXTENSION_NAME);
        storage.info.enabledExtensionCount = uint32_t(storage.extensions.size());
        storage.info.ppEnabledExtensionNames = storage.extensions.data();
    }
    return true;
}

void restore_create_info(DeviceCreateStorage& storage) {
    if (storage.patched) *storage.patched = VK_FALSE;
    storage.patched = nullptr;
}

// --- the deadline flusher --------------------------------------------------------------------

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
    std::vector<VkSemaphore> semaphores;
    std::vector<uint64_t> values;
    std::unique_lock lock(mutex_);
    while (!stop_) {
        if (d_.open_batches.load(std::memory_order_acquire) == 0) {
            cv_.wait(lock, [&] { return stop_ || woken_; });
            woken_ = false;
            continue;
        }
        lock.unlock();
        const FusingQueues queues(d_);
        semaphores.clear();
        values.clear();
        uint64_t wake_at = UINT64_MAX;
        for (size_t i = 0; i < queues.size(); ++i) {
            QueueFusion* f = queues[i];
            uint64_t value = 0;
            // Sealed batches, and the open one when its time has come, one after the other.
            while (f->has_pending() && f->flusher_turn(max_defer_ns, &wake_at, &value)) {
            }
            if (value) {
                // The GPU runs dry once what runs now is done.
                semaphores.push_back(f->timeline());
                values.push_back(value);
            }
        }
        const uint64_t now = now_ns();
        const uint64_t timeout = wake_at == UINT64_MAX ? kSealedPollNs : wake_at > now ? wake_at - now : 0;
        if (!semaphores.empty() && poll_ns > 0) {
            // Polling: the next look at the queues' counters (flusher_turn reads them) comes
            // after poll_ns, or at once when a batch is sealed or opened (wake()).
            lock.lock();
            if (!stop_ && !woken_) cv_.wait_for(lock, std::chrono::nanoseconds(std::min(timeout, poll_ns)));
            woken_ = false;
        } else if (!semaphores.empty()) {
            // No lock is held: submissions go on meanwhile. A batch sealed meanwhile waits at
            // most kSealedPollNs: only the driver could end this wait early, and a host signal
            // of a semaphore of ours for it (vkSignalSemaphore) stalled the submitting thread
            // for ~100 us on the H200.
            VkSemaphoreWaitInfo wait{VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO};
            wait.flags = VK_SEMAPHORE_WAIT_ANY_BIT;
            wait.semaphoreCount = uint32_t(semaphores.size());
            wait.pSemaphores = semaphores.data();
            wait.pValues = values.data();
            const uint64_t start = trace_ ? now_ns() : 0;
            const VkResult r =
                watch_device_loss(d_, d_.fusion_wait_semaphores(d_.device, &wait, std::min(timeout, kSealedPollNs)));
            if (trace_)
                trace_->add({now_ns(), 0, TraceEvent::Woke, FlushReason::Full, uint32_t(semaphores.size()), 0,
                             timeout, uint64_t(int64_t(r)), 0, now_ns() - start});
            lock.lock();
        } else {
            lock.lock();
            if (timeout > 0 && !stop_) cv_.wait_for(lock, std::chrono::nanoseconds(timeout));
        }
    }
}

// --- lifetime ----------------------------------------------------------------------------------

void start_device(DeviceState& d) {
    const bool core = d.dispatch.GetSemaphoreCounterValue && d.dispatch.WaitSemaphores &&
                      (VK_API_VERSION_MINOR(std::min(d.instance->api_version, d.properties.apiVersion)) >= 2 ||
                       VK_API_VERSION_MAJOR(d.instance->api_version) > 1);
    d.fusion_counter_value = core ? d.dispatch.GetSemaphoreCounterValue : d.dispatch.GetSemaphoreCounterValueKHR;
    d.fusion_wait_semaphores = core ? d.dispatch.WaitSemaphores : d.dispatch.WaitSemaphoresKHR;
    if (!d.fusion_counter_value || !d.fusion_wait_semaphores) {
        log(LogLevel::Warn, "%s: no timeline semaphore commands: fusion stays off", d.properties.deviceName);
        return;
    }
    d.fusion = std::make_unique<DeviceFusion>(d);
    log(LogLevel::Info, "%s: fusing command buffers (batch_max %u, max_defer_us %u, fuse_barrier %s)",
        d.properties.deviceName, d.settings.batch_max, d.settings.max_defer_us, d.settings.fuse_barrier ? "on" : "off");
}

void start_queue(DeviceState& d, QueueState& q) {
    if (!d.fusion) return;
    std::lock_guard lock(d.mutex);
    if (q.fusion) return;
    auto f = std::make_unique<QueueFusion>(d, q);
    if (!f->init()) {
        log(LogLevel::Warn, "queue %u.%u: fusion could not start (command pool or semaphore): its work passes through",
            q.family, q.index);
        return;
    }
    d.fusing_queues.push_back(f.get());
    if (const size_t i = d.fusing_queues.size() - 1; i < DeviceState::kFusingFast)
        d.fusing_fast[i].store(f.get(), std::memory_order_relaxed);
    d.fusing_fast_count.store(uint32_t(d.fusing_queues.size()), std::memory_order_release);
    {
        std::lock_guard idle_lock(q.idle.mutex);
        q.idle.timeline_tracked = true;
    }
    q.fusion = std::move(f);
}

void stop_device(DeviceState& d) {
    if (!d.fusion) return;
    d.fusion->stop();
    const FusingQueues queues(d);
    for (size_t i = 0; i < queues.size(); ++i) {
        QueueFusion* f = queues[i];
        QueueLock lock(f->locks());
        f->flush(FlushReason::Destroy);
        // The application waited for what it submitted; ours may still run (and its command
        // buffers and semaphore go with the queue's state).
        if (f->in_flight() > 0) f->wait_idle();
    }
    d.fusion.reset();
}

// --- submission --------------------------------------------------------------------------------

namespace {

PassReason classify_command_buffer(const DeviceState& d, const QueueState& q, VkCommandBuffer handle,
                                   const CommandBufferState** out) {
    const CommandBufferState* cb = find_command_buffer(handle);
    *out = cb;
    if (!cb || !cb->capture || !cb->capture->capturable() || !cb->capture->ended() ||
        cb->level != VK_COMMAND_BUFFER_LEVEL_PRIMARY)
        return PassReason::NotCaptured;
    // A command buffer of another device (invalid usage drivers may tolerate) is passed through
    // as well: its resets and frees settle only its own device's batches.
    if (cb->queue_family != q.family || cb->device != &d) return PassReason::OtherFamily;
    // A lazy capture keeps what it names alive; one beside a native recording does not.
    if (!cb->lazy && cb->layout_epoch != d.layouts.epoch()) return PassReason::LayoutsDestroyed;
    return PassReason::None;
}

uint32_t command_buffer_count(const VkSubmitInfo& s) { return s.commandBufferCount; }
VkCommandBuffer command_buffer(const VkSubmitInfo& s, uint32_t i) { return s.pCommandBuffers[i]; }
uint32_t command_buffer_count(const VkSubmitInfo2& s) { return s.commandBufferInfoCount; }
VkCommandBuffer command_buffer(const VkSubmitInfo2& s, uint32_t i) { return s.pCommandBufferInfos[i].commandBuffer; }

void count_passed(DeviceStats& stats, PassReason why, uint64_t n) {
    switch (why) {
    case PassReason::None: break;
    case PassReason::NotCaptured: stats.add(Counter::PassedNotCaptured, n); break;
    case PassReason::Semaphores: stats.add(Counter::PassedSemaphores, n); break;
    case PassReason::SubmitExtension: stats.add(Counter::PassedSubmitExtension, n); break;
    case PassReason::OtherFamily: stats.add(Counter::PassedOtherFamily, n); break;
    case PassReason::LayoutsDestroyed: stats.add(Counter::PassedLayoutsDestroyed, n); break;
    }
}

// A lazily recorded command buffer submitted before vkEndCommandBuffer (a misuse) goes to the
// driver as the application's own, recorded natively from its capture and still recording, as
// the driver alone would get it; a replay of ours would be ended, and run what it holds.
template <typename Info>
void record_unended_natively(uint32_t count, const Info* submits) {
    for (uint32_t i = 0; i < count; ++i)
        for (uint32_t j = 0; j < command_buffer_count(submits[i]); ++j)
            if (CommandBufferState* cb = find_command_buffer(command_buffer(submits[i], j));
                cb && cb->lazy && !cb->capture->ended())
                capture::record_natively(*cb);
}

// Small calls are the common case: their command buffers' states without a heap allocation.
constexpr uint32_t kInlineStates = 16;

template <typename Info, typename Next>
VkResult fused_submit(QueueState& q, uint32_t count, const Info* submits, VkFence fence, Next next) {
    DeviceState& d = *q.device;
    QueueFusion& f = *q.fusion;
    // What must submit held batches later takes the recording lock as well (add_recording):
    // the application's submissions to this queue are its own to serialize, so meanwhile only
    // the flusher can act, and it only submits what is held, in order.
    QueueLock lock(f.locks(), QueueLock::Take::QueueOnly);
    if (VkResult error = f.take_error(); error != VK_SUCCESS) return error;

    PassReason why = PassReason::None;
    uint32_t total = 0;
    bool lazy = false;  // a command buffer only a replay can carry
    const CommandBufferState* inline_states[kInlineStates];
    std::vector<const CommandBufferState*> many;
    // A device that handed out a command Slipstream does not know stops fusing at once.
    if (!d.fusable.load(std::memory_order_relaxed)) why = PassReason::NotCaptured;
    for (uint32_t i = 0; i < count && why == PassReason::None; ++i) {
        why = classify_submit(submits[i]);
        for (uint32_t j = 0; j < command_buffer_count(submits[i]) && why == PassReason::None; ++j) {
            const CommandBufferState* cb;
            why = classify_command_buffer(d, q, command_buffer(submits[i], j), &cb);
            lazy = lazy || (cb && cb->lazy);
            if (total < kInlineStates) inline_states[total] = cb;
            else many.push_back(cb);
            ++total;
        }
    }
    if (why == PassReason::None && total > 0) {
        f.note_submission(fence);
        // (A lazily recorded one goes into a batch, flushed at once below; so does one the
        // closing barrier the queue owes must come before: the batch's replay puts it there.)
        auto owes_closing = [&] {
            if (!f.owes_trailing_barrier()) return false;
            for (uint32_t i = 0; i < total; ++i)
                if (f.leaves_narrowed_stages(i < kInlineStates ? inline_states[i] : many[i - kInlineStates]))
                    return true;
            return false;
        };
        const bool idle_latency =
            submit_directly(f.latency_mode(), f.has_pending(), f.in_flight()) && f.waits_seen_below();
        d.latency_families.note(q.family, idle_latency);
        if (!lazy && idle_latency && !owes_closing()) {
            d.stats.add(Counter::CommandBuffersDirect, total);
            return f.submit_direct(count, submits, fence, next);
        }
    }
    if (why == PassReason::None && (total > 0 || f.open())) {
        const bool was_open = f.open();
        for (uint32_t i = 0; i < total; ++i) f.append(*(i < kInlineStates ? inline_states[i] : many[i - kInlineStates]));
        if (fence) f.add_fence(fence);
        d.stats.add(Counter::CommandBuffersFused, total);
        auto flush_now = [&](FlushReason reason) {
            lock.add_recording();
            return f.flush(reason);
        };
        // An exportable fence must be the driver's own: it leaves with the batch now.
        if (fence && d.fusion->fences().exportable(fence)) return flush_now(FlushReason::Observe);
        if (d.settings.max_defer_us == 0) return flush_now(FlushReason::Deadline);
        switch (decide_after_append(f.batch_state(), d.settings.batch_max)) {
        case AfterAppend::FlushFull:
            // The flusher records and submits it, unless it is behind.
            if (!f.seal()) return flush_now(FlushReason::Full);
            d.fusion->wake();
            return VK_SUCCESS;
        case AfterAppend::FlushGpuStarving: return flush_now(FlushReason::GpuStarving);
        case AfterAppend::Keep: break;
        }
        if (!was_open) d.fusion->wake();
        return VK_SUCCESS;
    }
    // As it is, after everything before it (FUSION.md rule 10), and after the barrier that
    // closes narrowed batches where its command buffers may work in other stages.
    uint32_t cbs = 0;
    for (uint32_t i = 0; i < count; ++i) cbs += command_buffer_count(submits[i]);
    count_passed(d.stats, why, cbs);
    lock.add_recording();
    bool leaves = false;
    for (uint32_t i = 0; i < count && !leaves; ++i)
        for (uint32_t j = 0; j < command_buffer_count(submits[i]) && !leaves; ++j)
            leaves = f.leaves_narrowed_stages(find_command_buffer(command_buffer(submits[i], j)));
    if (VkResult r = f.flush(FlushReason::PassThrough, leaves); r < 0) return r;
    record_unended_natively(count, submits);
    return f.submit_passed(count, submits, fence, next);
}

}  // namespace

VkResult queue_submit(QueueState& q, uint32_t count, const VkSubmitInfo* submits, VkFence fence, PFN_vkQueueSubmit next) {
    return fused_submit(q, count, submits, fence, next);
}

VkResult queue_submit2(QueueState& q, uint32_t count, const VkSubmitInfo2* submits, VkFence fence,
                       PFN_vkQueueSubmit2 next) {
    return fused_submit(q, count, submits, fence, next);
}

// --- flushes -----------------------------------------------------------------------------------

VkResult flush_queue(QueueState& q, FlushReason reason) {
    QueueFusion* f = q.fusion.get();
    if (!f) return VK_SUCCESS;
    QueueLock lock(f->locks());
    if (reason == FlushReason::Observe) f->note_wait();
    VkResult r = f->flush(reason);
    if (r == VK_SUCCESS) r = f->take_error();
    return r;
}

namespace {
// Flushes the open batches of `d` for which `wanted(queue fusion)` holds, under their locks.
template <typename Wanted>
VkResult flush_open(DeviceState& d, FlushReason reason, Wanted&& wanted) {
    if (d.open_batches.load(std::memory_order_acquire) == 0) return VK_SUCCESS;
    const FusingQueues queues(d);
    VkResult first = VK_SUCCESS;
    for (size_t i = 0; i < queues.size(); ++i) {
        QueueFusion* f = queues[i];
        if (!f->has_pending()) continue;
        QueueLock lock(f->locks());
        if (!wanted(*f)) continue;
        if (reason == FlushReason::Observe) f->note_wait();
        VkResult r = f->flush(reason);
        if (r < 0 && first == VK_SUCCESS) first = r;
    }
    return first;
}
}  // namespace

VkResult flush_device(DeviceState& d, FlushReason reason) {
    return flush_open(d, reason, [](const QueueFusion&) { return true; });
}

void flush_before_destroy(DeviceState& d) {
    if (d.fusion) flush_device(d, FlushReason::Destroy);
}

VkResult fusion_error(DeviceState& d, uint32_t count, const VkFence* fences) {
    if (!d.fusion) return VK_SUCCESS;
    if (d.lost.load(std::memory_order_acquire)) return VK_ERROR_DEVICE_LOST;
    if (d.fusion_errors.load(std::memory_order_acquire) != 0) {
        const FusingQueues queues(d);
        for (size_t i = 0; i < queues.size(); ++i) {
            std::lock_guard lock(queues[i]->locks().queue());
            if (VkResult r = queues[i]->take_error(); r != VK_SUCCESS) return r;
        }
    }
    return count ? d.fusion->fences().failure(count, fences) : VK_SUCCESS;
}

void realize_fences(DeviceState& d, uint32_t count, const VkFence* fences) {
    if (!d.fusion || d.fusion->fences().none()) return;
    for (const PendingFence& p : d.fusion->fences().take(count, fences)) {
        std::lock_guard lock(p.queue->locks().queue());
        p.queue->signal_fence(p.fence);
    }
}

void forget_fences(DeviceState& d, uint32_t count, const VkFence* fences, bool destroyed) {
    if (d.fusion) d.fusion->fences().forget(count, fences, destroyed);
}

void note_fences_seen_done(DeviceState& d, uint32_t count, const VkFence* fences) {
    if (!d.fusion) return;
    const FusingQueues queues(d);
    for (size_t i = 0; i < queues.size(); ++i) {
        if (queues[i]->latest_fence_in(count, fences)) queues[i]->note_seen_done();
        for (uint32_t k = 0; k < count; ++k) queues[i]->fence_signaled(fences[k]);
    }
}

void release_followed_fences(DeviceState& d, uint32_t count, const VkFence* fences) {
    if (!d.fusion) return;
    const FusingQueues queues(d);
    for (size_t i = 0; i < queues.size(); ++i) {
        QueueFusion* f = queues[i];
        for (uint32_t k = 0; k < count; ++k) f->fence_released(fences[k]);
    }
}

void note_device_wait(DeviceState& d) {
    const FusingQueues queues(d);
    for (size_t i = 0; i < queues.size(); ++i) queues[i]->note_wait();
}

VkResult flush_for_fences(DeviceState& d, uint32_t count, const VkFence* fences) {
    // A wait on a queue's newest fence is a wait for everything it was given: what the
    // queue's mode is learnt from.
    if (!d.fusion) return VK_SUCCESS;
    const FusingQueues queues(d);
    VkResult first = VK_SUCCESS;
    for (size_t i = 0; i < queues.size(); ++i) {
        QueueFusion* f = queues[i];
        if (f->latest_fence_in(count, fences)) f->note_wait();
        // (The submission that carries a fence waited for came before the wait.)
        if (!f->has_pending()) continue;
        {
            // A wait on an older fence (a ring coming round) must not wait for the flusher.
            std::lock_guard lock(f->locks().queue());
            if (!f->holds_any(count, fences)) continue;
        }
        QueueLock lock(f->locks());
        VkResult r = f->flush(FlushReason::Observe);
        if (r < 0 && first == VK_SUCCESS) first = r;
    }
    return first;
}

FlushedQueue::FlushedQueue(QueueState* q, FlushReason reason) {
    if (!q || !q->fusion) return;
    lock_.emplace(q->fusion->locks());
    error_ = q->fusion->flush(reason);
    lock_->release_recording();
}

IdleWaitHold::IdleWaitHold(QueueState& q) {
    if (q.fusion) one_ = std::unique_lock(q.fusion->locks().queue());
}

IdleWaitHold::IdleWaitHold(DeviceState& d) {
    if (!d.fusion) return;
    const FusingQueues queues(d);
    all_.reserve(queues.size());
    // Always in the device's order; no other path holds two queues' locks.
    for (size_t i = 0; i < queues.size(); ++i) all_.emplace_back(queues[i]->locks().queue());
}

}  // namespace slipstream::submit
