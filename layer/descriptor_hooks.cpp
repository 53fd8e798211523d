// Views, descriptor sets, shader modules and compute pipelines: what barrier elision needs to
// bound the memory a capture touches (src/capture/capture/resource_registry.h). Each hook calls down
// first and notes what the driver created; with elision off they only pass through (one branch).
#include "buffer_uses.h"
#include "capture/resource_registry.h"
#include "hooks.h"
#include "state/object_state.h"
#include "submit/fusion.h"

namespace slipstream::hooks {

namespace {
capture::ResourceRegistry* registry(DeviceState* d) { return d->resources.get(); }
}  // namespace

VKAPI_ATTR VkResult VKAPI_CALL CreateBufferView(VkDevice device, const VkBufferViewCreateInfo* info,
                                                const VkAllocationCallbacks* allocator, VkBufferView* view) {
    DeviceState* d = find_device(device);
    if (d->buffer_watch.load(std::memory_order_relaxed)) buffer_use::CreateBufferView(*d, device, info, allocator, view);
    const VkResult r = d->dispatch.CreateBufferView(device, info, allocator, view);
    if (r == VK_SUCCESS && registry(d)) registry(d)->buffer_view_created(*view, *info);
    return r;
}

VKAPI_ATTR void VKAPI_CALL DestroyBufferView(VkDevice device, VkBufferView view, const VkAllocationCallbacks* allocator) {
    DeviceState* d = find_device(device);
    if (view) submit::flush_before_destroy(*d);
    if (view) submit::settle_armed(*d);  // an armed replay may name it
    if (view && registry(d)) registry(d)->buffer_view_destroyed(view);
    d->dispatch.DestroyBufferView(device, view, allocator);
}

VKAPI_ATTR VkResult VKAPI_CALL CreateImageView(VkDevice device, const VkImageViewCreateInfo* info,
                                               const VkAllocationCallbacks* allocator, VkImageView* view) {
    DeviceState* d = find_device(device);
    const VkResult r = d->dispatch.CreateImageView(device, info, allocator, view);
    if (r == VK_SUCCESS && registry(d)) registry(d)->image_view_created(*view, *info);
    return r;
}

VKAPI_ATTR void VKAPI_CALL DestroyImageView(VkDevice device, VkImageView view, const VkAllocationCallbacks* allocator) {
    DeviceState* d = find_device(device);
    if (view) submit::flush_before_destroy(*d);
    if (view) submit::settle_armed(*d);  // an armed replay may name it
    if (view && registry(d)) registry(d)->image_view_destroyed(view);
    d->dispatch.DestroyImageView(device, view, allocator);
}

VKAPI_ATTR VkResult VKAPI_CALL CreateDescriptorSetLayout(VkDevice device, const VkDescriptorSetLayoutCreateInfo* info,
                                                         const VkAllocationCallbacks* allocator,
                                                         VkDescriptorSetLayout* layout) {
    DeviceState* d = find_device(device);
    const VkResult r = d->dispatch.CreateDescriptorSetLayout(device, info, allocator, layout);
    if (r == VK_SUCCESS && registry(d)) registry(d)->set_layout_created(*layout, *info);
    return r;
}

VKAPI_ATTR VkResult VKAPI_CALL AllocateDescriptorSets(VkDevice device, const VkDescriptorSetAllocateInfo* info,
                                                      VkDescriptorSet* sets) {
    DeviceState* d = find_device(device);
    const VkResult r = d->dispatch.AllocateDescriptorSets(device, info, sets);
    if (r == VK_SUCCESS && registry(d)) registry(d)->sets_allocated(*info, sets);
    return r;
}

VKAPI_ATTR VkResult VKAPI_CALL FreeDescriptorSets(VkDevice device, VkDescriptorPool pool, uint32_t count,
                                                  const VkDescriptorSet* sets) {
    DeviceState* d = find_device(device);
    if (count) submit::flush_before_destroy(*d);
    if (count) submit::settle_armed(*d);  // an armed replay may name it
    if (registry(d)) registry(d)->sets_freed(count, sets);
    return d->dispatch.FreeDescriptorSets(device, pool, count, sets);
}

VKAPI_ATTR VkResult VKAPI_CALL ResetDescriptorPool(VkDevice device, VkDescriptorPool pool,
                                                   VkDescriptorPoolResetFlags flags) {
    DeviceState* d = find_device(device);
    submit::flush_before_destroy(*d);
    submit::settle_armed(*d);  // an armed replay may name it
    if (registry(d)) registry(d)->pool_emptied(pool);
    return d->dispatch.ResetDescriptorPool(device, pool, flags);
}

VKAPI_ATTR void VKAPI_CALL DestroyDescriptorPool(VkDevice device, VkDescriptorPool pool,
                                                 const VkAllocationCallbacks* allocator) {
    DeviceState* d = find_device(device);
    if (pool) submit::flush_before_destroy(*d);
    if (pool) submit::settle_armed(*d);  // an armed replay may name it
    if (pool && registry(d)) registry(d)->pool_emptied(pool);
    d->dispatch.DestroyDescriptorPool(device, pool, allocator);
}

VKAPI_ATTR void VKAPI_CALL UpdateDescriptorSets(VkDevice device, uint32_t write_count, const VkWriteDescriptorSet* writes,
                                                uint32_t copy_count, const VkCopyDescriptorSet* copies) {
    DeviceState* d = find_device(device);
    submit::settle_armed(*d);
    if (d->buffer_watch.load(std::memory_order_relaxed))
        buffer_use::UpdateDescriptorSets(*d, device, write_count, writes, copy_count, copies);
    d->dispatch.UpdateDescriptorSets(device, write_count, writes, copy_count, copies);
    if (registry(d)) registry(d)->sets_updated(write_count, writes, copy_count, copies);
}

namespace {
template <typename Resolve, typename Next>
void update_with_template(VkDevice device, VkDescriptorSet set, VkDescriptorUpdateTemplate t, const void* data,
                          Resolve resolve, Next next) {
    DeviceState* d = find_device(device);
    submit::settle_armed(*d);
    if (d->buffer_watch.load(std::memory_order_relaxed)) resolve(*d, device, set, t, data);
    (d->dispatch.*next)(device, set, t, data);
    if (registry(d)) registry(d)->set_updated_with_template(set, t, data);
}
}  // namespace

VKAPI_ATTR void VKAPI_CALL UpdateDescriptorSetWithTemplate(VkDevice device, VkDescriptorSet set,
                                                           VkDescriptorUpdateTemplate t, const void* data) {
    update_with_template(device, set, t, data, buffer_use::UpdateDescriptorSetWithTemplate,
                         &VkLayerDispatchTable::UpdateDescriptorSetWithTemplate);
}

VKAPI_ATTR void VKAPI_CALL UpdateDescriptorSetWithTemplateKHR(VkDevice device, VkDescriptorSet set,
                                                              VkDescriptorUpdateTemplate t, const void* data) {
    update_with_template(device, set, t, data, buffer_use::UpdateDescriptorSetWithTemplateKHR,
                         &VkLayerDispatchTable::UpdateDescriptorSetWithTemplateKHR);
}

VKAPI_ATTR VkResult VKAPI_CALL CreateShaderModule(VkDevice device, const VkShaderModuleCreateInfo* info,
                                                  const VkAllocationCallbacks* allocator, VkShaderModule* module) {
    DeviceState* d = find_device(device);
    const VkResult r = d->dispatch.CreateShaderModule(device, info, allocator, module);
    if (r == VK_SUCCESS && registry(d)) registry(d)->shader_module_created(*module, *info);
    return r;
}

VKAPI_ATTR void VKAPI_CALL DestroyShaderModule(VkDevice device, VkShaderModule module,
                                               const VkAllocationCallbacks* allocator) {
    DeviceState* d = find_device(device);
    if (module && registry(d)) registry(d)->shader_module_destroyed(module);
    d->dispatch.DestroyShaderModule(device, module, allocator);
}

VKAPI_ATTR VkResult VKAPI_CALL CreateComputePipelines(VkDevice device, VkPipelineCache cache, uint32_t count,
                                                      const VkComputePipelineCreateInfo* infos,
                                                      const VkAllocationCallbacks* allocator, VkPipeline* pipelines) {
    DeviceState* d = find_device(device);
    const VkResult r = d->dispatch.CreateComputePipelines(device, cache, count, infos, allocator, pipelines);
    // Some may be made where others failed (VK_PIPELINE_COMPILE_REQUIRED): those are null.
    if (r >= VK_SUCCESS && registry(d)) registry(d)->compute_pipelines_created(count, infos, pipelines);
    return r;
}

VKAPI_ATTR void VKAPI_CALL DestroyPipeline(VkDevice device, VkPipeline pipeline, const VkAllocationCallbacks* allocator) {
    DeviceState* d = find_device(device);
    if (pipeline) submit::flush_before_destroy(*d);
    if (pipeline) submit::settle_armed(*d);  // an armed replay may name it
    if (pipeline && registry(d)) registry(d)->pipeline_destroyed(pipeline);
    d->dispatch.DestroyPipeline(device, pipeline, allocator);
}

// Objects only captures name (samplers in push descriptors, query pools, events): tracked for
// nothing else, so the hook only flushes what may name them.
VKAPI_ATTR void VKAPI_CALL DestroySampler(VkDevice device, VkSampler sampler, const VkAllocationCallbacks* allocator) {
    DeviceState* d = find_device(device);
    if (sampler) submit::flush_before_destroy(*d);
    if (sampler) submit::settle_armed(*d);  // an armed replay may name it
    d->dispatch.DestroySampler(device, sampler, allocator);
}

VKAPI_ATTR void VKAPI_CALL DestroyQueryPool(VkDevice device, VkQueryPool pool, const VkAllocationCallbacks* allocator) {
    DeviceState* d = find_device(device);
    if (pool) submit::flush_before_destroy(*d);
    d->dispatch.DestroyQueryPool(device, pool, allocator);
}

VKAPI_ATTR void VKAPI_CALL DestroyEvent(VkDevice device, VkEvent event, const VkAllocationCallbacks* allocator) {
    DeviceState* d = find_device(device);
    if (event) submit::flush_before_destroy(*d);
    d->dispatch.DestroyEvent(device, event, allocator);
}

}  // namespace slipstream::hooks
