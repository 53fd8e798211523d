// The first error a flush met that no caller could return (the flusher's): the queue's next
// submission, or the device's next wait, returns it once. Counted in DeviceState::fusion_errors,
// so that waits find it with one atomic load; a device loss stays in DeviceState::lost instead.
// Under the queue lock.
#pragma once

#include <vulkan/vulkan.h>

namespace slipstream {
struct DeviceState;
}

namespace slipstream::submit {

class KeptError {
public:
    explicit KeptError(DeviceState& device) : d_(device) {}
    // The error kept (VK_SUCCESS if none), which is then forgotten; the device's loss stays.
    VkResult take();
    // Keeps `result` if it is an error other than a loss and none is kept yet.
    void keep(VkResult result);

private:
    DeviceState& d_;
    VkResult error_ = VK_SUCCESS;
};

}  // namespace slipstream::submit
