// QueueFusion's submissions of the application's work that join no batch: the latency path's
// direct submission, and a submission passed through after everything held. Both go to the
// driver as the application made them, with the queue's timeline signal added.
#include "submit/queue_fusion.h"

#include "state/object_state.h"
#include "submit/timeline_signal.h"
#include "idle/queue_idle.h"

#include <algorithm>
#include <type_traits>
#include <vector>

namespace slipstream::submit {

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

// The application's command buffers in `submits` (ours, replays of lazy ones, are in no map)
// went to the driver as the application recorded them in `submission`: a reset or free of one
// waits for it first (CommandBufferState::native_on).
template <typename Info>
void note_native_all(QueueState& q, uint32_t count, const Info* submits, const NativeSubmission& submission) {
    for (uint32_t i = 0; i < count; ++i) {
        uint32_t n = 0;
        const auto* entries = command_buffers_of(submits[i], &n);
        for (uint32_t j = 0; j < n; ++j) {
            // (One of another device's, a misuse passed through, would outlive this queue.)
            const CommandBufferState* cb = find_command_buffer(handle_of(entries[j]));
            if (cb && cb->device == q.device) note_native(*cb, q, submission);
        }
    }
}
}  // namespace

template <typename Info, typename Next>
VkResult QueueFusion::submit_direct_as(uint32_t count, const Info* submits, VkFence fence, Next next,
                                       NativeSubmission* done) {
    recorder_.ran_native_work();  // recorded natively, its barriers whole
    TrackedSubmission tracked(&q_, fence);
    OurSubmission s;
    s.traced = true;
    s.event = TraceEvent::Direct;
    s.cbs = count;
    if (timeline_.may_follow(fence, fence ? 1 : 0, waits_.latency_mode()) && tracked.fence_trusted()) {
        if (d_.lost.load(std::memory_order_acquire)) {
            tracked.end(VK_ERROR_DEVICE_LOST);
            return VK_ERROR_DEVICE_LOST;
        }
        s.followed = fence;
        const VkResult r = timeline_.submit(s, tracked, next, count, submits);
        if (r == VK_SUCCESS) *done = {0, fence, timeline_.followed().generation()};
        return r;
    }
    s.value = timeline_.next_value();
    const TimelineSignal signal(timeline_.timeline(), s.value);
    // Room for one more: a batch of its own that signals the timeline, where the last one has a
    // pNext chain (an empty VkTimelineSemaphoreSubmitInfo or device-group masks, which the
    // classification lets fuse) that add_signal leaves as it is.
    Info small[5];
    std::vector<Info> many;
    Info* copy = small;
    if (count > 4) {
        many.assign(submits, submits + count);
        many.emplace_back();
        copy = many.data();
    } else {
        std::copy(submits, submits + count, small);
    }
    SignalAdded added;
    uint32_t n = count;
    if (!add_signal(copy[count - 1], added, signal)) timeline_only(copy[n++], signal);
    // (A counter read since the submission's first look may have found the device lost.)
    if (d_.lost.load(std::memory_order_acquire)) {
        tracked.end(VK_ERROR_DEVICE_LOST);
        return VK_ERROR_DEVICE_LOST;
    }
    const VkResult r = timeline_.submit(s, tracked, next, n, copy);
    if (r == VK_SUCCESS) *done = {s.value, VK_NULL_HANDLE, 0};
    return r;
}

VkResult QueueFusion::submit_direct(uint32_t count, const VkSubmitInfo* submits, VkFence fence, PFN_vkQueueSubmit next,
                                    NativeSubmission* done) {
    return submit_direct_as(count, submits, fence, next, done);
}

VkResult QueueFusion::submit_direct(uint32_t count, const VkSubmitInfo2* submits, VkFence fence,
                                    PFN_vkQueueSubmit2 next, NativeSubmission* done) {
    return submit_direct_as(count, submits, fence, next, done);
}


VkCommandBuffer QueueFusion::record_alone(const CommandBufferState& cb, VkResult* error) {
    const VkCommandBuffer ours = timeline_.acquire_command_buffer(error);
    if (!ours) return VK_NULL_HANDLE;
    bool reset = false;
    if ((*error = recorder_.record_alone(cb, ours, &reset)) != VK_SUCCESS) {
        timeline_.give_back(ours, reset);
        return VK_NULL_HANDLE;
    }
    return ours;
}

template <typename Info, typename Next>
VkResult QueueFusion::submit_passed_as(uint32_t count, const Info* submits, VkFence fence, Next next) {
    using Entry = std::remove_const_t<std::remove_pointer_t<decltype(command_buffers_of(submits[0], nullptr))>>;
    // A batch opened after it must keep its first fuse barrier, whatever wait came before: a
    // semaphore wait that fusion drops there (met by this submission's signal) leaves that
    // barrier as the dependency the application asked for.
    waits_.note_unwaited_work();
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
    OurSubmission s;
    s.cb = ours.empty() ? VK_NULL_HANDLE : ours.back();
    s.value = timeline_.next_value();
    const TimelineSignal signal(timeline_.timeline(), s.value);
    // (Recording ours read the queue's counter, which may have found the device lost.)
    if (r == VK_SUCCESS && d_.lost.load(std::memory_order_acquire)) r = VK_ERROR_DEVICE_LOST;
    SignalAdded added;
    if (r == VK_SUCCESS) {
        if (count == 0 || !add_signal(infos.back(), added, signal)) {
            infos.emplace_back();
            timeline_only(infos.back(), signal);
        }
        TrackedSubmission tracked(&q_, fence);
        r = timeline_.submit(s, tracked, next, uint32_t(infos.size()), infos.data());
        if (r == VK_SUCCESS) {
            // The application's own recordings among them (ours replaced the lazy ones).
            note_native_all(q_, uint32_t(infos.size()), infos.data(), NativeSubmission{s.value, VK_NULL_HANDLE, 0});
            // Ours are recycled once the timeline passes its value.
            for (size_t k = 0; k + 1 < ours.size(); ++k) timeline_.keep_until(ours[k], s.value);
            return r;
        }
    }
    for (VkCommandBuffer c : ours) timeline_.give_back(c, true);
    return r;
}

VkResult QueueFusion::submit_passed(uint32_t count, const VkSubmitInfo* submits, VkFence fence, PFN_vkQueueSubmit next) {
    return submit_passed_as(count, submits, fence, next);
}

VkResult QueueFusion::submit_passed(uint32_t count, const VkSubmitInfo2* submits, VkFence fence,
                                    PFN_vkQueueSubmit2 next) {
    return submit_passed_as(count, submits, fence, next);
}

}  // namespace slipstream::submit
