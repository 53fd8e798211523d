#include "state/object_state.h"

#include "core/handle_map.h"

#include <cstdlib>

namespace slipstream {

namespace {
// Never destroyed: the loader may call into the layer from other static destructors, and
// the exit report needs the devices that are still alive.
HandleMap<void*, InstanceState>& instances() {
    static auto* map = new HandleMap<void*, InstanceState>();
    return *map;
}
HandleMap<void*, DeviceState>& devices() {
    static auto* map = new HandleMap<void*, DeviceState>();
    return *map;
}
FewHandles<DeviceState>& recent_devices() {
    static auto* table = new FewHandles<DeviceState>();
    return *table;
}
HandleMap<VkQueue, QueueState>& queues() {
    static auto* map = new HandleMap<VkQueue, QueueState>();
    return *map;
}
HandleMap<VkCommandBuffer, CommandBufferState, 64>& command_buffers() {
    static auto* map = new HandleMap<VkCommandBuffer, CommandBufferState, 64>();
    return *map;
}
// In front of command_buffers(): a hit takes no lock (every vkCmd* looks its state up).
HandleCache<CommandBufferState>& recent_command_buffers() {
    static auto* cache = new HandleCache<CommandBufferState>();
    return *cache;
}

StatsSnapshot device_snapshot(const DeviceState& d) {
    StatsSnapshot s = snapshot(d.stats);
    s.device_name = d.properties.deviceName;
    s.vendor_id = d.properties.vendorID;
    s.device_id = d.properties.deviceID;
    s.driver_version = d.properties.driverVersion;
    return s;
}
}  // namespace

InstanceState* find_instance(const void* dispatchable) { return instances().find(dispatch_key(dispatchable)); }
DeviceState* find_device(const void* dispatchable) {
    void* key = dispatch_key(dispatchable);
    if (DeviceState* d = recent_devices().find(key)) return d;
    return devices().find(key);
}
QueueState* find_queue(VkQueue queue) { return queues().find(queue); }
CommandBufferState* find_command_buffer(VkCommandBuffer cb) {
    if (CommandBufferState* state = recent_command_buffers().find(cb)) return state;
    CommandBufferState* state = command_buffers().find(cb);
    if (state) recent_command_buffers().remember(cb, state);
    return state;
}

InstanceState* add_instance(std::unique_ptr<InstanceState> state) {
    void* key = dispatch_key(state->instance);
    return instances().insert(key, std::move(state));
}

void remove_instance(VkInstance instance) { instances().erase(dispatch_key(instance)); }

DeviceState* add_device(std::unique_ptr<DeviceState> state) {
    static std::once_flag exit_hook;
    std::call_once(exit_hook, [] { std::atexit(report_live_devices_at_exit); });
    void* key = dispatch_key(state->device);
    DeviceState* d = devices().insert(key, std::move(state));
    recent_devices().insert(key, d);
    return d;
}

void remove_device(VkDevice device) {
    recent_devices().erase(dispatch_key(device));
    std::unique_ptr<DeviceState> state = devices().erase(dispatch_key(device));
    if (!state) return;
    DeviceState* raw = state.get();
    destroy_idle_fences(*raw);
    recent_command_buffers().clear();  // every slot may hold one of the device's
    command_buffers().erase_if([raw](const CommandBufferState& cb) { return cb.device == raw; });
    queues().erase_if([raw](const QueueState& q) { return q.device == raw; });
    StatsSnapshot s = device_snapshot(*state);
    s.live_devices = devices().size();
    s.live_queues = queues().size();
    s.live_command_buffers = command_buffers().size();
    report_device_stats(s, state->settings);
}

QueueState* note_queue(DeviceState& device, VkQueue queue, uint32_t family, uint32_t index) {
    if (QueueState* known = queues().find(queue)) return known;
    auto q = std::make_unique<QueueState>();
    q->queue = queue;
    q->device = &device;
    q->family = family;
    q->index = index;
    if (family < device.queue_families.size()) q->flags = device.queue_families[family].queueFlags;
    std::lock_guard lock(device.mutex);
    // Two threads may fetch the same queue at once: only one state may win.
    if (QueueState* known = queues().find(queue)) return known;
    QueueState* raw = queues().insert(queue, std::move(q));
    device.queues.push_back(raw);
    return raw;
}

void note_command_pool(DeviceState& device, VkCommandPool pool, const VkCommandPoolCreateInfo& info) {
    std::lock_guard lock(device.mutex);
    device.command_pools[pool] = {info.flags, info.queueFamilyIndex};
}

void add_command_buffers(DeviceState& device, VkCommandPool pool, VkCommandBufferLevel level,
                         const VkCommandBuffer* cbs, uint32_t count) {
    std::lock_guard lock(device.mutex);
    const DeviceState::CommandPoolInfo pool_info = device.command_pools[pool];
    for (uint32_t i = 0; i < count; ++i) {
        auto state = std::make_unique<CommandBufferState>();
        state->handle = cbs[i];
        state->device = &device;
        state->pool = pool;
        state->level = level;
        state->pool_flags = pool_info.flags;
        state->queue_family = pool_info.queue_family;
        recent_command_buffers().erase(cbs[i]);  // (a handle the map replaces: nothing stale stays)
        command_buffers().insert(cbs[i], std::move(state));
    }
    device.pool_command_buffers[pool].insert(cbs, cbs + count);
}

void remove_command_buffers(DeviceState& device, VkCommandPool pool, const VkCommandBuffer* cbs,
                            uint32_t count) {
    std::lock_guard lock(device.mutex);
    auto& set = device.pool_command_buffers[pool];
    for (uint32_t i = 0; i < count; ++i) {
        if (!cbs[i]) continue;  // freeing VK_NULL_HANDLE is allowed and does nothing
        set.erase(cbs[i]);
        recent_command_buffers().erase(cbs[i]);
        command_buffers().erase(cbs[i]);
    }
}

void remove_command_pool(DeviceState& device, VkCommandPool pool) {
    std::lock_guard lock(device.mutex);
    device.command_pools.erase(pool);
    auto it = device.pool_command_buffers.find(pool);
    if (it == device.pool_command_buffers.end()) return;
    for (VkCommandBuffer cb : it->second) {
        recent_command_buffers().erase(cb);
        command_buffers().erase(cb);
    }
    device.pool_command_buffers.erase(it);
}

bool pool_has_batched(DeviceState& device, VkCommandPool pool) {
    std::lock_guard lock(device.mutex);
    auto it = device.pool_command_buffers.find(pool);
    if (it == device.pool_command_buffers.end()) return false;
    for (VkCommandBuffer cb : it->second)
        if (const CommandBufferState* state = command_buffers().find(cb);
            state && state->in_batches.load(std::memory_order_acquire) != 0)
            return true;
    return false;
}

void note_native(const CommandBufferState& cb, QueueState& q, const NativeSubmission& submission) {
    cb.native = submission;
    if (!cb.native_on.exchange(&q, std::memory_order_acq_rel))
        q.device->natively_submitted.fetch_add(1, std::memory_order_relaxed);
}

std::vector<const CommandBufferState*> pool_natively_submitted(DeviceState& device, VkCommandPool pool) {
    std::vector<const CommandBufferState*> out;
    std::lock_guard lock(device.mutex);
    auto it = device.pool_command_buffers.find(pool);
    if (it == device.pool_command_buffers.end()) return out;
    for (VkCommandBuffer cb : it->second)
        if (const CommandBufferState* state = command_buffers().find(cb); state && state->native_on.load(std::memory_order_acquire))
            out.push_back(state);
    return out;
}

void reset_command_pool(DeviceState& device, VkCommandPool pool, bool release_memory) {
    std::lock_guard lock(device.mutex);
    auto it = device.pool_command_buffers.find(pool);
    if (it == device.pool_command_buffers.end()) return;
    for (VkCommandBuffer cb : it->second)
        if (CommandBufferState* state = command_buffers().find(cb)) state->reset(release_memory);
}

void report_live_devices_at_exit() {
    devices().for_each([](void*, const DeviceState& d) { report_device_stats(device_snapshot(d), d.settings); });
}

}  // namespace slipstream
