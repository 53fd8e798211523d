// The error of fusion's that a wait is about to return, once nothing of the layer's runs.
#pragma once

#include "state/object_state.h"

#include <vulkan/vulkan.h>

namespace slipstream {

// An error of fusion's (a batch that failed, now or earlier) reaches the application only once
// the device runs nothing more: after a failed batch the layer went on submitting what the
// application fused after it (later batches, the application's own command buffers in place of
// a failed one), work the application, told of an error, may free under the GPU (fault case
// submit-oom-ring crashed lavapipe so, 8 runs in 150 on a loaded machine). Returns `e`; a lost
// device, a success, or a device without fusion: at once. Takes every queue's lock: call with
// none held.
VkResult settled(DeviceState& d, VkResult e);

}  // namespace slipstream
