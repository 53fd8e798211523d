#include "submit/kept_error.h"

#include "state/object_state.h"

namespace slipstream::submit {

VkResult KeptError::take() {
    if (d_.lost.load(std::memory_order_acquire)) return VK_ERROR_DEVICE_LOST;
    VkResult r = error_;
    if (r != VK_SUCCESS) d_.fusion_errors.fetch_sub(1, std::memory_order_acq_rel);
    error_ = VK_SUCCESS;
    return r;
}

void KeptError::keep(VkResult result) {
    if (result >= 0 || result == VK_ERROR_DEVICE_LOST || error_ != VK_SUCCESS) return;
    error_ = result;
    d_.fusion_errors.fetch_add(1, std::memory_order_acq_rel);
}

}  // namespace slipstream::submit
