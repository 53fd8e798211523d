// Commands that can name a VkBuffer or VkDeviceMemory and have no other hook: generated
// wrappers (tools/gen/gen_buffer_uses.py) that let cached readback resolve deferred binds
// before the driver sees them, and the hooks of descriptor update templates whose opaque data
// those resolvers read (layer/hooks.txt).
#include "buffer_uses.h"
#include "state/object_record.h"
#include "hooks.h"
#include "state/object_state.h"

#include <vector>

namespace slipstream::hooks {

#include "buffer_use_intercepts.inl"

namespace {
template <typename Next>
VkResult create_template(VkDevice device, const VkDescriptorUpdateTemplateCreateInfo* info,
                         const VkAllocationCallbacks* allocator, VkDescriptorUpdateTemplate* t, Next next) {
    DeviceState* d = find_device(device);
    VkResult r = (d->dispatch.*next)(device, info, allocator, t);
    if (r == VK_SUCCESS && d->record) d->record->template_created(*t, *info);
    return r;
}
void destroy_template(VkDevice device, VkDescriptorUpdateTemplate t, const VkAllocationCallbacks* allocator,
                      capture::LayoutKeeper::Kind kind) {
    DeviceState* d = find_device(device);
    if (t && d->record) d->record->template_destroyed(t);
    destroy_layout(device, kind, uint64_t(t), allocator);  // captures may name it
}
}  // namespace

VKAPI_ATTR VkResult VKAPI_CALL CreateDescriptorUpdateTemplate(VkDevice device, const VkDescriptorUpdateTemplateCreateInfo* info,
                                                              const VkAllocationCallbacks* allocator,
                                                              VkDescriptorUpdateTemplate* t) {
    return create_template(device, info, allocator, t, &VkLayerDispatchTable::CreateDescriptorUpdateTemplate);
}
VKAPI_ATTR VkResult VKAPI_CALL CreateDescriptorUpdateTemplateKHR(VkDevice device,
                                                                 const VkDescriptorUpdateTemplateCreateInfo* info,
                                                                 const VkAllocationCallbacks* allocator,
                                                                 VkDescriptorUpdateTemplate* t) {
    return create_template(device, info, allocator, t, &VkLayerDispatchTable::CreateDescriptorUpdateTemplateKHR);
}
VKAPI_ATTR void VKAPI_CALL DestroyDescriptorUpdateTemplate(VkDevice device, VkDescriptorUpdateTemplate t,
                                                           const VkAllocationCallbacks* allocator) {
    destroy_template(device, t, allocator, capture::LayoutKeeper::Kind::UpdateTemplate);
}
VKAPI_ATTR void VKAPI_CALL DestroyDescriptorUpdateTemplateKHR(VkDevice device, VkDescriptorUpdateTemplate t,
                                                              const VkAllocationCallbacks* allocator) {
    destroy_template(device, t, allocator, capture::LayoutKeeper::Kind::UpdateTemplateKHR);
}

const NamedProc* buffer_use_intercepts(size_t* count) {
    static const std::vector<NamedProc> all = [] {
        std::vector<NamedProc> v;
        for (const auto& entry : kBufferUseIntercepts) v.push_back({entry.name, entry.fn});
        return v;
    }();
    *count = all.size();
    return all.data();
}

}  // namespace slipstream::hooks
