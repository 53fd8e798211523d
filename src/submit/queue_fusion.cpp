#include "submit/queue_fusion.h"

#include "capture/barrier_cover.h"
#include "capture/barrier_narrowing.h"
#include "capture/batch_replay.h"
#include "capture/capture_control.h"
#include "core/clock.h"
#include "core/cpu_relax.h"
#include "core/log.h"
#include "core/object_state.h"
#include "waits/queue_idle.h"

#include <algorithm>
#include <type_traits>

namespace slipstream::submit {

namespace {
// The barrier between two fused command buffers: everything compute and transfer work wrote
// before it is visible to, and ordered before, compute and transfer work after it, indirect
// parameters included. Access bits are named, not MEMORY_* (FUSION.md rule 8).
// (capture/barrier_cover.h: a command buffer that opens with a barrier holding this one's
// scopes and accesses needs none.)
void fuse_barrier(const VkLayerDispatchTable& d, VkCommandBuffer cb, bool indirect) {
    VkMemoryBarrier barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    barrier.srcAccessMask = capture::kFuseSrcAccess;
    barrier.dstAccessMask = capture::fuse_dst_access(indirect);
    d.CmdPipelineBarrier(cb, capture::kFuseSrcStages, capture::fuse_dst_stages(indirect), 0, 1, &barrier, 0, nullptr, 0,
                         nullptr);
}

bool dispatches_indirectly(const CommandBufferState& cb) { return cb.stages & VK_PIPELINE_STAGE_2_DRAW_INDIRECT_BIT; }

// How often the flusher looks at a batch held behind a submission followed through a fence
// (no timeline value to wait for): a latency-mode queue rarely holds one.
constexpr uint64_t kFollowedPollNs = 10000;
}  // namespace

QueueFusion::~QueueFusion() {
    const VkLayerDispatchTable& d = d_.dispatch;
    // vkDestroyDevice requires idle queues; the pool's command buffers go with it.
    if (pool_) d.DestroyCommandPool(d_.device, pool_, nullptr);
    if (timeline_) d.DestroySemaphore(d_.device, timeline_, nullptr);
}

bool QueueFusion::init() {
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

uint64_t QueueFusion::completed_value() {
    uint64_t value = 0;
    if (watch_device_loss(d_, d_.fusion_counter_value(d_.device, timeline_, &value)) != VK_SUCCESS)
        return 0;  // lost (or out of memory): nothing completes
    return value;
}

uint64_t QueueFusion::in_flight() {
    const uint64_t followed = followed_busy() ? 1 : 0;
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

bool QueueFusion::may_follow(VkFence fence, size_t fences) {
    if (!fence || fences != 1 || !sync_.latency_mode() || followed_.load(std::memory_order_acquire)) return false;
    // An exportable fence's payload may leave the layer's sight (FUSION.md rule 2).
    if (!d_.fusion || d_.fusion->fences().exportable(fence)) return false;
    return in_flight() == 0;
}

void QueueFusion::follow(VkFence fence, VkCommandBuffer cb) {
    followed_cb_ = cb;
    followed_.store(fence, std::memory_order_release);
    d_.stats.add(Counter::SubmitsFollowedByFence);
    d_.stats.add(Counter::DriverSubmits);
}

void QueueFusion::end_follow() {
    VkFence fence = followed_.load(std::memory_order_acquire);
    if (fence) followed_.compare_exchange_strong(fence, VK_NULL_HANDLE);
    if (followed_cb_) free_.push_back(followed_cb_);
    followed_cb_ = VK_NULL_HANDLE;
}

bool QueueFusion::followed_busy() {
    if (!followed_cb_ && !followed_.load(std::memory_order_acquire)) return false;
    // The application may destroy or reset the fence on another thread once its work is done:
    // whoever stops following it waits until no look of ours at it is under way
    // (stop_following), and a reset that came first is seen as the fence no longer followed.
    querying_.store(true);
    const VkFence fence = followed_.load();
    const VkResult r = fence ? d_.dispatch.GetFenceStatus(d_.device, fence) : VK_SUCCESS;
    querying_.store(false);
    if (r == VK_NOT_READY && follows(fence)) return true;
    if (fence) watch_device_loss(d_, r);  // (a lost device completes nothing more: nothing to follow)
    end_follow();
    return false;
}

void QueueFusion::stop_following(VkFence fence) {
    VkFence expected = fence;
    if (!fence || !followed_.compare_exchange_strong(expected, VK_NULL_HANDLE)) return;
    while (querying_.load()) cpu_relax();  // one driver call at most
}

VkResult QueueFusion::poll_idle() {
    if (untracked_work_) return VK_INCOMPLETE;
    if (followed_busy()) return VK_NOT_READY;
    if (in_flight_.empty()) return VK_SUCCESS;
    uint64_t done = 0;
    if (VkResult r = watch_device_loss(d_, d_.fusion_counter_value(d_.device, timeline_, &done)); r != VK_SUCCESS)
        return r;
    recycle(done);
    return done >= submitted_.load(std::memory_order_relaxed) ? VK_SUCCESS : VK_NOT_READY;
}

void QueueFusion::recycle(uint64_t completed) {
    while (!in_flight_.empty() && in_flight_.front().value <= completed) {
        if (in_flight_.front().cb) free_.push_back(in_flight_.front().cb);
        in_flight_.pop_front();
    }
}

VkCommandBuffer QueueFusion::acquire_command_buffer(VkResult* error) {
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

FuseTrace* QueueFusion::tracer() const { return d_.fusion ? d_.fusion->trace() : nullptr; }

void QueueFusion::trace(FuseTrace& t, TraceEvent event, FlushReason reason, uint32_t cbs, uint32_t ops,
                        uint64_t waited_ns, uint64_t in_flight, uint64_t call_ns) {
    t.add({now_ns(), q_.family << 16 | q_.index, event, reason, cbs, ops, waited_ns, in_flight, submit_cost_ns(),
           call_ns});
}

void QueueFusion::append(const CommandBufferState& cb) {
    if (open_.cbs.empty()) {
        open_.opened_ns = now_ns();
        // Nothing runs on the queue, not even what was passed through (its timeline says so),
        // nothing else is held, and the application saw its latest work done through the
        // driver. (A wait that raced a submission on another thread may set the flag late;
        // work of that submission is held or running, so it does not count then.)
        open_.after_wait = after_wait_ && sealed_.empty() && !recording_ && !untracked_work_ && in_flight() == 0;
        pending_.fetch_add(1, std::memory_order_acq_rel);
        d_.open_batches.fetch_add(1, std::memory_order_acq_rel);
    }
    cb.in_batches.fetch_add(1, std::memory_order_acq_rel);
    open_.cbs.push_back(&cb);
    open_.ops += cb.operations();
    open_.records += cb.capture->size();
    if (cb.lazy) ++open_.lazy;
    if (FuseTrace* t = tracer()) trace(*t, TraceEvent::Append, FlushReason::Full, 1, open_.ops, 0, 0, 0);
}

bool QueueFusion::seal() {
    if (sealed_.size() >= 2) return false;
    sealed_.push_back(std::move(open_));
    open_ = Pending{};
    return true;
}

VkResult QueueFusion::record(const Pending& b, VkCommandBuffer cb, bool closing) {
    const VkLayerDispatchTable& d = d_.dispatch;
    VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    VkResult r = d.BeginCommandBuffer(cb, &begin);
    replay_.begin_batch();
    if (d_.settings.narrow_barriers)  // which event sets and waits pair only among themselves
        for (const CommandBufferState* state : b.cbs)
            replay_.plan_events(*state->capture, state->narrowable, dispatches_indirectly(*state));
    elision_.begin_batch();
    // Footprints compare only within a batch: a batch of one needs none.
    const bool compare = d_.resources && b.cbs.size() > 1;
    bool narrowed = false;
    for (const CommandBufferState* state : b.cbs) {
        // In front of every fused command buffer, a batch's first too: to an application that
        // relies on command-buffer boundaries, the work before the batch on the queue is as
        // much "the command buffer before" as the work before it in the batch. Except where
        // that work is done, and the application waited for it before it submitted this (a
        // wait on every submission): then the command buffer follows it as it would without
        // the layer, in a submission of its own after the wait (H200: a bare dispatch waited
        // for at once, 21.1 us with that barrier, 17.9 us with FUSE_BARRIER=off, 17.6 no layer).
        const bool after_wait = b.after_wait && state == b.cbs.front();
        if (r == VK_SUCCESS && d_.settings.fuse_barrier) {
            if (after_wait) {
                d_.stats.add(Counter::FuseBarriersAfterWait);
                if (compare) elision_.ordered(capture::footprint_for(*state, footprint_scratch_));
            } else if (state->opens_ordered) {
                d_.stats.add(Counter::FuseBarriersLeftOut);
                if (compare) elision_.ordered(capture::footprint_for(*state, footprint_scratch_));
            } else if (compare && elide_fuse_barrier(*state)) {
                d_.stats.add(Counter::FuseBarriersElided);
            } else {
                fuse_barrier(d, cb, dispatches_indirectly(*state));
            }
        }
        if (r == VK_SUCCESS) narrowed = replay_into_batch(*state, cb) || narrowed;
        // Replayed: the application may reset or free it once its work is done.
        state->in_batches.fetch_sub(1, std::memory_order_acq_rel);
    }
    if (r != VK_SUCCESS) return r;
    if (!d_.settings.narrow_history) {
        trailing_owed_ = narrowed_without_indirect_ = false;
    } else if (trailing_owed_ && (closing || trailing_.at_batch_end())) {
        // What comes after the batch on the queue may be work in any stage (narrowing.md, case 4).
        capture::record_trailing_barrier(d, cb);
        d_.stats.add(Counter::FullBarriersInserted);
        trailing_owed_ = narrowed_without_indirect_ = false;
    } else if (trailing_owed_ && narrowed) {
        // Owed: later work in the narrowed stages needs none; other work gets it first.
        d_.stats.add(Counter::TrailingBarriersOwed);
    }
    if (narrowed) {
        trailing_.narrowed_batch();
        narrowed_since_other_ = true;
    }
    d_.stats.add(Counter::BindsLeftOut, replay_.binds_left_out());
    return d.EndCommandBuffer(cb);
}

bool QueueFusion::elide_fuse_barrier(const CommandBufferState& state) {
    if (d_.settings.elide_proof == ElideProof::Off) return elision_.may_elide_blindly();
    return elision_.may_elide(capture::footprint_for(state, footprint_scratch_), dispatches_indirectly(state));
}

bool QueueFusion::replay_into_batch(const CommandBufferState& state, VkCommandBuffer cb) {
    const VkLayerDispatchTable& d = d_.dispatch;
    capture::NarrowingState s;
    if (!d_.settings.narrow_barriers) {
        replay_.replay(*state.capture, d, cb, false, s);
        return false;
    }
    const bool history = d_.settings.narrow_history;
    const bool indirect = dispatches_indirectly(state);
    if (indirect && narrowed_without_indirect_ && history) {
        // Narrowed barriers before it did not reach indirect parameter reads (narrowing.md).
        fuse_barrier(d, cb, true);
        d_.stats.add(Counter::FullBarriersInserted);
    }
    narrowed_without_indirect_ = narrowed_without_indirect_ && !indirect;
    if (!state.narrowable) {
        // Work in other stages (queries, timestamps): narrowed barriers before it get a
        // full one of ours in front of it, and barriers after it stay whole (narrowing.md).
        if (trailing_owed_ && history) {
            capture::record_trailing_barrier(d, cb);
            d_.stats.add(Counter::FullBarriersInserted);
        }
        trailing_owed_ = narrowed_without_indirect_ = false;
        replay_.replay(*state.capture, d, cb, false, s);
        other_work_before_.store(true, std::memory_order_relaxed);
        return false;
    }
    s.indirect = indirect;
    s.full_first = other_work_before_.load(std::memory_order_relaxed) && history;
    replay_.replay(*state.capture, d, cb, true, s);
    other_work_before_.store(s.full_first, std::memory_order_relaxed);
    if (s.narrowed) {
        trailing_owed_ = true;
        if (!indirect) narrowed_without_indirect_ = true;
    }
    d_.stats.add(Counter::BarriersSeen, s.seen);
    d_.stats.add(Counter::BarriersNarrowed, s.narrowed);
    d_.stats.add(Counter::EventSetsNarrowed, s.event_sets_narrowed);
    d_.stats.add(Counter::EventWaitsNarrowed, s.event_waits_narrowed);
    d_.stats.add(Counter::FullBarriersInserted, s.inserted);
    return s.narrowed != 0;
}

VkResult QueueFusion::wait_idle() { return d_.dispatch.QueueWaitIdle(q_.queue); }

VkResult QueueFusion::signal_fence(VkFence fence) {
    if (d_.lost.load(std::memory_order_acquire)) return VK_ERROR_DEVICE_LOST;
    TrackedSubmission tracked(&q_, fence);
    VkResult r = d_.dispatch.QueueSubmit(q_.queue, 0, nullptr, tracked.fence());
    tracked.end(r);
    d_.stats.add(Counter::DriverSubmits);
    d_.stats.add(Counter::FenceSubmits);
    return watch_device_loss(d_, r);
}

VkResult QueueFusion::submit_app_command_buffers(const Pending& b) {
    // Still recorded natively (capture runs beside the driver's recording), and pending in the
    // application's eyes, so untouched: submitting them is what the application asked for.
    std::vector<VkCommandBuffer> handles;
    bool leaves = false;
    for (const CommandBufferState* state : b.cbs) {
        handles.push_back(state->handle);
        leaves = leaves || leaves_narrowed_stages(state);
    }
    if (leaves && trailing_owed_ && d_.settings.narrow_history)
        if (VkResult r = submit_trailing_barrier(); r != VK_SUCCESS) return r;
    VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    submit.commandBufferCount = uint32_t(handles.size());
    submit.pCommandBuffers = handles.data();
    const VkFence fence = b.fences.empty() ? VK_NULL_HANDLE : b.fences.back();
    TrackedSubmission tracked(&q_, fence);
    VkResult r = d_.dispatch.QueueSubmit(q_.queue, 1, &submit, tracked.fence());
    tracked.end(r);
    d_.stats.add(Counter::DriverSubmits);
    d_.stats.add(Counter::BatchFallbacks);
    return r;
}

OpenBatch QueueFusion::batch_state() {
    OpenBatch b;
    b.ops = open_.ops;
    b.records = open_.records;
    const uint64_t now = now_ns();
    b.waited_ns = !open_.cbs.empty() && now > open_.opened_ns ? now - open_.opened_ns : 0;
    b.in_flight = in_flight();
    b.submit_cost_ns = submit_cost_ns();
    b.latency_mode = sync_.latency_mode();
    return b;
}

void QueueFusion::submitted(VkCommandBuffer cb, uint64_t value, VkResult result, uint64_t start_ns, uint32_t ops) {
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

namespace {
// The queue's timeline signal of `value`, for either submit version (it points into itself).
struct TimelineSignal {
    uint64_t value;
    VkTimelineSemaphoreSubmitInfo values{VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO};
    VkSemaphoreSubmitInfo info{VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO};
    TimelineSignal(VkSemaphore timeline, uint64_t v) : value(v) {
        values.signalSemaphoreValueCount = 1;
        values.pSignalSemaphoreValues = &value;
        info.semaphore = timeline;
        info.value = v;
        info.stageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT;
    }
    TimelineSignal(const TimelineSignal&) = delete;
    TimelineSignal& operator=(const TimelineSignal&) = delete;
};

// The queue's timeline signal added to the last batch of a submission, with what it points at.
// A VkSubmitInfo's pNext chain may index its semaphores (device group indices, D3D12 fence
// values) or carry timeline values of its own: one with a chain is left as it is (false: the
// caller adds a batch of its own after it, whose signal covers everything before it as well).
struct SignalAdded {
    std::vector<VkSemaphore> semaphores;
    std::vector<uint64_t> values;
    std::vector<VkSemaphoreSubmitInfo> infos;
    VkTimelineSemaphoreSubmitInfo timeline_values{VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO};
};
bool add_signal(VkSubmitInfo& s, SignalAdded& a, const TimelineSignal& signal) {
    if (s.pNext) return false;
    if (s.signalSemaphoreCount == 0) {  // the common case (every direct submission): no copies
        s.pNext = &signal.values;
        s.signalSemaphoreCount = 1;
        s.pSignalSemaphores = &signal.info.semaphore;
        return true;
    }
    // Without a chain every semaphore of the batch is binary: their values are ignored, and
    // no wait value is needed.
    a.semaphores.assign(s.pSignalSemaphores, s.pSignalSemaphores + s.signalSemaphoreCount);
    a.semaphores.push_back(signal.info.semaphore);
    a.values.assign(s.signalSemaphoreCount, 0);
    a.values.push_back(signal.value);
    a.timeline_values.signalSemaphoreValueCount = uint32_t(a.values.size());
    a.timeline_values.pSignalSemaphoreValues = a.values.data();
    s.pNext = &a.timeline_values;
    s.signalSemaphoreCount = uint32_t(a.semaphores.size());
    s.pSignalSemaphores = a.semaphores.data();
    return true;
}
bool add_signal(VkSubmitInfo2& s, SignalAdded& a, const TimelineSignal& signal) {
    if (s.signalSemaphoreInfoCount == 0) {
        s.signalSemaphoreInfoCount = 1;
        s.pSignalSemaphoreInfos = &signal.info;
        return true;
    }
    a.infos.assign(s.pSignalSemaphoreInfos, s.pSignalSemaphoreInfos + s.signalSemaphoreInfoCount);
    a.infos.push_back(signal.info);
    s.signalSemaphoreInfoCount = uint32_t(a.infos.size());
    s.pSignalSemaphoreInfos = a.infos.data();
    return true;
}
}  // namespace

template <typename Info, typename Next>
VkResult QueueFusion::submit_direct_as(uint32_t count, const Info* submits, VkFence fence, Next next) {
    other_work_before_ = true;  // recorded natively, its barriers whole
    TrackedSubmission tracked(&q_, fence);
    if (may_follow(fence, fence ? 1 : 0) && tracked.fence_trusted()) {
        if (d_.lost.load(std::memory_order_acquire)) {
            tracked.end(VK_ERROR_DEVICE_LOST);
            return VK_ERROR_DEVICE_LOST;
        }
        FuseTrace* t = tracer();
        const uint64_t start = t ? now_ns() : 0;
        const VkResult r = next(q_.queue, count, submits, tracked.fence());
        tracked.end(r);
        if (t) trace(*t, TraceEvent::Direct, FlushReason::Full, count, 0, 0, 0, now_ns() - start);
        if (r == VK_SUCCESS) follow(fence, VK_NULL_HANDLE);
        else watch_device_loss(d_, r);
        return r;
    }
    const uint64_t value = submitted_.load(std::memory_order_relaxed) + 1;
    const TimelineSignal signal(timeline_, value);
    Info small[4];
    std::vector<Info> many;
    Info* copy = small;
    if (count > 4) {
        many.assign(submits, submits + count);
        copy = many.data();
    } else {
        std::copy(submits, submits + count, small);
    }
    SignalAdded added;
    add_signal(copy[count - 1], added, signal);  // (the classification allowed no pNext)
    FuseTrace* t = tracer();
    const uint64_t busy = t ? in_flight() : 0;
    // (A counter read since the submission's first look may have found the device lost.)
    if (d_.lost.load(std::memory_order_acquire)) {
        tracked.end(VK_ERROR_DEVICE_LOST);
        return VK_ERROR_DEVICE_LOST;
    }
    const uint64_t start = now_ns();
    VkResult r = next(q_.queue, count, copy, tracked.fence());
    tracked.end(r);
    if (t) trace(*t, TraceEvent::Direct, FlushReason::Full, count, 0, 0, busy, now_ns() - start);
    submitted(VK_NULL_HANDLE, value, r, start, kUnknownOps);
    return r;
}

VkCommandBuffer QueueFusion::record_alone(const CommandBufferState& cb, VkResult* error) {
    const VkLayerDispatchTable& d = d_.dispatch;
    VkCommandBuffer ours = acquire_command_buffer(error);
    if (!ours) return VK_NULL_HANDLE;
    // Its own begin info: usage and pNext (device group masks) as the application recorded it.
    if ((*error = d.BeginCommandBuffer(ours, cb.capture->begin_info())) != VK_SUCCESS) {
        free_.push_back(ours);
        return VK_NULL_HANDLE;
    }
    cb.capture->replay(d, ours);
    if ((*error = d.EndCommandBuffer(ours)) != VK_SUCCESS) {
        d.ResetCommandBuffer(ours, 0);
        free_.push_back(ours);
        return VK_NULL_HANDLE;
    }
    d_.stats.add(Counter::LazyReplayedAlone);
    return ours;
}

namespace {
VkCommandBuffer handle_of(VkCommandBuffer cb) { return cb; }
VkCommandBuffer handle_of(const VkCommandBufferSubmitInfo& info) { return info.commandBuffer; }
void set_handle(VkCommandBuffer& cb, VkCommandBuffer handle) { cb = handle; }
void set_handle(VkCommandBufferSubmitInfo& info, VkCommandBuffer handle) { info.commandBuffer = handle; }
const VkCommandBuffer* command_buffers_of(const VkSubmitInfo& s, uint32_t* n) {
    *n = s.commandBufferCount;
    return s.pCommandBuffers;
}
const VkCommandBufferSubmitInfo* command_buffers_of(const VkSubmitInfo2& s, uint32_t* n) {
    *n = s.commandBufferInfoCount;
    return s.pCommandBufferInfos;
}
void point_at(VkSubmitInfo& s, const VkCommandBuffer* cbs) { s.pCommandBuffers = cbs; }
void point_at(VkSubmitInfo2& s, const VkCommandBufferSubmitInfo* cbs) { s.pCommandBufferInfos = cbs; }
// A submission of nothing that signals the queue's timeline once all before it completed.
template <typename Info>
void timeline_only(Info& s, const TimelineSignal& signal) {
    s = {std::is_same_v<Info, VkSubmitInfo> ? VK_STRUCTURE_TYPE_SUBMIT_INFO : VK_STRUCTURE_TYPE_SUBMIT_INFO_2};
    SignalAdded none;  // (an empty batch: add_signal copies nothing)
    add_signal(s, none, signal);
}
}  // namespace

void QueueFusion::fence_released(VkFence fence) {
    if (!follows(fence)) return;
    if (d_.dispatch.GetFenceStatus(d_.device, fence) == VK_SUCCESS || d_.lost.load(std::memory_order_acquire)) {
        stop_following(fence);
        return;
    }
    // Reset, destroyed or imported while its submission may run (a misuse): the timeline
    // follows it from now on, by an empty submission that signals it.
    std::lock_guard lock(mutex_);
    if (!follows(fence)) return;
    const uint64_t value = submitted_.load(std::memory_order_relaxed) + 1;
    const TimelineSignal signal(timeline_, value);
    VkSubmitInfo submit;
    timeline_only(submit, signal);
    TrackedSubmission tracked(&q_, VK_NULL_HANDLE);
    const VkResult r = d_.dispatch.QueueSubmit(q_.queue, 1, &submit, tracked.fence());
    tracked.end(r);
    const VkCommandBuffer cb = followed_cb_;
    followed_cb_ = VK_NULL_HANDLE;
    followed_.store(VK_NULL_HANDLE);  // (no look of ours runs: they hold mutex())
    if (r != VK_SUCCESS) {
        // Nothing follows it now: idle waits go to the driver, and our command buffer (which
        // may still run) is never reused; it goes with the pool.
        untracked_work_ = true;
        watch_device_loss(d_, r);
        return;
    }
    submitted(cb, value, r, now_ns(), kUnknownOps);
}

template <typename Info, typename Next>
VkResult QueueFusion::submit_passed_as(uint32_t count, const Info* submits, VkFence fence, Next next) {
    using Entry = std::remove_const_t<std::remove_pointer_t<decltype(command_buffers_of(submits[0], nullptr))>>;
    std::vector<Info> infos(submits, submits + count);
    std::vector<std::vector<Entry>> lists(count);
    std::vector<VkCommandBuffer> ours;
    VkResult r = VK_SUCCESS;
    for (uint32_t i = 0; i < count && r == VK_SUCCESS; ++i) {
        uint32_t n = 0;
        const Entry* entries = command_buffers_of(submits[i], &n);
        lists[i].assign(entries, entries + n);
        for (Entry& e : lists[i]) {
            const CommandBufferState* cb = find_command_buffer(handle_of(e));
            if (!cb || !cb->lazy) continue;
            const VkCommandBuffer replayed = record_alone(*cb, &r);
            if (!replayed) break;
            ours.push_back(replayed);
            set_handle(e, replayed);
        }
        point_at(infos[i], lists[i].data());
    }
    const uint64_t value = submitted_.load(std::memory_order_relaxed) + 1;
    const TimelineSignal signal(timeline_, value);
    // (Recording ours read the queue's counter, which may have found the device lost.)
    if (r == VK_SUCCESS && d_.lost.load(std::memory_order_acquire)) r = VK_ERROR_DEVICE_LOST;
    SignalAdded added;
    if (r == VK_SUCCESS) {
        if (count == 0 || !add_signal(infos.back(), added, signal)) {
            infos.emplace_back();
            timeline_only(infos.back(), signal);
        }
        TrackedSubmission tracked(&q_, fence);
        const uint64_t start = now_ns();
        r = next(q_.queue, uint32_t(infos.size()), infos.data(), tracked.fence());
        tracked.end(r);
        if (r == VK_SUCCESS) {
            // Ours are recycled once the timeline passes `value`.
            for (size_t k = 0; k + 1 < ours.size(); ++k) in_flight_.push_back({ours[k], value});
            submitted(ours.empty() ? VK_NULL_HANDLE : ours.back(), value, r, start, kUnknownOps);
            return r;
        }
        submitted(VK_NULL_HANDLE, value, r, start, kUnknownOps);
    }
    for (VkCommandBuffer c : ours) {
        d_.dispatch.ResetCommandBuffer(c, 0);
        free_.push_back(c);
    }
    return r;
}

VkResult QueueFusion::submit_passed(uint32_t count, const VkSubmitInfo* submits, VkFence fence, PFN_vkQueueSubmit next) {
    return submit_passed_as(count, submits, fence, next);
}

VkResult QueueFusion::submit_passed(uint32_t count, const VkSubmitInfo2* submits, VkFence fence,
                                      PFN_vkQueueSubmit2 next) {
    return submit_passed_as(count, submits, fence, next);
}

VkResult QueueFusion::submit_direct(uint32_t count, const VkSubmitInfo* submits, VkFence fence, PFN_vkQueueSubmit next) {
    return submit_direct_as(count, submits, fence, next);
}

VkResult QueueFusion::submit_direct(uint32_t count, const VkSubmitInfo2* submits, VkFence fence,
                                    PFN_vkQueueSubmit2 next) {
    return submit_direct_as(count, submits, fence, next);
}

VkResult QueueFusion::flush(FlushReason reason, bool other_stages_next) {
    VkResult first = VK_SUCCESS;
    while (!sealed_.empty()) {
        if (d_.lost.load(std::memory_order_acquire)) return abandon_all();
        const Pending b = std::move(sealed_.front());
        sealed_.pop_front();
        const bool last = sealed_.empty() && open_.cbs.empty();
        const VkResult r = flush_one(b, FlushReason::Full, other_stages_next && last);
        if (r != VK_SUCCESS && first == VK_SUCCESS) first = r;
    }
    if (d_.lost.load(std::memory_order_acquire)) return abandon_all();
    if (!open_.cbs.empty()) {
        const Pending b = std::move(open_);
        open_ = Pending{};
        const VkResult r = flush_one(b, reason, other_stages_next);
        if (r != VK_SUCCESS && first == VK_SUCCESS) first = r;
    }
    // Work fusion does not replay comes next: later barriers must reach it (narrowing.md).
    if (reason == FlushReason::PassThrough) other_work_before_.store(true, std::memory_order_relaxed);
    if (other_stages_next) {
        if (narrowed_since_other_) trailing_.other_work();
        narrowed_since_other_ = false;
        if (trailing_owed_ && first == VK_SUCCESS) first = submit_trailing_barrier();
    }
    return first;
}

bool QueueFusion::leaves_narrowed_stages(const CommandBufferState* cb) const {
    if (!cb || !cb->narrowable) return true;
    return narrowed_without_indirect_ && dispatches_indirectly(*cb);
}

VkResult QueueFusion::submit_trailing_barrier() {
    const VkLayerDispatchTable& d = d_.dispatch;
    if (d_.lost.load(std::memory_order_acquire)) return VK_ERROR_DEVICE_LOST;
    VkResult r;
    const VkCommandBuffer cb = acquire_command_buffer(&r);
    if (!cb) return watch_device_loss(d_, r);
    VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    r = d.BeginCommandBuffer(cb, &begin);
    if (r == VK_SUCCESS) {
        capture::record_trailing_barrier(d, cb);
        r = d.EndCommandBuffer(cb);
    }
    const uint64_t value = submitted_.load(std::memory_order_relaxed) + 1;
    if (r == VK_SUCCESS) {
        const TimelineSignal signal(timeline_, value);
        VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
        submit.commandBufferCount = 1;
        submit.pCommandBuffers = &cb;
        SignalAdded none;
        add_signal(submit, none, signal);
        TrackedSubmission tracked(&q_, VK_NULL_HANDLE);
        FuseTrace* t = tracer();
        const uint64_t busy = t ? in_flight() : 0;
        const uint64_t start = now_ns();
        r = d.QueueSubmit(q_.queue, 1, &submit, tracked.fence());
        tracked.end(r);
        if (t) trace(*t, TraceEvent::Flush, FlushReason::PassThrough, 0, 0, 0, busy, now_ns() - start);
        submitted(cb, value, r, start, 0);
    }
    if (r != VK_SUCCESS) {
        d.ResetCommandBuffer(cb, 0);
        free_.push_back(cb);
        return watch_device_loss(d_, r);
    }
    d_.stats.add(Counter::TrailingBarriersSubmitted);
    d_.stats.add(Counter::FullBarriersInserted);
    trailing_owed_ = narrowed_without_indirect_ = false;
    return VK_SUCCESS;
}

VkResult QueueFusion::flush_one(const Pending& b, FlushReason reason, bool closing) {
    VkResult recorded;
    const VkCommandBuffer cb = acquire_command_buffer(&recorded);
    if (cb) recorded = record(b, cb, closing);
    else
        for (const CommandBufferState* state : b.cbs) state->in_batches.fetch_sub(1, std::memory_order_acq_rel);
    return submit_recorded(b, cb, recorded, reason);
}

bool QueueFusion::flusher_turn(uint64_t max_defer_ns, uint64_t* wake_at, uint64_t* timeline_value) {
    std::lock_guard record_lock(record_mutex_);
    Pending b;
    FlushReason why = FlushReason::Full;
    VkCommandBuffer cb = VK_NULL_HANDLE;
    VkResult recorded = VK_SUCCESS;
    {
        std::lock_guard lock(mutex_);
        if (d_.lost.load(std::memory_order_acquire)) {
            abandon_all();  // the loss is returned by the queue's next submission or wait
            return false;
        }
        if (!sealed_.empty()) {
            b = std::move(sealed_.front());
            sealed_.pop_front();
        } else if (!open_.cbs.empty()) {
            const OpenBatch s = batch_state();
            const FlusherAction action = decide_in_flusher(s, max_defer_ns);
            if (action == FlusherAction::Wait) {
                *wake_at = std::min(*wake_at, open_.opened_ns + max_defer_ns);
                if (s.in_flight == 0) *wake_at = std::min(*wake_at, open_.opened_ns + s.submit_cost_ns);
                else if (followed_.load(std::memory_order_acquire)) *wake_at = std::min(*wake_at, now_ns() + kFollowedPollNs);
                else *timeline_value = submitted_.load(std::memory_order_relaxed);  // the GPU runs dry then
                return false;
            }
            why = action == FlusherAction::FlushDeadline ? FlushReason::Deadline : FlushReason::GpuStarving;
            b = std::move(open_);
            open_ = Pending{};
        } else {
            return false;
        }
        recording_ = &b;
        cb = acquire_command_buffer(&recorded);
    }
    // Recorded holding only record_mutex(): submissions join the next batch meanwhile.
    if (cb) recorded = record(b, cb, false);
    else
        for (const CommandBufferState* state : b.cbs) state->in_batches.fetch_sub(1, std::memory_order_acq_rel);
    std::lock_guard lock(mutex_);
    recording_ = nullptr;
    keep_error(submit_recorded(b, cb, recorded, why));
    return true;
}

void QueueFusion::done_with(const Pending&) {
    pending_.fetch_sub(1, std::memory_order_acq_rel);
    d_.open_batches.fetch_sub(1, std::memory_order_acq_rel);
}

VkResult QueueFusion::submit_recorded(const Pending& b, VkCommandBuffer batch, VkResult recorded, FlushReason reason) {
    const VkLayerDispatchTable& d = d_.dispatch;
    FuseTrace* t = tracer();
    const uint64_t busy = t ? in_flight() : 0;
    const uint64_t waited = t ? now_ns() - b.opened_ns : 0;
    // A loss another thread met since the batch was taken: nothing more reaches the driver.
    VkResult r = recorded == VK_SUCCESS && d_.lost.load(std::memory_order_acquire) ? VK_ERROR_DEVICE_LOST : recorded;
    const uint64_t value = submitted_.load(std::memory_order_relaxed) + 1;
    if (r == VK_SUCCESS) {
        const VkFence fence = b.fences.empty() ? VK_NULL_HANDLE : b.fences.back();
        TrackedSubmission tracked(&q_, fence);
        const bool follow_fence = may_follow(fence, b.fences.size()) && tracked.fence_trusted();
        VkTimelineSemaphoreSubmitInfo values{VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO};
        values.signalSemaphoreValueCount = 1;
        values.pSignalSemaphoreValues = &value;
        VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO, follow_fence ? nullptr : &values};
        submit.commandBufferCount = 1;
        submit.pCommandBuffers = &batch;
        submit.signalSemaphoreCount = follow_fence ? 0 : 1;
        submit.pSignalSemaphores = &timeline_;
        const uint64_t start = now_ns();
        r = d.QueueSubmit(q_.queue, 1, &submit, tracked.fence());
        tracked.end(r);
        if (t) trace(*t, TraceEvent::Flush, reason, uint32_t(b.cbs.size()), b.ops, waited, busy, now_ns() - start);
        if (follow_fence && r == VK_SUCCESS) follow(fence, batch);
        else if (follow_fence) watch_device_loss(d_, r);
        else submitted(batch, value, r, start, b.ops);
    }
    if (r == VK_SUCCESS) {
        d_.stats.add(Counter::BatchesFlushed);
        d_.stats.add(Counter::BatchCommandBuffers, b.cbs.size());
        static constexpr Counter kByReason[] = {Counter::FlushFull,    Counter::FlushGpuStarving,
                                                Counter::FlushObserve, Counter::FlushDeadline,
                                                Counter::FlushPassThrough, Counter::FlushDestroy};
        d_.stats.add(kByReason[int(reason)]);
    } else {
        // Our batch never reached the GPU: its command buffer is free again, and the
        // application's own command buffers carry the work instead where the driver has them.
        // If it ended with the closing barrier, earlier narrowed batches still owe it.
        if (d_.settings.narrow_history) trailing_owed_ = narrowed_without_indirect_ = true;
        if (batch) {
            d.ResetCommandBuffer(batch, 0);
            free_.push_back(batch);
        }
        if (r != VK_ERROR_DEVICE_LOST && b.lazy == 0) {
            log(LogLevel::Warn, "a fused batch failed (%d); submitting its %zu command buffers as they are", int(r),
                b.cbs.size());
            r = watch_device_loss(d_, submit_app_command_buffers(b));
        } else if (r != VK_ERROR_DEVICE_LOST) {
            // Lazily recorded: only the batch had them. The error reaches the application
            // (from this call or its next submission or wait, and from every wait on the
            // batch's fences, so that nothing waits forever).
            log(LogLevel::Error, "a fused batch failed (%d): the work of %zu command buffers was not submitted",
                int(r), b.cbs.size());
        }
    }
    // The batch carried its last fence; each earlier one is answered from the timeline
    // (batch_fences.h), or, where it is exportable or the batch failed, signaled by an empty
    // submission after it (it signals once all work submitted before it has completed).
    const bool batched = r == VK_SUCCESS && !in_flight_.empty() && in_flight_.back().cb == batch && batch;
    BatchFences* answers = d_.fusion ? &d_.fusion->fences() : nullptr;
    if (r != VK_SUCCESS) {
        // Its work never ran: waits on its fences return the error (batch_fences.h).
        fail_fences(b, r);
        done_with(b);
        return r;
    }
    for (size_t i = 0; i + 1 < b.fences.size(); ++i) {
        if (batched && answers && !answers->exportable(b.fences[i])) {
            answers->answer_later({b.fences[i], this, timeline_, value});
            d_.stats.add(Counter::FencesAnswered);
        } else if (r == VK_SUCCESS) {
            r = signal_fence(b.fences[i]);
        }
    }
    done_with(b);
    return r;
}

bool QueueFusion::holds_any(uint32_t count, const VkFence* fences) const {
    auto in = [&](const Pending& b) {
        for (VkFence held : b.fences)
            for (uint32_t i = 0; i < count; ++i)
                if (fences[i] == held) return true;
        return false;
    };
    if (in(open_) || (recording_ && in(*recording_))) return true;
    for (const Pending& b : sealed_)
        if (in(b)) return true;
    return false;
}

VkResult QueueFusion::take_error() {
    if (d_.lost.load(std::memory_order_acquire)) return VK_ERROR_DEVICE_LOST;
    VkResult r = pending_error_;
    if (r != VK_SUCCESS) d_.fusion_errors.fetch_sub(1, std::memory_order_acq_rel);
    pending_error_ = VK_SUCCESS;
    return r;
}

void QueueFusion::keep_error(VkResult result) {
    // (A loss stays in DeviceState::lost.)
    if (result >= 0 || result == VK_ERROR_DEVICE_LOST || pending_error_ != VK_SUCCESS) return;
    pending_error_ = result;
    d_.fusion_errors.fetch_add(1, std::memory_order_acq_rel);
}

void QueueFusion::fail_fences(const Pending& b, VkResult error) {
    if (!d_.fusion) return;
    for (VkFence fence : b.fences) d_.fusion->fences().fail(fence, error);
}

VkResult QueueFusion::abandon_all() {
    // The device is lost: what is held never reaches the driver, and waits on its fences
    // return the loss.
    auto abandon = [&](const Pending& b) {
        for (const CommandBufferState* state : b.cbs) state->in_batches.fetch_sub(1, std::memory_order_acq_rel);
        fail_fences(b, VK_ERROR_DEVICE_LOST);
        done_with(b);
    };
    while (!sealed_.empty()) {
        abandon(sealed_.front());
        sealed_.pop_front();
    }
    if (!open_.cbs.empty()) {
        abandon(open_);
        open_ = Pending{};
    }
    return VK_ERROR_DEVICE_LOST;
}

}  // namespace slipstream::submit
