// Semaphore creation, destruction, host signals, counter reads, imports and exports: what the
// timeline semaphore pool (src/objects/objects/timeline_pool.h) serves, keeps and translates.
#include "hooks.h"
#include "state/object_state.h"
#include "objects/pooled_timelines.h"
#include "submit/fusion.h"
#include "waits/waits.h"

namespace slipstream::hooks {

namespace {
VkResult signal(VkDevice device, const VkSemaphoreSignalInfo* info, PFN_vkSignalSemaphore VkLayerDispatchTable::*next) {
    DeviceState* state = find_device(device);
    const VkSemaphoreSignalInfo driver = objects::signal_to_driver(*state, *info);
    return watch_device_loss(*state, (state->dispatch.*next)(device, &driver));
}

VkResult counter(VkDevice device, VkSemaphore semaphore, uint64_t* value,
                 PFN_vkGetSemaphoreCounterValue VkLayerDispatchTable::*next) {
    DeviceState* state = find_device(device);
    // A batch held may carry its signal (one atomic load while none does).
    if (VkResult e = submit::flush_signalers_of(*state, 1, &semaphore); e < 0) return e;
    const VkResult r = (state->dispatch.*next)(device, semaphore, value);
    if (r == VK_SUCCESS) objects::counter_to_app(*state, semaphore, value);
    return watch_device_loss(*state, r);
}
}  // namespace

VKAPI_ATTR VkResult VKAPI_CALL CreateSemaphore(VkDevice device, const VkSemaphoreCreateInfo* info,
                                               const VkAllocationCallbacks* allocator, VkSemaphore* semaphore) {
    DeviceState* state = find_device(device);
    const VkResult r = objects::create_semaphore(*state, info, allocator, semaphore);
    if (r == VK_SUCCESS && state->record) state->record->semaphore_created(*semaphore, *info);
    return r;
}

VKAPI_ATTR void VKAPI_CALL DestroySemaphore(VkDevice device, VkSemaphore semaphore,
                                            const VkAllocationCallbacks* allocator) {
    DeviceState* state = find_device(device);
    objects::destroy_semaphore(*state, semaphore, allocator);  // (flushes what fusion holds first)
    if (!semaphore) return;
    submit::semaphore_destroyed(*state, semaphore);
    if (state->record) state->record->semaphore_destroyed(semaphore);
}

VKAPI_ATTR VkResult VKAPI_CALL SignalSemaphore(VkDevice device, const VkSemaphoreSignalInfo* info) {
    return signal(device, info, &VkLayerDispatchTable::SignalSemaphore);
}

VKAPI_ATTR VkResult VKAPI_CALL SignalSemaphoreKHR(VkDevice device, const VkSemaphoreSignalInfo* info) {
    return signal(device, info, &VkLayerDispatchTable::SignalSemaphoreKHR);
}

VKAPI_ATTR VkResult VKAPI_CALL GetSemaphoreCounterValue(VkDevice device, VkSemaphore semaphore, uint64_t* value) {
    return counter(device, semaphore, value, &VkLayerDispatchTable::GetSemaphoreCounterValue);
}

VKAPI_ATTR VkResult VKAPI_CALL GetSemaphoreCounterValueKHR(VkDevice device, VkSemaphore semaphore, uint64_t* value) {
    return counter(device, semaphore, value, &VkLayerDispatchTable::GetSemaphoreCounterValueKHR);
}

VKAPI_ATTR VkResult VKAPI_CALL ImportSemaphoreFdKHR(VkDevice device, const VkImportSemaphoreFdInfoKHR* info) {
    DeviceState* state = find_device(device);
    // The payload may come from outside the device; a timeline's import is permanent.
    objects::semaphore_shared(*state, info->semaphore, true);
    if (state->record) state->record->semaphore_shared(info->semaphore);
    return state->dispatch.ImportSemaphoreFdKHR(device, info);
}

#ifdef VK_USE_PLATFORM_WIN32_KHR
VKAPI_ATTR VkResult VKAPI_CALL ImportSemaphoreWin32HandleKHR(VkDevice device,
                                                             const VkImportSemaphoreWin32HandleInfoKHR* info) {
    DeviceState* state = find_device(device);
    objects::semaphore_shared(*state, info->semaphore, true);
    if (state->record) state->record->semaphore_shared(info->semaphore);
    return state->dispatch.ImportSemaphoreWin32HandleKHR(device, info);
}

VKAPI_ATTR VkResult VKAPI_CALL GetSemaphoreWin32HandleKHR(VkDevice device,
                                                          const VkSemaphoreGetWin32HandleInfoKHR* info,
                                                          HANDLE* handle) {
    DeviceState* state = find_device(device);
    if (VkResult e = observe_device(*state); e < 0) return e;
    objects::semaphore_shared(*state, info->semaphore, false);
    if (state->record) state->record->semaphore_shared(info->semaphore);
    return state->dispatch.GetSemaphoreWin32HandleKHR(device, info, handle);
}
#endif

}  // namespace slipstream::hooks
