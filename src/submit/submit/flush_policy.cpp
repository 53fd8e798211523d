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

namespace {
bool masks_name_one_device(uint32_t count, const uint32_t* masks) {
    for (uint32_t i = 0; i < count; ++i)
        if (masks && masks[i] != 1u) return false;
    return true;
}

// Whether one structure of a VkSubmitInfo(2)'s chain carries nothing fusion would drop.
bool carried(const VkBaseInStructure& s, bool one_device) {
    switch (s.sType) {
    case VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO: return true;  // its values go with semaphores
    case VK_STRUCTURE_TYPE_PROTECTED_SUBMIT_INFO:
        return !reinterpret_cast<const VkProtectedSubmitInfo&>(s).protectedSubmit;
    case VK_STRUCTURE_TYPE_DEVICE_GROUP_SUBMIT_INFO: {
        if (!one_device) return false;
        const auto& g = reinterpret_cast<const VkDeviceGroupSubmitInfo&>(s);
        // On a device of one physical device every mask is 1 and every index 0; anything
        // else is left to the driver to judge.
        for (uint32_t i = 0; i < g.waitSemaphoreCount; ++i)
            if (g.pWaitSemaphoreDeviceIndices && g.pWaitSemaphoreDeviceIndices[i] != 0) return false;
        for (uint32_t i = 0; i < g.signalSemaphoreCount; ++i)
            if (g.pSignalSemaphoreDeviceIndices && g.pSignalSemaphoreDeviceIndices[i] != 0) return false;
        return masks_name_one_device(g.commandBufferCount, g.pCommandBufferDeviceMasks);
    }
    default: return false;
    }
}

PassReason classify_chain(const void* next, bool one_device, VkStructureType* unknown) {
    for (auto* s = static_cast<const VkBaseInStructure*>(next); s; s = s->pNext) {
        if (carried(*s, one_device)) continue;
        if (unknown) *unknown = s->sType;
        return PassReason::SubmitExtension;
    }
    return PassReason::None;
}
}  // namespace

PassReason classify_submit(const VkSubmitInfo& submit, bool one_device, VkStructureType* unknown) {
    if (PassReason why = classify_chain(submit.pNext, one_device, unknown); why != PassReason::None) return why;
    if (submit.waitSemaphoreCount || submit.signalSemaphoreCount) return PassReason::Semaphores;
    return PassReason::None;
}

PassReason classify_submit(const VkSubmitInfo2& submit, bool one_device, VkStructureType* unknown) {
    if (submit.flags) return PassReason::SubmitExtension;  // protected
    if (PassReason why = classify_chain(submit.pNext, one_device, unknown); why != PassReason::None) return why;
    for (uint32_t i = 0; i < submit.commandBufferInfoCount; ++i) {
        const VkCommandBufferSubmitInfo& cb = submit.pCommandBufferInfos[i];
        if (cb.deviceMask > 1 || (cb.deviceMask == 1 && !one_device)) return PassReason::SubmitExtension;
        if (PassReason why = classify_chain(cb.pNext, one_device, unknown); why != PassReason::None) return why;
    }
    if (submit.waitSemaphoreInfoCount || submit.signalSemaphoreInfoCount) return PassReason::Semaphores;
    return PassReason::None;
}

}  // namespace slipstream::submit
