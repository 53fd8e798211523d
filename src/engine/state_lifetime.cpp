// The constructors and destructors of the state's structs (state/object_state.h), and the
// rest of what makes or frees the features' objects they hold. The state sees only the ground
// and names those objects by declaration; this file, on the floor above every feature, sees
// them whole.
#include "state/object_state.h"

#include "capture/command_capture.h"
#include "capture/layout_keeper.h"
#include "capture/resource_registry.h"
#include "state/object_record.h"
#include "memory/readback_tracker.h"
#include "objects/alloc_cache.h"
#include "objects/fence_pool.h"
#include "objects/timeline_pool.h"
#include "objects/zero_fill.h"
#include "submit/device_fusion.h"
#include "submit/flush_policy.h"
#include "submit/queue_fusion.h"
#include "idle/queue_idle.h"
#include "idle/spin_wait.h"

namespace slipstream {

// What a device holds of the features by value, made once with it.
struct DeviceParts {
    AdaptiveSpinBudget fence_spin, semaphore_spin, idle_spin;
    submit::LatencyFamilies latency_families;
    capture::LayoutKeeper layouts;
};

QueueState::QueueState() : idle_(std::make_unique<QueueIdle>()), idle(*idle_) {}
QueueState::~QueueState() = default;

CommandBufferState::CommandBufferState() = default;
CommandBufferState::~CommandBufferState() { release_layouts(); }

void CommandBufferState::reset(bool release_memory) {
    kinds = 0;
    stages = 0;
    for (uint32_t& c : command_counts) c = 0;
    if (capture) capture->reset(release_memory);  // and its footprint
    lazy = false;
    opens_ordered = false;
    narrowable = false;
    native_error = VK_SUCCESS;
    release_layouts();
}

void CommandBufferState::release_layouts() {
    if (!holds_layouts) return;
    holds_layouts = false;
    device->layouts.release(layout_epoch);
}

DeviceState::DeviceState()
    : parts_(std::make_unique<DeviceParts>()),
      fence_spin(parts_->fence_spin),
      semaphore_spin(parts_->semaphore_spin),
      idle_spin(parts_->idle_spin),
      latency_families(parts_->latency_families),
      layouts(parts_->layouts) {}
DeviceState::~DeviceState() = default;

void destroy_idle_fences(DeviceState& device) {
    if (!device.idle) return;
    for (QueueState* q : device.queues) {
        std::lock_guard lock(q->idle.mutex);
        device.idle->destroy_own_fences(q->idle);
    }
}

}  // namespace slipstream
