#include "vk_app.h"

#include <execinfo.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstring>

namespace vkapp {

namespace {

// A crash prints its stack on stderr, where the test drivers show the tail of a failed run: a
// rare crash in a long random run or in CI then says where it was. Frames in the layer read
// "libVkLayer_slipstream.so(+0xOFFSET)": `addr2line -f -C -e LIBRARY OFFSET` names them.
// Not under a sanitizer, whose own handler reports more.
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
void on_fatal_signal(int sig) {
    static const char head[] = "fatal signal: the stack (addr2line -f -C -e LIBRARY +OFFSET names a frame):\n";
    ssize_t ignored = write(STDERR_FILENO, head, sizeof head - 1);
    (void)ignored;
    void* frames[64];
    backtrace_symbols_fd(frames, backtrace(frames, 64), STDERR_FILENO);
    std::signal(sig, SIG_DFL);
    std::raise(sig);
}

void print_stack_on_crash() {
    static bool installed = false;
    if (installed) return;
    installed = true;
    void* warm[1];
    backtrace(warm, 1);  // loads the unwinder now, not inside the handler
    for (int sig : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT}) std::signal(sig, on_fatal_signal);
}
#else
void print_stack_on_crash() {}
#endif

}  // namespace

std::atomic<int> g_validation_messages{0};

void fail(const char* what, VkResult result, const char* file, int line) {
    std::fprintf(stderr, "%s:%d: %s failed with VkResult %d\n", file, line, what, int(result));
    std::exit(2);
}

static VKAPI_ATTR VkBool32 VKAPI_CALL on_debug_message(
    VkDebugUtilsMessageSeverityFlagBitsEXT severity, VkDebugUtilsMessageTypeFlagsEXT,
    const VkDebugUtilsMessengerCallbackDataEXT* data, void*) {
    // The validation layer's report about itself: its internal wait for its own timeline
    // state timed out, which it calls "most likely a validation bug" (1.3.239 races with host
    // signals from other threads; later versions fixed it). Shown, not counted.
    if (data->pMessageIdName && std::strcmp(data->pMessageIdName, "UNASSIGNED-VkSemaphore-state-timeout") == 0) {
        std::fprintf(stderr, "ignored validation-layer self-report: %s\n", data->pMessage ? data->pMessage : "");
        return VK_FALSE;
    }
    // Slipstream's own messages (it also sends them to the application's messengers): on
    // stderr already, and not the validation layer's.
    if (data->pMessageIdName && std::strcmp(data->pMessageIdName, "slipstream") == 0) return VK_FALSE;
    if (severity >= VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT) {
        g_validation_messages.fetch_add(1);
        std::fprintf(stderr, "validation: %s\n", data->pMessage ? data->pMessage : "(no message)");
    }
    return VK_FALSE;
}

static bool has_instance_extension(const char* name) {
    uint32_t count = 0;
    vkEnumerateInstanceExtensionProperties(nullptr, &count, nullptr);
    std::vector<VkExtensionProperties> exts(count);
    vkEnumerateInstanceExtensionProperties(nullptr, &count, exts.data());
    for (auto& e : exts)
        if (std::strcmp(e.extensionName, name) == 0) return true;
    return false;
}

Context create_context(const char* app_name, const ContextOptions& options) {
    print_stack_on_crash();
    Context ctx;
    VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
    app.pApplicationName = app_name;
    app.apiVersion = options.api_version;
    std::vector<const char*> exts;
    const bool debug_utils = options.debug_utils && has_instance_extension(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
    if (debug_utils) exts.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
    VkInstanceCreateInfo ici{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
    ici.pApplicationInfo = &app;
    ici.enabledLayerCount = uint32_t(options.layers.size());
    ici.ppEnabledLayerNames = options.layers.data();
    ici.enabledExtensionCount = uint32_t(exts.size());
    ici.ppEnabledExtensionNames = exts.data();
    VK_CHECK(vkCreateInstance(&ici, nullptr, &ctx.instance));

    if (debug_utils) {
        auto create = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
            vkGetInstanceProcAddr(ctx.instance, "vkCreateDebugUtilsMessengerEXT"));
        VkDebugUtilsMessengerCreateInfoEXT mci{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
        mci.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                              VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
        mci.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                          VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT;
        mci.pfnUserCallback = on_debug_message;
        if (create) VK_CHECK(create(ctx.instance, &mci, nullptr, &ctx.messenger));
    }

    uint32_t count = 0;
    VK_CHECK(vkEnumeratePhysicalDevices(ctx.instance, &count, nullptr));
    std::vector<VkPhysicalDevice> devices(count);
    VK_CHECK(vkEnumeratePhysicalDevices(ctx.instance, &count, devices.data()));
    uint32_t index = 0;
    if (const char* env = std::getenv("VKAPP_DEVICE_INDEX")) index = uint32_t(std::atoi(env));
    if (index >= count) {
        std::fprintf(stderr, "%s: no Vulkan device %u (found %u)\n", app_name, index, count);
        std::exit(2);
    }
    ctx.physical_device = devices[index];
    vkGetPhysicalDeviceProperties(ctx.physical_device, &ctx.properties);
    vkGetPhysicalDeviceMemoryProperties(ctx.physical_device, &ctx.memory_properties);

    uint32_t family_count = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(ctx.physical_device, &family_count, nullptr);
    std::vector<VkQueueFamilyProperties> families(family_count);
    vkGetPhysicalDeviceQueueFamilyProperties(ctx.physical_device, &family_count, families.data());
    VkQueueFlags needed = VK_QUEUE_COMPUTE_BIT | (options.graphics ? VK_QUEUE_GRAPHICS_BIT : 0);
    bool found = false;
    for (uint32_t i = 0; i < family_count && !found; ++i) {
        if ((families[i].queueFlags & needed) == needed) {
            ctx.queue_family = i;
            ctx.queue_family_properties = families[i];
            found = true;
        }
    }
    if (!found) {
        std::fprintf(stderr, "%s: no queue family with the needed capabilities\n", app_name);
        std::exit(2);
    }

    // The chosen family first, then (every_compute_family) the others with compute.
    std::vector<VkDeviceQueueCreateInfo> qcis;
    auto add_family = [&](uint32_t family) {
        VkDeviceQueueCreateInfo qci{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
        qci.queueFamilyIndex = family;
        qci.queueCount = std::max(1u, std::min(options.queue_count, families[family].queueCount));
        qcis.push_back(qci);
    };
    add_family(ctx.queue_family);
    if (options.every_compute_family)
        for (uint32_t i = 0; i < family_count; ++i)
            if (i != ctx.queue_family && (families[i].queueFlags & VK_QUEUE_COMPUTE_BIT)) add_family(i);
    uint32_t max_count = 0;
    for (const VkDeviceQueueCreateInfo& q : qcis) max_count = std::max(max_count, q.queueCount);
    std::vector<float> priorities(max_count, 1.0f);
    for (VkDeviceQueueCreateInfo& q : qcis) q.pQueuePriorities = priorities.data();

    VkPhysicalDeviceVulkan13Features f13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
    VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
    f13.synchronization2 = options.synchronization2 ? VK_TRUE : VK_FALSE;
    f12.timelineSemaphore = options.timeline_semaphores ? VK_TRUE : VK_FALSE;
    f12.pNext = &f13;
    if (options.api_version >= VK_API_VERSION_1_2 &&
        (options.buffer_device_address || options.storage_buffer_update_after_bind)) {
        VkPhysicalDeviceVulkan12Features have{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
        VkPhysicalDeviceFeatures2 all{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &have};
        vkGetPhysicalDeviceFeatures2(ctx.physical_device, &all);
        ctx.buffer_device_address = options.buffer_device_address && have.bufferDeviceAddress;
        ctx.storage_buffer_update_after_bind =
            options.storage_buffer_update_after_bind && have.descriptorBindingStorageBufferUpdateAfterBind;
        f12.bufferDeviceAddress = ctx.buffer_device_address ? VK_TRUE : VK_FALSE;
        f12.descriptorBindingStorageBufferUpdateAfterBind = ctx.storage_buffer_update_after_bind ? VK_TRUE : VK_FALSE;
    }
    // Before Vulkan 1.2, timeline semaphores come from VK_KHR_timeline_semaphore.
    VkPhysicalDeviceTimelineSemaphoreFeatures timeline_khr{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_FEATURES};
    timeline_khr.timelineSemaphore = VK_TRUE;
    std::vector<const char*> device_exts;
    {
        uint32_t n = 0;
        VK_CHECK(vkEnumerateDeviceExtensionProperties(ctx.physical_device, nullptr, &n, nullptr));
        std::vector<VkExtensionProperties> available(n);
        VK_CHECK(vkEnumerateDeviceExtensionProperties(ctx.physical_device, nullptr, &n, available.data()));
        for (const char* want : options.optional_device_extensions)
            for (const auto& e : available)
                if (std::strcmp(e.extensionName, want) == 0) device_exts.push_back(want);
    }
    VkDeviceCreateInfo dci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
    dci.queueCreateInfoCount = uint32_t(qcis.size());
    dci.pQueueCreateInfos = qcis.data();
    if (options.api_version >= VK_API_VERSION_1_3) {
        dci.pNext = &f12;
    } else if (options.timeline_semaphores && options.api_version < VK_API_VERSION_1_2) {
        device_exts.push_back(VK_KHR_TIMELINE_SEMAPHORE_EXTENSION_NAME);
        dci.pNext = &timeline_khr;
    }
    dci.enabledExtensionCount = uint32_t(device_exts.size());
    dci.ppEnabledExtensionNames = device_exts.data();
    VK_CHECK(vkCreateDevice(ctx.physical_device, &dci, nullptr, &ctx.device));
    ctx.device_extensions.assign(device_exts.begin(), device_exts.end());
    for (const VkDeviceQueueCreateInfo& qci : qcis)
        for (uint32_t i = 0; i < qci.queueCount; ++i) {
            VkQueue q;
            vkGetDeviceQueue(ctx.device, qci.queueFamilyIndex, i, &q);
            ctx.queues.push_back(q);
            ctx.queue_families.push_back(qci.queueFamilyIndex);
        }
    ctx.queue = ctx.queues[0];
    return ctx;
}

bool Context::has_device_extension(const char* name) const {
    for (const std::string& e : device_extensions)
        if (e == name) return true;
    return false;
}

void destroy_context(Context& ctx) {
    if (ctx.device) {
        vkDeviceWaitIdle(ctx.device);
        vkDestroyDevice(ctx.device, nullptr);
    }
    if (ctx.messenger) {
        auto destroy = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
            vkGetInstanceProcAddr(ctx.instance, "vkDestroyDebugUtilsMessengerEXT"));
        if (destroy) destroy(ctx.instance, ctx.messenger, nullptr);
    }
    if (ctx.instance) vkDestroyInstance(ctx.instance, nullptr);
    ctx = Context{};
}

int finish(Context& ctx, uint64_t checksum) {
    std::printf("checksum: %016llx\n", static_cast<unsigned long long>(checksum));
    std::fflush(stdout);
    destroy_context(ctx);
    int messages = g_validation_messages.load();
    if (messages) std::fprintf(stderr, "%d validation message(s)\n", messages);
    return messages ? 1 : 0;
}

VkResult wait_timelines(PFN_vkWaitSemaphores wait, VkDevice device,
                        const std::vector<std::pair<VkSemaphore, uint64_t>>& conds, bool any, uint64_t timeout) {
    std::vector<VkSemaphore> semaphores;
    std::vector<uint64_t> values;
    for (const auto& [semaphore, value] : conds) {
        semaphores.push_back(semaphore);
        values.push_back(value);
    }
    VkSemaphoreWaitInfo info{VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO};
    info.flags = any ? VK_SEMAPHORE_WAIT_ANY_BIT : 0;
    info.semaphoreCount = uint32_t(semaphores.size());
    info.pSemaphores = semaphores.data();
    info.pValues = values.data();
    return wait(device, &info, timeout);
}

int finish_checked(Context& ctx, bool ok, uint64_t checksum) {
    if (ok) return finish(ctx, checksum);
    destroy_context(ctx);
    return 1;
}

int find_memory_type(const VkPhysicalDeviceMemoryProperties& props, uint32_t type_bits,
                     VkMemoryPropertyFlags required) {
    for (uint32_t i = 0; i < props.memoryTypeCount; ++i)
        if ((type_bits & (1u << i)) && (props.memoryTypes[i].propertyFlags & required) == required)
            return int(i);
    return -1;
}

namespace {
// The buffer of create_buffer*, not bound yet.
Buffer unbound_buffer(Context& ctx, VkDeviceSize size, VkBufferUsageFlags usage,
                      const std::vector<uint32_t>& concurrent_families, VkMemoryRequirements& req) {
    Buffer b;
    b.size = size;
    VkBufferCreateInfo bci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    bci.size = size;
    bci.usage = usage;
    bci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    if (concurrent_families.size() >= 2) {
        bci.sharingMode = VK_SHARING_MODE_CONCURRENT;
        bci.queueFamilyIndexCount = uint32_t(concurrent_families.size());
        bci.pQueueFamilyIndices = concurrent_families.data();
    }
    VK_CHECK(vkCreateBuffer(ctx.device, &bci, nullptr, &b.buffer));
    vkGetBufferMemoryRequirements(ctx.device, b.buffer, &req);
    return b;
}

// Binds `b` to an allocation of its own of `type` (mapped where host-visible and `map` says so).
void bind_own_memory(Context& ctx, Buffer& b, const VkMemoryRequirements& req, uint32_t type, Map map) {
    b.memory_type = type;
    b.allocation_size = req.size;
    VkMemoryAllocateInfo mai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    mai.allocationSize = req.size;
    mai.memoryTypeIndex = type;
    VK_CHECK(vkAllocateMemory(ctx.device, &mai, nullptr, &b.memory));
    VK_CHECK(vkBindBufferMemory(ctx.device, b.buffer, b.memory, 0));
    if (map == Map::if_host_visible &&
        (ctx.memory_properties.memoryTypes[type].propertyFlags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT))
        VK_CHECK(vkMapMemory(ctx.device, b.memory, 0, VK_WHOLE_SIZE, 0, &b.mapped));
}
}  // namespace

Buffer create_buffer(Context& ctx, VkDeviceSize size, VkBufferUsageFlags usage,
                     VkMemoryPropertyFlags required,
                     const std::vector<uint32_t>& concurrent_families) {
    VkMemoryRequirements req;
    Buffer b = unbound_buffer(ctx, size, usage, concurrent_families, req);
    int type = find_memory_type(ctx.memory_properties, req.memoryTypeBits, required);
    if (type < 0) {
        std::fprintf(stderr, "no memory type with flags 0x%x\n", unsigned(required));
        std::exit(2);
    }
    bind_own_memory(ctx, b, req, uint32_t(type), Map::if_host_visible);
    return b;
}

Buffer create_buffer_of_type(Context& ctx, VkDeviceSize size, VkBufferUsageFlags usage, uint32_t memory_type,
                             Map map) {
    VkMemoryRequirements req;
    Buffer b = unbound_buffer(ctx, size, usage, {}, req);
    if (!(req.memoryTypeBits & (1u << memory_type))) {
        std::fprintf(stderr, "memory type %u does not suit a buffer of usage 0x%x\n", memory_type, unsigned(usage));
        std::exit(2);
    }
    bind_own_memory(ctx, b, req, memory_type, map);
    return b;
}

uint32_t buffer_memory_type_bits(Context& ctx, VkBufferUsageFlags usage) {
    VkMemoryRequirements req;
    Buffer probe = unbound_buffer(ctx, 4096, usage, {}, req);
    vkDestroyBuffer(ctx.device, probe.buffer, nullptr);
    return req.memoryTypeBits;
}

void destroy_buffer(Context& ctx, Buffer& b) {
    if (b.buffer) vkDestroyBuffer(ctx.device, b.buffer, nullptr);
    if (b.memory) vkFreeMemory(ctx.device, b.memory, nullptr);
    b = Buffer{};
}

VkShaderModule create_shader_module(Context& ctx, const uint32_t* code, size_t size_bytes) {
    VkShaderModuleCreateInfo ci{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    ci.codeSize = size_bytes;
    ci.pCode = code;
    VkShaderModule m;
    VK_CHECK(vkCreateShaderModule(ctx.device, &ci, nullptr, &m));
    return m;
}

ComputePipeline create_compute_pipeline(Context& ctx, const uint32_t* code, size_t size_bytes,
                                        uint32_t binding_count, uint32_t push_constant_bytes) {
    return create_typed_compute_pipeline(
        ctx, code, size_bytes, std::vector<VkDescriptorType>(binding_count, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER),
        push_constant_bytes);
}

ComputePipeline create_typed_compute_pipeline(Context& ctx, const uint32_t* code, size_t size_bytes,
                                              const std::vector<VkDescriptorType>& binding_types,
                                              uint32_t push_constant_bytes) {
    ComputePipeline p;
    const uint32_t binding_count = uint32_t(binding_types.size());
    std::vector<VkDescriptorSetLayoutBinding> bindings(binding_count);
    for (uint32_t i = 0; i < binding_count; ++i) {
        bindings[i] = {};
        bindings[i].binding = i;
        bindings[i].descriptorType = binding_types[i];
        bindings[i].descriptorCount = 1;
        bindings[i].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
    }
    VkDescriptorSetLayoutCreateInfo dl{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
    dl.bindingCount = binding_count;
    dl.pBindings = bindings.data();
    VK_CHECK(vkCreateDescriptorSetLayout(ctx.device, &dl, nullptr, &p.set_layout));
    VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, push_constant_bytes};
    VkPipelineLayoutCreateInfo pl{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    pl.setLayoutCount = 1;
    pl.pSetLayouts = &p.set_layout;
    pl.pushConstantRangeCount = push_constant_bytes ? 1 : 0;
    pl.pPushConstantRanges = &range;
    VK_CHECK(vkCreatePipelineLayout(ctx.device, &pl, nullptr, &p.layout));
    VkShaderModule module = create_shader_module(ctx, code, size_bytes);
    VkComputePipelineCreateInfo cp{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
    cp.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
    cp.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    cp.stage.module = module;
    cp.stage.pName = "main";
    cp.layout = p.layout;
    VK_CHECK(vkCreateComputePipelines(ctx.device, VK_NULL_HANDLE, 1, &cp, nullptr, &p.pipeline));
    vkDestroyShaderModule(ctx.device, module, nullptr);
    return p;
}

void destroy_compute_pipeline(Context& ctx, ComputePipeline& p) {
    vkDestroyPipeline(ctx.device, p.pipeline, nullptr);
    vkDestroyPipelineLayout(ctx.device, p.layout, nullptr);
    vkDestroyDescriptorSetLayout(ctx.device, p.set_layout, nullptr);
    p = ComputePipeline{};
}

void write_storage_buffer(Context& ctx, VkDescriptorSet set, uint32_t binding, VkBuffer buffer) {
    VkDescriptorBufferInfo info{buffer, 0, VK_WHOLE_SIZE};
    VkWriteDescriptorSet w{VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    w.dstSet = set;
    w.dstBinding = binding;
    w.descriptorCount = 1;
    w.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    w.pBufferInfo = &info;
    vkUpdateDescriptorSets(ctx.device, 1, &w, 0, nullptr);
}

void write_storage_buffers(Context& ctx, VkDescriptorSet set, const std::vector<VkBuffer>& buffers) {
    std::vector<VkDescriptorBufferInfo> infos(buffers.size());
    std::vector<VkWriteDescriptorSet> writes(buffers.size());
    for (size_t i = 0; i < buffers.size(); ++i) {
        infos[i] = {buffers[i], 0, VK_WHOLE_SIZE};
        writes[i] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
        writes[i].dstSet = set;
        writes[i].dstBinding = uint32_t(i);
        writes[i].descriptorCount = 1;
        writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
        writes[i].pBufferInfo = &infos[i];
    }
    vkUpdateDescriptorSets(ctx.device, uint32_t(writes.size()), writes.data(), 0, nullptr);
}

StorageSet create_storage_set(Context& ctx, const ComputePipeline& pipe, const std::vector<VkBuffer>& buffers) {
    StorageSet s;
    VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, uint32_t(buffers.size())};
    VkDescriptorPoolCreateInfo dpi{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    dpi.maxSets = 1;
    dpi.poolSizeCount = 1;
    dpi.pPoolSizes = &size;
    VK_CHECK(vkCreateDescriptorPool(ctx.device, &dpi, nullptr, &s.pool));
    VkDescriptorSetAllocateInfo dsa{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    dsa.descriptorPool = s.pool;
    dsa.descriptorSetCount = 1;
    dsa.pSetLayouts = &pipe.set_layout;
    VK_CHECK(vkAllocateDescriptorSets(ctx.device, &dsa, &s.set));
    write_storage_buffers(ctx, s.set, buffers);
    return s;
}

void destroy_storage_set(Context& ctx, StorageSet& s) {
    vkDestroyDescriptorPool(ctx.device, s.pool, nullptr);
    s = StorageSet{};
}

VkCommandBuffer allocate_primary(Context& ctx, VkCommandPool pool) {
    VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    ai.commandPool = pool;
    ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ai.commandBufferCount = 1;
    VkCommandBuffer cb;
    VK_CHECK(vkAllocateCommandBuffers(ctx.device, &ai, &cb));
    return cb;
}

VkCommandBuffer begin_one_time(Context& ctx, VkCommandPool pool) {
    VkCommandBuffer cb = allocate_primary(ctx, pool);
    VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    VK_CHECK(vkBeginCommandBuffer(cb, &bi));
    return cb;
}

VkCommandPool create_command_pool(Context& ctx, VkCommandPoolCreateFlags flags) {
    VkCommandPoolCreateInfo ci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    ci.flags = flags;
    ci.queueFamilyIndex = ctx.queue_family;
    VkCommandPool pool;
    VK_CHECK(vkCreateCommandPool(ctx.device, &ci, nullptr, &pool));
    return pool;
}

VkSemaphore create_timeline_semaphore(Context& ctx, uint64_t initial) {
    VkSemaphoreTypeCreateInfo ti{VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO};
    ti.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
    ti.initialValue = initial;
    VkSemaphoreCreateInfo ci{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
    ci.pNext = &ti;
    VkSemaphore s;
    VK_CHECK(vkCreateSemaphore(ctx.device, &ci, nullptr, &s));
    return s;
}

uint64_t fnv1a(const void* data, size_t size, uint64_t seed) {
    const auto* p = static_cast<const unsigned char*>(data);
    uint64_t h = seed;
    for (size_t i = 0; i < size; ++i) {
        h ^= p[i];
        h *= 1099511628211ull;
    }
    return h;
}

void barrier(VkCommandBuffer cb, VkPipelineStageFlags src, VkAccessFlags src_access,
             VkPipelineStageFlags dst, VkAccessFlags dst_access) {
    VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    mb.srcAccessMask = src_access;
    mb.dstAccessMask = dst_access;
    vkCmdPipelineBarrier(cb, src, dst, 0, 1, &mb, 0, nullptr, 0, nullptr);
}

}  // namespace vkapp
