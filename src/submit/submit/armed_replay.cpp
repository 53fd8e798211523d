#include "submit/armed_replay.h"

#include "core/clock.h"
#include "core/log.h"
#include "state/object_state.h"
#include "submit/device_fusion.h"

#include <algorithm>

namespace slipstream::submit {

namespace {
constexpr VkDeviceSize kSlotBytes = capture::ArmableWork::kMaxDispatches * sizeof(VkDispatchIndirectCommand);
constexpr uint32_t kMostMisses = 6;
constexpr uint32_t kMostStuck = 3;  // event submissions held past the deadline in a row

bool event_mode(const DeviceState& d) { return d.settings.arm == ArmMode::Event; }
}  // namespace

ArmedReplay::~ArmedReplay() {
    const VkLayerDispatchTable& d = d_.dispatch;
    if (args_memory_) d.FreeMemory(d_.device, args_memory_, nullptr);
    if (args_) d.DestroyBuffer(d_.device, args_, nullptr);
    for (VkEvent e : events_)
        if (e) d.DestroyEvent(d_.device, e, nullptr);
    if (release_) d.DestroySemaphore(d_.device, release_, nullptr);
    if (done_) d.DestroySemaphore(d_.device, done_, nullptr);
    if (pool_) d.DestroyCommandPool(d_.device, pool_, nullptr);  // with our command buffers
}

// --- our objects, made at the first arm ---------------------------------------------------------

bool ArmedReplay::make_objects() {
    if (done_ || failed_) return !failed_;
    failed_ = true;  // until everything below is made
    const VkLayerDispatchTable& d = d_.dispatch;
    VkCommandPoolCreateInfo pool{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    pool.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    pool.queueFamilyIndex = q_.family;
    if (d.CreateCommandPool(d_.device, &pool, nullptr, &pool_) != VK_SUCCESS) return pool_ = VK_NULL_HANDLE, false;
    VkCommandBufferAllocateInfo cbs{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    cbs.commandPool = pool_;
    cbs.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    cbs.commandBufferCount = 2;
    if (d.AllocateCommandBuffers(d_.device, &cbs, cbs_) != VK_SUCCESS) return false;
    for (VkCommandBuffer cb : cbs_)
        if (d_.set_loader_data && d_.set_loader_data(d_.device, cb) != VK_SUCCESS) return false;
    VkSemaphoreTypeCreateInfo type{VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO};
    type.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
    const VkSemaphoreCreateInfo timeline{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, &type};
    if (event_mode(d_)) {
        const VkEventCreateInfo event{VK_STRUCTURE_TYPE_EVENT_CREATE_INFO};
        for (VkEvent& e : events_)
            if (d.CreateEvent(d_.device, &event, nullptr, &e) != VK_SUCCESS) return e = VK_NULL_HANDLE, false;
    } else if (d.CreateSemaphore(d_.device, &timeline, nullptr, &release_) != VK_SUCCESS) {
        return release_ = VK_NULL_HANDLE, false;
    }
    if (!make_args()) return false;
    if (d.CreateSemaphore(d_.device, &timeline, nullptr, &done_) != VK_SUCCESS) return done_ = VK_NULL_HANDLE, false;
    failed_ = false;
    return true;
}

// The group counts: host-visible, coherent memory the host writes just before it lets a replay go.
bool ArmedReplay::make_args() {
    const VkLayerDispatchTable& d = d_.dispatch;
    VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    info.size = 2 * kSlotBytes;
    info.usage = VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT;
    if (d.CreateBuffer(d_.device, &info, nullptr, &args_) != VK_SUCCESS) return args_ = VK_NULL_HANDLE, false;
    VkMemoryRequirements req;
    d.GetBufferMemoryRequirements(d_.device, args_, &req);
    const VkMemoryPropertyFlags want = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    const VkPhysicalDeviceMemoryProperties& props = d_.memory_properties;
    uint32_t type = props.memoryTypeCount;
    for (uint32_t t = 0; t < props.memoryTypeCount && type == props.memoryTypeCount; ++t)
        if ((req.memoryTypeBits >> t & 1u) && (props.memoryTypes[t].propertyFlags & want) == want) type = t;
    if (type == props.memoryTypeCount) return false;
    VkMemoryAllocateInfo alloc{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    alloc.allocationSize = req.size;
    alloc.memoryTypeIndex = type;
    if (d.AllocateMemory(d_.device, &alloc, nullptr, &args_memory_) != VK_SUCCESS) return args_memory_ = VK_NULL_HANDLE, false;
    if (d.BindBufferMemory(d_.device, args_, args_memory_, 0) != VK_SUCCESS) return false;
    void* map = nullptr;
    if (d.MapMemory(d_.device, args_memory_, 0, VK_WHOLE_SIZE, 0, &map) != VK_SUCCESS) return false;
    args_map_ = static_cast<VkDispatchIndirectCommand*>(map);
    return true;
}

// --- arming ------------------------------------------------------------------------------------

VkResult ArmedReplay::record(uint32_t slot, const CommandBufferState& cb) {
    const VkLayerDispatchTable& d = d_.dispatch;
    const VkCommandBuffer ours = cbs_[slot];
    const VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    if (VkResult r = d.BeginCommandBuffer(ours, &begin); r != VK_SUCCESS) return r;
    // The host's writes of the group counts, made before it lets the replay go, reach the
    // indirect reads: the event's wait carries that dependency; with a timeline wait the
    // host's signal orders them, and the barrier below names the access.
    VkMemoryBarrier host{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    host.srcAccessMask = VK_ACCESS_HOST_WRITE_BIT;
    host.dstAccessMask = VK_ACCESS_INDIRECT_COMMAND_READ_BIT;
    if (event_mode(d_))
        d.CmdWaitEvents(ours, 1, &events_[slot], VK_PIPELINE_STAGE_HOST_BIT, VK_PIPELINE_STAGE_DRAW_INDIRECT_BIT, 1,
                        &host, 0, nullptr, 0, nullptr);
    // Everything before it on the queue, too. The application submitted its work again only
    // after it saw the last one done (the release orders it after that), but the replay was
    // submitted before: this says so where the submission is checked (synchronization
    // validation), and costs an idle GPU nothing.
    VkMemoryBarrier all{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    all.srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT | (event_mode(d_) ? 0 : VK_ACCESS_HOST_WRITE_BIT);
    all.dstAccessMask = VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT;
    const VkPipelineStageFlags src = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT | (event_mode(d_) ? 0 : VK_PIPELINE_STAGE_HOST_BIT);
    d.CmdPipelineBarrier(ours, src, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0, 1, &all, 0, nullptr, 0, nullptr);
    capture::record_armed(*cb.capture, d, ours, args_, slot * kSlotBytes);
    // And everything after it: a disarmed replay wrote nothing, but the queue's next work, made
    // as if nothing ran between, must not look as if it raced the dispatches it skipped.
    all.srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT;
    d.CmdPipelineBarrier(ours, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0, 1, &all, 0,
                         nullptr, 0, nullptr);
    return d.EndCommandBuffer(ours);
}

VkResult ArmedReplay::submit(uint32_t slot, uint64_t release_value, uint64_t done_value) {
    VkTimelineSemaphoreSubmitInfo values{VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO};
    const VkPipelineStageFlags stage = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
    VkSubmitInfo info{VK_STRUCTURE_TYPE_SUBMIT_INFO, &values};
    if (!event_mode(d_)) {
        values.waitSemaphoreValueCount = 1;
        values.pWaitSemaphoreValues = &release_value;
        info.waitSemaphoreCount = 1;
        info.pWaitSemaphores = &release_;
        info.pWaitDstStageMask = &stage;
    }
    values.signalSemaphoreValueCount = 1;
    values.pSignalSemaphoreValues = &done_value;
    info.signalSemaphoreCount = 1;
    info.pSignalSemaphores = &done_;
    info.commandBufferCount = 1;
    info.pCommandBuffers = &cbs_[slot];
    d_.stats.add(Counter::DriverSubmits);
    return watch_device_loss(d_, d_.dispatch.QueueSubmit(q_.queue, 1, &info, VK_NULL_HANDLE));
}

void ArmedReplay::arm(const CommandBufferState& cb) {
    if (d_.settings.arm == ArmMode::Off || failed_ || armed() || d_.lost.load(std::memory_order_acquire)) return;
    // A command Slipstream does not know may be in command buffers its captures missed.
    if (!d_.fusable.load(std::memory_order_relaxed)) return;
    if (skip_ > 0) {
        --skip_;
        return;
    }
    if (!cb.capture || !scratch_.read(*cb.capture)) {
        d_.stats.add(Counter::ArmNotArmable);
        return;
    }
    if (!make_objects()) {
        log(LogLevel::Warn, "arm: cannot make the objects an armed replay needs; this queue does not arm");
        return;
    }
    // The other command buffer of ours, once its last replay is done (a queue in latency mode
    // waited for it long ago).
    const uint32_t slot = slot_ ^ 1u;
    if (slot_done_[slot] > seen_done_ && completed() < slot_done_[slot]) return;
    // Recorded again where the work changed, or where something it may name was destroyed or
    // updated since (a command buffer that binds an updated set is invalid).
    const uint64_t epoch = d_.arm_epoch.load(std::memory_order_acquire);
    if (!recorded_[slot].same_as(scratch_) || recorded_epoch_[slot] != epoch) {
        recorded_[slot].clear();
        if (watch_device_loss(d_, record(slot, cb)) != VK_SUCCESS) return;
        recorded_[slot] = scratch_;
        recorded_epoch_[slot] = epoch;
    }
    if (event_mode(d_) && d_.dispatch.ResetEvent(d_.device, events_[slot]) != VK_SUCCESS) return;
    slot_ = slot;
    write_args(false);
    if (!submit_armed(slot)) return;
    std::swap(work_, scratch_);
    armed_.store(true, std::memory_order_release);
    d_.stats.add(Counter::ArmArmed);
}

// With an event, a driver may run the submission on this thread and wait there for the event
// (outside the specification, a driver may): the flusher sets it at the deadline
// (unblock_if_late), the replay runs skipped, and after three such in a row this queue arms
// no more.
bool ArmedReplay::submit_armed(uint32_t slot) {
    deadline_ns_.store(now_ns() + uint64_t(d_.settings.arm_deadline_us) * 1000, std::memory_order_release);
    d_.armed_replays.fetch_add(1, std::memory_order_acq_rel);  // the flusher watches the deadline
    if (event_mode(d_)) blocking_event_.store(events_[slot], std::memory_order_release);
    if (d_.fusion) d_.fusion->wake();
    const VkResult r = submit(slot, release_value_ + 1, done_value_ + 1);
    const bool stuck = event_mode(d_) && blocking_event_.exchange(VK_NULL_HANDLE) == VK_NULL_HANDLE;
    if (r == VK_SUCCESS) {
        ++release_value_;
        slot_done_[slot] = ++done_value_;
    }
    stuck_ = stuck ? stuck_ + 1 : 0;
    if (r == VK_SUCCESS && !stuck) return true;
    d_.armed_replays.fetch_sub(1, std::memory_order_acq_rel);
    if (stuck) {
        // A slow submission (a loaded machine, a validation layer below) looks the same once:
        // a disarm by the deadline; three in a row, and the driver holds them.
        last_done_ = skipped_done_ = done_value_;
        d_.stats.add(Counter::ArmDisarmed);
        d_.stats.add(Counter::ArmDisarmedDeadline);
        misses_ = std::min(misses_ + 1, kMostMisses);
        skip_ = (1u << misses_) - 1;
        if (stuck_ >= kMostStuck) {
            log(LogLevel::Warn, "arm: the driver holds armed submissions on the submitting thread; this queue does not arm");
            failed_ = true;
        }
    }
    return false;
}

void ArmedReplay::unblock_if_late(uint64_t now, uint64_t* wake_at) {
    if (blocking_event_.load(std::memory_order_acquire) == VK_NULL_HANDLE) return;
    const uint64_t deadline = deadline_ns_.load(std::memory_order_acquire);
    if (now < deadline) {
        *wake_at = std::min(*wake_at, deadline);
        return;
    }
    // Its group counts are zeros: it runs skipped.
    if (const VkEvent e = blocking_event_.exchange(VK_NULL_HANDLE)) d_.dispatch.SetEvent(d_.device, e);
}

bool ArmedReplay::matches(const CommandBufferState& cb) {
    return armed() && cb.capture && scratch_.read(*cb.capture) && scratch_.same_as(work_);
}

// --- letting it go -------------------------------------------------------------------------------

void ArmedReplay::write_args(bool run) {
    VkDispatchIndirectCommand* slot = args_map_ + slot_ * capture::ArmableWork::kMaxDispatches;
    const std::vector<capture::ArmedDispatch>& work = work_.dispatches();
    const size_t n = run ? work.size() : capture::ArmableWork::kMaxDispatches;
    for (size_t i = 0; i < n; ++i) slot[i] = run ? VkDispatchIndirectCommand{work[i].x, work[i].y, work[i].z}
                                                 : VkDispatchIndirectCommand{0, 0, 0};
}

VkResult ArmedReplay::let_go() {
    VkResult r;
    if (event_mode(d_)) {
        r = d_.dispatch.SetEvent(d_.device, events_[slot_]);
    } else {
        VkSemaphoreSignalInfo signal{VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO};
        signal.semaphore = release_;
        signal.value = release_value_;
        const PFN_vkSignalSemaphore call =
            d_.dispatch.SignalSemaphore ? d_.dispatch.SignalSemaphore : d_.dispatch.SignalSemaphoreKHR;
        r = call(d_.device, &signal);
    }
    armed_.store(false, std::memory_order_release);
    d_.armed_replays.fetch_sub(1, std::memory_order_acq_rel);
    last_done_ = done_value_;
    if (watch_device_loss(d_, r) != VK_SUCCESS && r != VK_ERROR_DEVICE_LOST)
        log(LogLevel::Error, "arm: the host call that lets an armed replay go failed (%d): the queue may stall",
            int(r));
    return r;
}

VkResult ArmedReplay::release(VkSemaphore* done, uint64_t* value) {
    write_args(true);
    const VkResult r = let_go();
    if (r != VK_SUCCESS) return r;
    misses_ = 0;
    released_done_ = last_done_;
    d_.stats.add(Counter::ArmReleased);
    *done = done_;
    *value = last_done_;
    return VK_SUCCESS;
}

void ArmedReplay::disarm(Counter why) {
    if (!armed()) return;
    write_args(false);
    let_go();
    skipped_done_ = last_done_;
    d_.stats.add(Counter::ArmDisarmed);
    d_.stats.add(why);
    misses_ = std::min(misses_ + 1, kMostMisses);
    skip_ = (1u << misses_) - 1;
}

// --- completion ----------------------------------------------------------------------------------

uint64_t ArmedReplay::completed() {
    uint64_t value = 0;
    if (watch_device_loss(d_, d_.fusion_counter_value(d_.device, done_, &value)) != VK_SUCCESS)
        return UINT64_MAX;  // lost: nothing of ours runs any more
    seen_done_ = std::max(seen_done_, value);
    return seen_done_;
}

bool ArmedReplay::busy() { return released_done_ > seen_done_ && completed() < released_done_; }

bool ArmedReplay::skipped_running(uint64_t* value) {
    *value = skipped_done_;
    return skipped_done_ > seen_done_ && completed() < skipped_done_;
}

}  // namespace slipstream::submit
