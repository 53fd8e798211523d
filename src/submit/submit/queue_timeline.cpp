#include "submit/queue_timeline.h"

#include "core/clock.h"
#include "state/object_state.h"
#include "submit/device_fusion.h"
#include "submit/timeline_signal.h"
#include "idle/queue_idle.h"

namespace slipstream::submit {

QueueTimeline::~QueueTimeline() {
    const VkLayerDispatchTable& d = d_.dispatch;
    // vkDestroyDevice requires idle queues; the pool's command buffers go with it.
    if (pool_) d.DestroyCommandPool(d_.device, pool_, nullptr);
    if (timeline_) d.DestroySemaphore(d_.device, timeline_, nullptr);
}

bool QueueTimeline::init() {
    const VkLayerDispatchTable& d = d_.dispatch;
    if (!d.CreateSemaphore || !d_.fusion_counter_value) return false;
    VkCommandPoolCreateInfo pool{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    pool.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT | VK_COMMAND_POOL_CREATE_TRANSIENT_BIT;
    pool.queueFamilyIndex = q_.family;
    if (d.CreateCommandPool(d_.device, &pool, nullptr, &pool_) != VK_SUCCESS) {
        pool_ = VK_NULL_HANDLE;
        return false;
    }
    VkSemaphoreTypeCreateInfo type{VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO};
    type.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
    VkSemaphoreCreateInfo info{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, &type};
    if (d.CreateSemaphore(d_.device, &info, nullptr, &timeline_) != VK_SUCCESS) {
        timeline_ = VK_NULL_HANDLE;
        return false;
    }
    return true;
}

// --- the one submission path -------------------------------------------------------------------

template <typename Info, typename Next>
VkResult QueueTimeline::submit_as(const OurSubmission& s, TrackedSubmission& tracked, Next next, uint32_t count,
                                  const Info* infos) {
    if (armed_.armed()) armed_.disarm(Counter::ArmDisarmedQueueCall);
    FuseTrace* t = s.traced ? tracer() : nullptr;
    const uint64_t busy = t ? in_flight() : 0;
    // (The clock is read only where a trace or the submission cost needs it: the latency path
    // pays for none.)
    const uint64_t start = t || (s.value && !s.followed) ? now_ns() : 0;
    const VkResult r = next(q_.queue, count, infos, tracked.fence());
    tracked.end(r);
    if (t) trace(*t, s.event, s.reason, s.cbs, s.ops == kUnknownOps ? 0 : s.ops, s.waited_ns, busy, now_ns() - start);
    settle(s, r, start);
    return r;
}

VkResult QueueTimeline::submit(const OurSubmission& s, TrackedSubmission& tracked, PFN_vkQueueSubmit next,
                               uint32_t count, const VkSubmitInfo* infos) {
    return submit_as(s, tracked, next, count, infos);
}

VkResult QueueTimeline::submit(const OurSubmission& s, TrackedSubmission& tracked, PFN_vkQueueSubmit2 next,
                               uint32_t count, const VkSubmitInfo2* infos) {
    return submit_as(s, tracked, next, count, infos);
}

void QueueTimeline::settle(const OurSubmission& s, VkResult result, uint64_t start_ns) {
    if (s.followed) {
        if (result == VK_SUCCESS) follow_.start(s.followed, s.cb);
        else watch_device_loss(d_, result);
    } else if (s.value) {
        submitted(s.cb, s.value, result, start_ns, s.ops);
    } else {
        d_.stats.add(Counter::DriverSubmits);  // (the caller sees to a loss)
    }
}

void QueueTimeline::submitted(VkCommandBuffer cb, uint64_t value, VkResult result, uint64_t start_ns, uint32_t ops) {
    d_.stats.add(Counter::DriverSubmits);
    if (result == VK_SUCCESS) {
        // Nothing of ours runs: the round trip of a submission of one operation is what one
        // submission costs. A bigger one's round trip holds its work too (a full batch of the
        // bench's dependent kernels: ~130 us on the H200), and each such sample raised the cost
        // by the decay's eighth, until the flusher let an idle GPU wait 170 us per batch.
        if (samples_submit_cost(ops) && in_flight_.empty() && !probe_value_) {
            probe_value_ = value;
            probe_start_ns_ = start_ns;
        }
        submitted_.store(value, std::memory_order_release);
        in_flight_.push_back({cb, value});
    } else {
        watch_device_loss(d_, result);
    }
}

// --- what completed ----------------------------------------------------------------------------

uint64_t QueueTimeline::completed_value() {
    uint64_t value = 0;
    if (watch_device_loss(d_, d_.fusion_counter_value(d_.device, timeline_, &value)) != VK_SUCCESS)
        return 0;  // lost (or out of memory): nothing completes
    saw_completed(value);
    return value;
}

uint64_t QueueTimeline::in_flight() {
    const uint64_t followed = (followed_busy() ? 1 : 0) + (armed_.busy() ? 1 : 0);
    const uint64_t submitted = submitted_.load(std::memory_order_relaxed);
    if (in_flight_.empty()) return followed;
    const uint64_t done = completed_value();
    if (probe_value_ && done >= probe_value_) {
        submit_cost_ns_.store(next_submit_cost(submit_cost_ns(), now_ns() - probe_start_ns_), std::memory_order_relaxed);
        probe_value_ = 0;
    }
    recycle(done);
    return (done >= submitted ? 0 : submitted - done) + followed;
}

VkResult QueueTimeline::poll_idle() {
    if (untracked_work_) return VK_INCOMPLETE;
    if (followed_busy() || armed_.busy()) return VK_NOT_READY;
    if (in_flight_.empty()) return VK_SUCCESS;
    uint64_t done = 0;
    if (VkResult r = watch_device_loss(d_, d_.fusion_counter_value(d_.device, timeline_, &done)); r != VK_SUCCESS)
        return r;
    recycle(done);
    return done >= submitted_.load(std::memory_order_relaxed) ? VK_SUCCESS : VK_NOT_READY;
}

void QueueTimeline::recycle(uint64_t completed) {
    while (!in_flight_.empty() && in_flight_.front().value <= completed) {
        if (in_flight_.front().cb) free_.push_back(in_flight_.front().cb);
        in_flight_.pop_front();
    }
}

VkResult QueueTimeline::wait_idle() {
    armed_.disarm(Counter::ArmDisarmedQueueCall);
    return d_.dispatch.QueueWaitIdle(q_.queue);
}

// --- our command buffers -----------------------------------------------------------------------

VkCommandBuffer QueueTimeline::acquire_command_buffer(VkResult* error) {
    *error = VK_SUCCESS;
    if (free_.empty() && !in_flight_.empty()) recycle(completed_value());
    if (!free_.empty()) {
        VkCommandBuffer cb = free_.back();
        free_.pop_back();
        return cb;
    }
    VkCommandBufferAllocateInfo info{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    info.commandPool = pool_;
    info.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    info.commandBufferCount = 1;
    VkCommandBuffer cb = VK_NULL_HANDLE;
    if ((*error = d_.dispatch.AllocateCommandBuffers(d_.device, &info, &cb)) != VK_SUCCESS) return VK_NULL_HANDLE;
    // A dispatchable handle the loader did not make: give it the device's dispatch pointer.
    if (d_.set_loader_data && (*error = d_.set_loader_data(d_.device, cb)) != VK_SUCCESS) {
        d_.dispatch.FreeCommandBuffers(d_.device, pool_, 1, &cb);
        return VK_NULL_HANDLE;
    }
    return cb;
}

void QueueTimeline::give_back(VkCommandBuffer cb, bool reset) {
    if (reset) d_.dispatch.ResetCommandBuffer(cb, 0);
    free_.push_back(cb);
}

// --- the latency path --------------------------------------------------------------------------

bool QueueTimeline::may_follow(VkFence fence, size_t fences, bool latency_mode) {
    if (!fence || fences != 1 || !latency_mode || follow_.any()) return false;
    // An exportable fence's payload may leave the layer's sight (FUSION.md rule 2).
    if (!d_.fusion || d_.fusion->fences().exportable(fence)) return false;
    return in_flight() == 0;
}

void QueueTimeline::end_follow() {
    if (const VkCommandBuffer cb = follow_.end()) free_.push_back(cb);
}

bool QueueTimeline::followed_busy() {
    if (follow_.idle()) return false;
    if (follow_.still_running()) return true;
    end_follow();
    return false;
}

void QueueTimeline::signal_instead_of(VkFence fence) {
    if (!follow_.follows(fence)) return;
    const uint64_t value = next_value();
    const TimelineSignal signal(timeline_, value);
    VkSubmitInfo submit;
    timeline_only(submit, signal);
    TrackedSubmission tracked(&q_, VK_NULL_HANDLE);
    OurSubmission s;
    s.cb = follow_.command_buffer();
    s.value = value;
    const VkResult r = this->submit(s, tracked, d_.dispatch.QueueSubmit, 1, &submit);
    follow_.drop();
    // Nothing follows it then: idle waits go to the driver, and our command buffer (which may
    // still run) is never reused; it goes with the pool.
    if (r != VK_SUCCESS) untracked_work_ = true;
}

// --- the trace ---------------------------------------------------------------------------------

FuseTrace* QueueTimeline::tracer() const { return d_.fusion ? d_.fusion->trace() : nullptr; }

void QueueTimeline::trace(FuseTrace& t, TraceEvent event, FlushReason reason, uint32_t cbs, uint32_t ops,
                          uint64_t waited_ns, uint64_t in_flight, uint64_t call_ns) {
    t.add({now_ns(), q_.family << 16 | q_.index, event, reason, cbs, ops, waited_ns, in_flight, submit_cost_ns(),
           call_ns});
}

}  // namespace slipstream::submit
