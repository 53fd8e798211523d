// Layer state for the Vulkan objects Slipstream follows, and the maps that find it.
//
// Instances and devices are found by the loader's dispatch key (the dispatch-table pointer
// at the start of every dispatchable handle): a physical device shares its instance's key,
// and a queue or command buffer shares its device's. Queues and command buffers have state
// of their own, found by handle.
#pragma once

#include "command_table.h"
#include "core/settings.h"
#include "core/stats.h"

#include <vulkan/vk_layer.h>
#include <vulkan/vk_layer_dispatch_table.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace slipstream {

// The features' objects the state holds. This floor sees only the ground: it names them, and
// src/engine/state_lifetime.cpp, which sees every feature, makes and frees them (the
// constructors and destructors below are defined there).
class AdaptiveSpinBudget;
class IdleTracker;
class ObjectRecord;
class ReadbackTracker;
struct QueueIdle;
struct DeviceParts;
namespace capture {
class CommandCapture;
class LayoutKeeper;
class ResourceRegistry;
}  // namespace capture
namespace objects {
class AllocCache;
class FencePool;
struct GpuZero;
class TimelinePool;
}  // namespace objects
namespace submit {
class DeviceFusion;
class LatencyFamilies;
class QueueFusion;
}  // namespace submit

inline void* dispatch_key(const void* handle) { return *static_cast<void* const*>(handle); }

struct InstanceState {
    VkInstance instance = VK_NULL_HANDLE;
    VkLayerInstanceDispatchTable dispatch{};
    uint32_t api_version = VK_API_VERSION_1_0;
    Settings settings;
};

struct DeviceState;

struct QueueState {
private:
    std::unique_ptr<QueueIdle> idle_;  // first made, last freed: `idle` names it

public:
    VkQueue queue = VK_NULL_HANDLE;
    DeviceState* device = nullptr;
    uint32_t family = 0;
    uint32_t index = 0;
    VkQueueFlags flags = 0;
    QueueIdle& idle;  // guarded by its own mutex; made with the queue, one pointer away
    // The open batch and batches in flight, while the device fuses (set once, at the first
    // vkGetDeviceQueue of this queue); its mutex is the queue's lock then.
    std::unique_ptr<submit::QueueFusion> fusion;
    // A submission named a semaphore of the application's since the driver's last idle wait on
    // this queue: the next idle wait ends in the driver's (idle_waits.cpp, idle_wait). Written under
    // the host access the application gives the queue; atomic for the device's idle waits.
    std::atomic<bool> semaphores_since_driver_idle{false};
    bool owes_driver_idle() const { return semaphores_since_driver_idle.load(std::memory_order_relaxed); }

    QueueState();
    ~QueueState();
    QueueState(const QueueState&) = delete;
    QueueState& operator=(const QueueState&) = delete;
};

// A submission of the layer's that handed the driver command buffers as the application
// recorded them (submit/native_settle.h): done once its queue's timeline reaches `value`, or,
// followed through `followed` (followed_fence.h), once the queue's follow `follow` ended.
struct NativeSubmission {
    uint64_t value = 0;
    VkFence followed = VK_NULL_HANDLE;
    uint64_t follow = 0;
};

// What a command buffer holds. Written only by the thread recording it (command buffers are
// externally synchronized), read at submission.
struct CommandBufferState {
    VkCommandBuffer handle = VK_NULL_HANDLE;
    DeviceState* device = nullptr;
    VkCommandPool pool = VK_NULL_HANDLE;
    VkCommandBufferLevel level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    VkCommandPoolCreateFlags pool_flags = 0;  // of its pool, as created
    uint32_t queue_family = 0;                // the pool's queue family
    uint32_t kinds = 0;                              // bit (1 << CommandKind) per kind recorded
    VkPipelineStageFlags2 stages = 0;                // union of the recorded commands' stages
    uint32_t command_counts[kCommandKindCount] = {};
    // The commands since vkBeginCommandBuffer, deep-copied for fusion (capture/). Null while
    // VK_SLIPSTREAM_FUSE is off or the device cannot fuse: the wrappers then pay one branch.
    std::unique_ptr<capture::CommandCapture> capture;
    // The device's layout epoch (LayoutKeeper: destroys of layouts and templates so far) when
    // it was begun: a capture may name only layouts and templates that existed then.
    uint64_t layout_epoch = 0;
    // Lazily recorded (VK_SLIPSTREAM_LAZY_RECORD): the driver has not seen this recording; it
    // exists only as its capture, replayed into Slipstream's command buffers at submission.
    // A command that cannot be captured records it natively first (capture_control.h).
    bool lazy = false;
    // Its capture's work follows a barrier of its own that holds the fuse barrier
    // (capture/barrier_cover.h): fusion puts none in front of it.
    bool opens_ordered = false;
    // Its commands all work in the stages barrier narrowing assumes (capture/barrier_narrowing.h).
    bool narrowable = false;
    // With barrier elision: the device's descriptor update epoch when it began (its
    // capture's footprint, capture::footprint_for, sees the sets as they were then).
    uint64_t descriptor_epoch = 0;
    // Counted live in the device's LayoutKeeper (lazy captures, and those made native
    // mid-recording, until reset, re-begun or freed).
    bool holds_layouts = false;
    // Batches of fusion's it is noted in and not yet replayed from (its capture must stay as it
    // is until then: a reset or free first flushes them).
    mutable std::atomic<uint32_t> in_batches{0};
    // The layer's last submission of this command buffer's own recording (the latency path's
    // direct submission, or one passed through), on queue `native_on`: until it completed, a
    // re-begin, reset or free of the command buffer or of its pool waits for it
    // (submit::settle_native), so that the driver never sees its command buffer change while
    // it runs, as with lazy recording. Written by the submitting thread (note_native),
    // `native_on` last (release), read by the one that resets or frees it, `native_on` first
    // (acquire); null: nothing of it may run.
    mutable std::atomic<QueueState*> native_on{nullptr};
    mutable NativeSubmission native;
    // The driver's vkBeginCommandBuffer failed when the recording was made native: returned
    // by vkEndCommandBuffer. The command buffer then stays `lazy` with a stopped capture, so
    // that nothing more reaches the driver's command buffer, which never began.
    VkResult native_error = VK_SUCCESS;

    CommandBufferState();
    CommandBufferState(const CommandBufferState&) = delete;
    CommandBufferState& operator=(const CommandBufferState&) = delete;
    ~CommandBufferState();  // releases its layouts

    void record(CommandId id) {
        const CommandInfo& info = kCommandInfo[int(id)];
        kinds |= 1u << int(info.kind);
        stages |= info.stages;
        ++command_counts[int(info.kind)];
    }
    // What the command buffer counts toward a batch's VK_SLIPSTREAM_BATCH_MAX: its work
    // commands. State, synchronization and debug commands ride along.
    uint32_t operations() const {
        return command_counts[int(CommandKind::Compute)] + command_counts[int(CommandKind::Transfer)] +
               command_counts[int(CommandKind::Query)];
    }
    // Adds what a secondary command buffer holds (vkCmdExecuteCommands).
    void include(const CommandBufferState& secondary) {
        kinds |= secondary.kinds;
        stages |= secondary.stages;
        for (int k = 0; k < kCommandKindCount; ++k) command_counts[k] += secondary.command_counts[k];
    }
    // vkBeginCommandBuffer, vkResetCommandBuffer or a pool reset: forgets what it recorded.
    void reset(bool release_memory = false);
    // No capture of this command buffer can be replayed any more.
    void release_layouts();
};

struct DeviceState {
private:
    // What fence_spin, semaphore_spin, idle_spin, latency_families and layouts name: first
    // made, last freed.
    std::unique_ptr<DeviceParts> parts_;

public:
    VkDevice device = VK_NULL_HANDLE;
    VkPhysicalDevice physical_device = VK_NULL_HANDLE;
    // False for a device made of a device group of several physical devices: device masks
    // then say something fusion does not carry.
    bool one_physical_device = true;
    InstanceState* instance = nullptr;
    VkLayerDispatchTable dispatch{};
    // Makes layer-created dispatchable objects (our own command buffers) usable by the loader.
    PFN_vkSetDeviceLoaderData set_loader_data = nullptr;
    Settings settings;
    VkPhysicalDeviceProperties properties{};
    VkPhysicalDeviceMemoryProperties memory_properties{};
    std::vector<VkQueueFamilyProperties> queue_families;
    DeviceStats stats;
    std::unique_ptr<IdleTracker> idle;  // when settings.spin
    // How buffers and images were created and bound, imports and update templates: one record
    // that cached readback and barrier elision both read (null while neither is on). Declared
    // before them: they use it until they are gone.
    std::unique_ptr<ObjectRecord> record;
    std::unique_ptr<ReadbackTracker> readback;  // when readback is not off, or steering is on
    // Nonzero while cached readback holds buffer binds back or follows buffers in moved memory
    // (readback_deferral.h): buffer-naming commands then ask it first. One branch otherwise.
    std::atomic<uint32_t> buffer_watch{0};
    // One per kind of wait site (waits/waits.h). Made with the device, one pointer away.
    AdaptiveSpinBudget& fence_spin;
    AdaptiveSpinBudget& semaphore_spin;
    AdaptiveSpinBudget& idle_spin;
    // Fences kept for reuse (VK_SLIPSTREAM_OBJECT_POOL; null when off): objects/fence_pool.h.
    std::unique_ptr<objects::FencePool> fence_pool;
    // Plain allocations kept for reuse (VK_SLIPSTREAM_ALLOC_CACHE; null when off):
    // objects/alloc_cache.h. With VK_EXT_memory_budget (and Vulkan 1.1 on both sides) a keep
    // asks at most every millisecond (longer where the query is dear) whether its heap is under
    // pressure.
    std::unique_ptr<objects::AllocCache> alloc_cache;
    bool memory_budget = false;
    // The GPU zero fill of recycled memory the host cannot map (objects/zero_fill.h): with the
    // cache zeroing, on a device with timeline semaphores; null otherwise (such memory is then
    // not recycled while zeroing is on). Submissions look at it first (one atomic load).
    std::unique_ptr<objects::GpuZero> gpu_zero;
    std::atomic<int64_t> memory_budget_checked_ns{0};
    std::atomic<int64_t> memory_budget_interval_ns{1'000'000};  // objects::AllocCache::budget_interval_ns
    // Timeline semaphores kept for reuse, and the value offsets of those handed out again
    // (VK_SLIPSTREAM_OBJECT_POOL; null when off): objects/timeline_pool.h.
    std::unique_ptr<objects::TimelinePool> timeline_pool;

    // False once the application obtained a vkCmd* Slipstream does not intercept (one newer
    // than its vk.xml): command buffers may then hold commands no capture saw.
    std::atomic<bool> fusable{true};
    // Fusion (VK_SLIPSTREAM_FUSE, on a device with timeline semaphores): the deadline
    // flusher, the timeline commands of the device's API version, the open batches.
    std::unique_ptr<submit::DeviceFusion> fusion;
    PFN_vkGetSemaphoreCounterValue fusion_counter_value = nullptr;
    PFN_vkWaitSemaphores fusion_wait_semaphores = nullptr;
    std::atomic<uint32_t> open_batches{0};
    // Command buffers whose `native_on` is set (submit/native_settle.h): while 0, a pool reset or
    // destroy looks at none of its command buffers for them.
    std::atomic<uint32_t> natively_submitted{0};
    // Held batches (any queue) that signal semaphores of the application's: while 0, host waits
    // and counter reads of semaphores, and submissions that wait on them, flush nothing.
    std::atomic<uint32_t> held_signal_batches{0};
    // Queues with an armed replay waiting for a host release (VK_SLIPSTREAM_ARM,
    // submit/armed_replay.h): while 0, destroys, frees and descriptor updates, and the flusher,
    // look at no queue for them.
    std::atomic<uint32_t> armed_replays{0};
    // Counts destroys, frees and descriptor updates while arming is on: a command buffer of
    // an armed replay recorded before the latest one is recorded again before its next use.
    std::atomic<uint64_t> arm_epoch{0};
    // Queue families whose latest fusable submission found its queue in latency mode with
    // nothing of ours running (LAZY_RECORD=auto records their command buffers into the driver
    // at vkEndCommandBuffer).
    submit::LatencyFamilies& latency_families;
    // What barrier elision knows of buffers, images, descriptor sets and pipelines (while
    // VK_SLIPSTREAM_ELIDE_BARRIERS is on with fusion and its barrier; null otherwise).
    std::unique_ptr<capture::ResourceRegistry> resources;
    // Set once a driver call Slipstream made or passed on returned VK_ERROR_DEVICE_LOST:
    // fusion then submits nothing more and answers submissions and waits with the error
    // (FUSION.md rule 10).
    std::atomic<bool> lost{false};
    // Fusing queues that hold an error of a flush no call has returned yet (the flusher's):
    // the next submission to that queue, or the next wait on the device, returns it.
    std::atomic<uint32_t> fusion_errors{0};
    // Pipeline layouts, descriptor set layouts and update templates: their destroys counted
    // (a capture begun before one of them went may name it) and, while lazy captures may
    // still be replayed with them, put off.
    capture::LayoutKeeper& layouts;

    struct CommandPoolInfo {
        VkCommandPoolCreateFlags flags = 0;
        uint32_t queue_family = 0;
    };
    std::mutex mutex;  // guards the maps below
    std::unordered_map<VkCommandPool, std::unordered_set<VkCommandBuffer>> pool_command_buffers;
    std::unordered_map<VkCommandPool, CommandPoolInfo> command_pools;
    std::unordered_set<std::string> unknown_commands;  // the names that made it not fusable
    std::vector<QueueState*> queues;  // every queue retrieved; freed with the device
    std::vector<submit::QueueFusion*> fusing_queues;  // their batches, while the device fuses
    // The first kFusingFast of fusing_queues, and how many fusing_queues holds, published for
    // readers that take no lock (submit/fusion.cpp, FusingQueues).
    static constexpr size_t kFusingFast = 8;
    std::atomic<submit::QueueFusion*> fusing_fast[kFusingFast] = {};
    std::atomic<uint32_t> fusing_fast_count{0};

    DeviceState();
    ~DeviceState();
    DeviceState(const DeviceState&) = delete;
    DeviceState& operator=(const DeviceState&) = delete;
};

// Notes a device loss in `result` (of any driver call Slipstream made or passed on); returns it.
inline VkResult watch_device_loss(DeviceState& d, VkResult result) {
    if (result == VK_ERROR_DEVICE_LOST) d.lost.store(true, std::memory_order_release);
    return result;
}

// --- lookups (any thread) ---
InstanceState* find_instance(const void* dispatchable);  // VkInstance or VkPhysicalDevice
DeviceState* find_device(const void* dispatchable);      // VkDevice, VkQueue or VkCommandBuffer
QueueState* find_queue(VkQueue queue);
CommandBufferState* find_command_buffer(VkCommandBuffer cb);

// --- lifetime ---
InstanceState* add_instance(std::unique_ptr<InstanceState> state);
void remove_instance(VkInstance instance);
DeviceState* add_device(std::unique_ptr<DeviceState> state);
// Reports the device's statistics and frees its state and that of its queues and command
// buffers, with the fences the layer created.
void remove_device(VkDevice device);

QueueState* note_queue(DeviceState& device, VkQueue queue, uint32_t family, uint32_t index);
void note_command_pool(DeviceState& device, VkCommandPool pool, const VkCommandPoolCreateInfo& info);
void add_command_buffers(DeviceState& device, VkCommandPool pool, VkCommandBufferLevel level,
                         const VkCommandBuffer* cbs, uint32_t count);
void remove_command_buffers(DeviceState& device, VkCommandPool pool, const VkCommandBuffer* cbs,
                            uint32_t count);
void remove_command_pool(DeviceState& device, VkCommandPool pool);
void reset_command_pool(DeviceState& device, VkCommandPool pool, bool release_memory = false);
// Whether a command buffer of `pool` is in a batch of fusion's not yet replayed.
bool pool_has_batched(DeviceState& device, VkCommandPool pool);
// `cb`'s own recording went to the driver on `q` in `submission` (CommandBufferState::native_on).
void note_native(const CommandBufferState& cb, QueueState& q, const NativeSubmission& submission);
// The command buffers of `pool` whose own recording the layer submitted (`native_on` set).
std::vector<const CommandBufferState*> pool_natively_submitted(DeviceState& device, VkCommandPool pool);

// Destroys the fences of the layer's that idle tracking holds for the device's queues (at
// vkDestroyDevice, before their state goes). Defined with the constructors.
void destroy_idle_fences(DeviceState& device);

// Reports statistics for devices still alive when the process exits.
void report_live_devices_at_exit();

}  // namespace slipstream
