#include "submit/flush_policy.h"

namespace slipstream::submit {

const char* flush_reason_name(FlushReason reason) {
    switch (reason) {
    case FlushReason::Full: return "full";
    case FlushReason::GpuStarving: return "gpu-starving";
    case FlushReason::Observe: return "observe";
    case FlushReason::Deadline: return "deadline";
    case FlushReason::PassThrough: return "pass-through";
    case FlushReason::Destroy: return "destroy";
    }
    return "?";
}

const char* pass_reason_name(PassReason reason) {
    switch (reason) {
    case PassReason::None: return "fused";
    case PassReason::NotCaptured: return "not-captured";
    case PassReason::Semaphores: return "semaphores";
    case PassReason::SubmitExtension: return "submit-extension";
    case PassReason::OtherFamily: return "other-family";
    case PassReason::LayoutsDestroyed: return "layouts-destroyed";
    }
    return "?";
}

PassReason classify_submit(const VkSubmitInfo& submit) {
    if (submit.waitSemaphoreCount || submit.signalSemaphoreCount) return PassReason::Semaphores;
    if (submit.pNext) return PassReason::SubmitExtension;
    return PassReason::None;
}

PassReason classify_submit(const VkSubmitInfo2& submit) {
    if (submit.waitSemaphoreInfoCount || submit.signalSemaphoreInfoCount) return PassReason::Semaphores;
    if (submit.pNext || submit.flags) return PassReason::SubmitExtension;
    for (uint32_t i = 0; i < submit.commandBufferInfoCount; ++i) {
        const VkCommandBufferSubmitInfo& cb = submit.pCommandBufferInfos[i];
        if (cb.pNext || cb.deviceMask) return PassReason::SubmitExtension;
    }
    return PassReason::None;
}

}  // namespace slipstream::submit
