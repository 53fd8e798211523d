// Small helpers shared by the correctness programs and the benchmark: instance and device
// set-up, buffers, shader modules, a checksum. Plain Vulkan, no layer knowledge.
#pragma once

#include <vulkan/vulkan.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace vkapp {

[[noreturn]] void fail(const char* what, VkResult result, const char* file, int line);

#define VK_CHECK(expr)                                                   \
    do {                                                                 \
        VkResult vk_check_result_ = (expr);                              \
        if (vk_check_result_ != VK_SUCCESS)                              \
            ::vkapp::fail(#expr, vk_check_result_, __FILE__, __LINE__);  \
    } while (0)

struct ContextOptions {
    uint32_t api_version = VK_API_VERSION_1_3;
    bool graphics = false;          // queue family must support graphics too
    bool synchronization2 = false;  // enable the Vulkan 1.3 feature
    bool timeline_semaphores = false;  // below 1.2: through VK_KHR_timeline_semaphore
    uint32_t queue_count = 1;       // queues requested from the chosen family (clamped)
    // Also up to queue_count queues of every other family with compute (after the chosen
    // family's in Context::queues; Context::queue_families says whose each is).
    bool every_compute_family = false;
    std::vector<const char*> layers;  // instance layers to enable by name
    std::vector<const char*> optional_device_extensions;  // enabled where the device has them
    // Vulkan 1.2 features enabled where the device has them (Context says which it got).
    bool buffer_device_address = false;
    bool storage_buffer_update_after_bind = false;
    // VK_EXT_debug_utils on the instance, with the messenger that counts validation messages
    // (off: for a program that calls its commands without enabling it, as some runtimes do).
    bool debug_utils = true;
};

struct Context {
    VkInstance instance = VK_NULL_HANDLE;
    VkPhysicalDevice physical_device = VK_NULL_HANDLE;
    VkDevice device = VK_NULL_HANDLE;
    uint32_t queue_family = 0;
    std::vector<VkQueue> queues;  // queues[0] is the main queue
    std::vector<uint32_t> queue_families;  // the family of each of `queues`
    VkQueue queue = VK_NULL_HANDLE;
    VkPhysicalDeviceProperties properties{};
    VkPhysicalDeviceMemoryProperties memory_properties{};
    VkQueueFamilyProperties queue_family_properties{};
    VkDebugUtilsMessengerEXT messenger = VK_NULL_HANDLE;
    std::vector<std::string> device_extensions;  // enabled on `device`
    bool buffer_device_address = false;             // ContextOptions' features, as enabled
    bool storage_buffer_update_after_bind = false;
    bool has_device_extension(const char* name) const;
};

// Validation messages (warnings and errors) seen by the debug messenger, all contexts.
extern std::atomic<int> g_validation_messages;

// Picks device VKAPP_DEVICE_INDEX (default 0) and a queue family with compute
// (and graphics if asked). Exits with a message when nothing fits.
Context create_context(const char* app_name, const ContextOptions& options = {});
void destroy_context(Context& ctx);

// Prints "checksum: <16 hex digits>", destroys the context and returns the exit code:
// non-zero if any validation message was reported.
int finish(Context& ctx, uint64_t checksum);
// finish(), or, when the program's own checks failed (`ok` false), exit status 1 without a
// checksum line (the context is destroyed either way).
int finish_checked(Context& ctx, bool ok, uint64_t checksum);

// Index of the first memory type allowed by type_bits that has all `required` flags, or -1.
int find_memory_type(const VkPhysicalDeviceMemoryProperties& props, uint32_t type_bits,
                     VkMemoryPropertyFlags required);

struct Buffer {
    VkBuffer buffer = VK_NULL_HANDLE;
    VkDeviceMemory memory = VK_NULL_HANDLE;
    VkDeviceSize size = 0;
    VkDeviceSize allocation_size = 0;  // the buffer's memory requirements
    uint32_t memory_type = 0;
    void* mapped = nullptr;  // set when the memory is host-visible (and mapping was asked for)
};

// Creates a buffer with its own allocation of the first type having `required` flags.
// With two or more `concurrent_families`, the buffer is VK_SHARING_MODE_CONCURRENT over them.
Buffer create_buffer(Context& ctx, VkDeviceSize size, VkBufferUsageFlags usage,
                     VkMemoryPropertyFlags required,
                     const std::vector<uint32_t>& concurrent_families = {});

// Whether a new buffer's host-visible memory is mapped (whole) at once.
enum class Map { if_host_visible, no };

// Creates a buffer with its own allocation of memory type `memory_type`, which the buffer's
// memoryTypeBits must allow (buffer_memory_type_bits).
Buffer create_buffer_of_type(Context& ctx, VkDeviceSize size, VkBufferUsageFlags usage, uint32_t memory_type,
                             Map map = Map::if_host_visible);

// The memory types a buffer of `usage` may be bound to (the same for every size: a buffer of
// 4 KiB is created and destroyed to ask).
uint32_t buffer_memory_type_bits(Context& ctx, VkBufferUsageFlags usage);
void destroy_buffer(Context& ctx, Buffer& buffer);

VkShaderModule create_shader_module(Context& ctx, const uint32_t* code, size_t size_bytes);

// A compute pipeline over `binding_count` storage buffers (set 0, bindings 0..n-1) with
// `push_constant_bytes` of push constants.
struct ComputePipeline {
    VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
    VkPipelineLayout layout = VK_NULL_HANDLE;
    VkPipeline pipeline = VK_NULL_HANDLE;
};
ComputePipeline create_compute_pipeline(Context& ctx, const uint32_t* code, size_t size_bytes,
                                        uint32_t binding_count, uint32_t push_constant_bytes);
// The same over bindings 0..n-1 of the given descriptor types (storage images, ...).
// (A name of its own: a one-element list would otherwise convert to binding_count.)
ComputePipeline create_typed_compute_pipeline(Context& ctx, const uint32_t* code, size_t size_bytes,
                                              const std::vector<VkDescriptorType>& binding_types,
                                              uint32_t push_constant_bytes);
void destroy_compute_pipeline(Context& ctx, ComputePipeline& p);

// A descriptor pool with one set of `pipe`'s layout, its bindings 0..n-1 written with `buffers`.
struct StorageSet {
    VkDescriptorPool pool = VK_NULL_HANDLE;
    VkDescriptorSet set = VK_NULL_HANDLE;
};
StorageSet create_storage_set(Context& ctx, const ComputePipeline& pipe, const std::vector<VkBuffer>& buffers);
void destroy_storage_set(Context& ctx, StorageSet& s);

// Writes storage-buffer binding `binding` of `set` to the whole of `buffer`.
void write_storage_buffer(Context& ctx, VkDescriptorSet set, uint32_t binding, VkBuffer buffer);

// Writes storage-buffer bindings 0..n-1 of `set` to the whole of each buffer.
void write_storage_buffers(Context& ctx, VkDescriptorSet set, const std::vector<VkBuffer>& buffers);

// A primary command buffer of `pool` (not begun).
VkCommandBuffer allocate_primary(Context& ctx, VkCommandPool pool);
// A primary command buffer of `pool`, begun for one submission.
VkCommandBuffer begin_one_time(Context& ctx, VkCommandPool pool);

// How one_shot waits for its submission.
enum class Wait { fence, queue_idle };

// Records with `record`, submits once on ctx.queue, waits with a fence (or vkQueueWaitIdle).
template <typename F>
void one_shot(Context& ctx, VkCommandPool pool, F&& record, Wait wait = Wait::fence);

VkCommandPool create_command_pool(Context& ctx, VkCommandPoolCreateFlags flags = 0);

// A timeline semaphore at `initial` (the context must enable timeline semaphores).
VkSemaphore create_timeline_semaphore(Context& ctx, uint64_t initial = 0);

// A host wait through `wait` (vkWaitSemaphores or its KHR alias) for every (or, `any`, one) of
// these timeline semaphores to reach its value.
VkResult wait_timelines(PFN_vkWaitSemaphores wait, VkDevice device,
                        const std::vector<std::pair<VkSemaphore, uint64_t>>& conds, bool any, uint64_t timeout);

// FNV-1a over bytes, chained through `seed`.
uint64_t fnv1a(const void* data, size_t size, uint64_t seed = 1469598103934665603ull);

// Full memory barrier between commands, used by programs that want the simplest correct sync.
void barrier(VkCommandBuffer cb, VkPipelineStageFlags src, VkAccessFlags src_access,
             VkPipelineStageFlags dst, VkAccessFlags dst_access);

// --- template implementation ---
template <typename F>
void one_shot(Context& ctx, VkCommandPool pool, F&& record, Wait wait) {
    VkCommandBuffer cb = begin_one_time(ctx, pool);
    record(cb);
    VK_CHECK(vkEndCommandBuffer(cb));
    VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cb;
    if (wait == Wait::queue_idle) {
        VK_CHECK(vkQueueSubmit(ctx.queue, 1, &si, VK_NULL_HANDLE));
        VK_CHECK(vkQueueWaitIdle(ctx.queue));
    } else {
        VkFenceCreateInfo fi{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
        VkFence fence;
        VK_CHECK(vkCreateFence(ctx.device, &fi, nullptr, &fence));
        VK_CHECK(vkQueueSubmit(ctx.queue, 1, &si, fence));
        VK_CHECK(vkWaitForFences(ctx.device, 1, &fence, VK_TRUE, UINT64_MAX));
        vkDestroyFence(ctx.device, fence, nullptr);
    }
    vkFreeCommandBuffers(ctx.device, pool, 1, &cb);
}

}  // namespace vkapp
