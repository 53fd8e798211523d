// device_churn: what a process keeps after creating and destroying many Vulkan instances and
// devices, with or without the Slipstream layer (docs/reliability.md, "Resource use over many devices").
//
//   device_churn [--devices N] [--every K] [--warmup W] [--json PATH] [--tls-probe SO]
//
// Each of the N rounds does what one test of a compute framework's GoogleTest suite does: its own
// instance and device, one VkDeviceMemory per buffer, a command pool WITHOUT
// RESET_COMMAND_BUFFER whose one command buffer is re-begun for every submission (the implicit
// reset by vkBeginCommandBuffer is invalid there, but applications do it: do not run this under
// the validation layer), a fresh fence per submission and a wait on it, one fence-less
// submission followed by vkQueueWaitIdle, results checked on the host, everything destroyed.
//
// After each round it measures the process: resident memory, the C heap in use (mallinfo2),
// open file descriptors (/proc/self/fd), threads (/proc/self/task), loaded shared objects, and
// the static TLS in use (tls_after; tls_live is the same while the round's device lives), read
// through a probe library (tls_probe.c, next to this program or --tls-probe): glibc never
// reuses static TLS below a block that stays loaded, and a driver that cannot get static TLS
// fails to load. While the device lives it also reads device memory in use (VK_EXT_memory_budget
// heapUsage, summed over heaps, after the round freed its memory; n/a where the device lacks the
// extension) and, after vkDestroyDevice, the driver objects the Slipstream layer itself created
// and destroyed on that device, from its statistics file (set VK_SLIPSTREAM_STATS_FILE; n/a
// otherwise).
//
// It prints a table every K rounds (default: about 20 rows) and a summary: each measure after
// round 1, after round W (default min(10, N/4)) and at the end, and its growth per device
// between round W and the end (rounds before W load caches and libraries once). --json writes
// every round and the summary, rewritten after every round (a driver may end the process).
// Exit status 0; 1 when a result was wrong; 3 when a round could not create its instance or
// device (the table and JSON then end there, with the error).
#include "vk_app.h"

#include "churn_step_comp.h"  // tests/apps/shaders/roundtrip.comp (needs <cstdint> first)

#include <dirent.h>
#include <dlfcn.h>
#include <link.h>
#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

constexpr VkMemoryPropertyFlags kHostMemory = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
constexpr VkDeviceSize kBufferBytes = 256 * 1024;
constexpr uint32_t kWords = uint32_t(kBufferBytes / 4);
constexpr int kStorageBuffers = 4;  // each with its own VkDeviceMemory, like the suite

// One round's measures; -1: not available.
struct Sample {
    int round = 0;
    long long rss_kib = -1, malloc_kib = -1, fds = -1, threads = -1, objects = -1, tls_live = -1, tls_after = -1, heap_used = -1;
    long long own_fences_created = -1, own_fences_destroyed = -1;
    long long probe_objects_created = -1, probe_objects_destroyed = -1;
    double ms = 0;
    long long layer_created() const {
        return own_fences_created < 0 ? -1 : own_fences_created + probe_objects_created;
    }
    long long layer_destroyed() const {
        return own_fences_destroyed < 0 ? -1 : own_fences_destroyed + probe_objects_destroyed;
    }
};

long long count_dir(const char* path) {
    DIR* dir = opendir(path);
    if (!dir) return -1;
    long long n = 0;
    while (dirent* e = readdir(dir))
        if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) ++n;
    closedir(dir);
    return n;
}

// Bytes the C heap hands out, in KiB: far steadier than RSS, which moves by whole trimmed arenas.
long long malloc_kib() {
    const struct mallinfo2 m = mallinfo2();
    return static_cast<long long>((m.uordblks + m.hblkhd) / 1024);
}

long long rss_kib() {
    std::ifstream statm("/proc/self/statm");
    long long size = 0, resident = -1;
    if (!(statm >> size >> resident)) return -1;
    return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

// Static TLS in use: glibc places the static TLS of an object dlopen-ed with initial-exec TLS at
// the top of what is in use, and gives a block back on dlclose only while it is still the top
// one, so an object that stays loaded (a layer pinned with -z nodelete, say) keeps every block
// below it, and a driver that cannot get static TLS fails to load. The probe (tls_probe.c)
// holds one initial-exec 8-byte variable: loading it and reading where its block landed tells
// how much was in use; unloading it gives the block back.
struct TlsProbe {
    std::string path;
    size_t total = 0;  // the process's static TLS area, surplus included (0: unknown)

    // Bytes of static TLS in use (to 8 bytes), or -1 (probe missing, or no static TLS left).
    long long used() const {
#if defined(__x86_64__)
        void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (!handle) return -1;
        using Fn = long* (*)();
        auto address = reinterpret_cast<Fn>(dlsym(handle, "slipstream_tls_probe_address"));
        long long used = -1;
        if (address) {
            uintptr_t tp;
            asm volatile("mov %%fs:0, %0" : "=r"(tp));  // TLS variant II: blocks lie below tp
            used = static_cast<long long>(tp - reinterpret_cast<uintptr_t>(address())) - long(sizeof(long));
        }
        dlclose(handle);
        return used;
#else
        return -1;
#endif
    }
};

size_t static_tls_total() {
    // ld.so's own accessor (GLIBC_PRIVATE): the whole static TLS area of each thread.
    using Fn = void (*)(size_t*, size_t*);
    auto fn = reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, "_dl_get_tls_static_info"));
    size_t size = 0, align = 0;
    if (fn) fn(&size, &align);
    return size;
}

long long loaded_objects() {
    long long n = 0;
    dl_iterate_phdr([](dl_phdr_info*, size_t, void* count) { return ++*static_cast<long long*>(count), 0; }, &n);
    return n;
}

// `"name": <integer>` in `text` from `from` on; -1 when absent.
long long json_counter(const std::string& text, size_t from, const char* name) {
    const std::string key = std::string("\"") + name + "\": ";
    const size_t at = text.find(key, from);
    if (at == std::string::npos) return -1;
    return std::atoll(text.c_str() + at + key.size());
}

// The last device the Slipstream statistics file lists: the one destroyed just now.
void read_layer_stats(Sample& s) {
    const char* path = std::getenv("VK_SLIPSTREAM_STATS_FILE");
    if (!path || !*path) return;
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    const std::string json = text.str();
    const size_t last = json.rfind("{\"device_name\"");
    if (last == std::string::npos) return;
    s.own_fences_created = json_counter(json, last, "own_fences_created");
    s.own_fences_destroyed = json_counter(json, last, "own_fences_destroyed");
    s.probe_objects_created = json_counter(json, last, "probe_objects_created");
    s.probe_objects_destroyed = json_counter(json, last, "probe_objects_destroyed");
    if (s.own_fences_created < 0 || s.probe_objects_created < 0) s.own_fences_created = s.own_fences_destroyed = -1;
}

double now_ms() {
    timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return double(t.tv_sec) * 1e3 + double(t.tv_nsec) / 1e6;
}

std::string cell(long long v) { return v < 0 ? "n/a" : std::to_string(v); }

// Why a round stopped early.
struct Stop {
    std::string what;
    VkResult result = VK_SUCCESS;
};

#define CHURN_TRY(call)                                                  \
    do {                                                                 \
        VkResult churn_result_ = (call);                                 \
        if (churn_result_ != VK_SUCCESS) return Stop{#call, churn_result_}; \
    } while (0)

struct Buffer {
    VkBuffer buffer = VK_NULL_HANDLE;
    VkDeviceMemory memory = VK_NULL_HANDLE;
    void* mapped = nullptr;
};

class Round {
public:
    Round(int index, const TlsProbe& probe) : index_(index), probe_(probe) {}

    // Runs the round; fills the measures taken while the device lives. Stop::what is empty on
    // success; `wrong` counts bad results.
    Stop run(Sample& s, int& wrong) {
        if (Stop stop = create(); !stop.what.empty()) return stop;
        s.tls_live = probe_.used();
        if (Stop stop = work(wrong); !stop.what.empty()) return stop;
        destroy_resources();
        s.heap_used = heap_used();
        vkDestroyDevice(device_, nullptr);
        vkDestroyInstance(instance_, nullptr);
        device_ = VK_NULL_HANDLE;
        instance_ = VK_NULL_HANDLE;
        return {};
    }

    const std::string& device_name() const { return device_name_; }

    ~Round() {
        if (device_) {
            vkDeviceWaitIdle(device_);
            destroy_resources();
            vkDestroyDevice(device_, nullptr);
        }
        if (instance_) vkDestroyInstance(instance_, nullptr);
    }

private:
    Stop create() {
        VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
        app.pApplicationName = "device_churn";
        app.apiVersion = VK_API_VERSION_1_1;
        VkInstanceCreateInfo ici{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
        ici.pApplicationInfo = &app;
        CHURN_TRY(vkCreateInstance(&ici, nullptr, &instance_));
        uint32_t count = 0;
        CHURN_TRY(vkEnumeratePhysicalDevices(instance_, &count, nullptr));
        std::vector<VkPhysicalDevice> devices(count);
        CHURN_TRY(vkEnumeratePhysicalDevices(instance_, &count, devices.data()));
        uint32_t index = 0;
        if (const char* env = std::getenv("VKAPP_DEVICE_INDEX")) index = uint32_t(std::atoi(env));
        if (index >= count) return Stop{"VKAPP_DEVICE_INDEX: no such device", VK_ERROR_INITIALIZATION_FAILED};
        physical_ = devices[index];
        vkGetPhysicalDeviceMemoryProperties(physical_, &memory_);
        VkPhysicalDeviceProperties props;
        vkGetPhysicalDeviceProperties(physical_, &props);
        device_name_ = props.deviceName;
        has_budget_ = props.apiVersion >= VK_API_VERSION_1_1 && has_extension(VK_EXT_MEMORY_BUDGET_EXTENSION_NAME);

        uint32_t families = 0;
        vkGetPhysicalDeviceQueueFamilyProperties(physical_, &families, nullptr);
        std::vector<VkQueueFamilyProperties> fp(families);
        vkGetPhysicalDeviceQueueFamilyProperties(physical_, &families, fp.data());
        family_ = families;
        for (uint32_t i = 0; i < families && family_ == families; ++i)
            if (fp[i].queueFlags & VK_QUEUE_COMPUTE_BIT) family_ = i;
        if (family_ == families) return Stop{"no compute queue family", VK_ERROR_INITIALIZATION_FAILED};
        const float priority = 1.0f;
        VkDeviceQueueCreateInfo qci{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
        qci.queueFamilyIndex = family_;
        qci.queueCount = 1;
        qci.pQueuePriorities = &priority;
        VkDeviceCreateInfo dci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
        dci.queueCreateInfoCount = 1;
        dci.pQueueCreateInfos = &qci;
        CHURN_TRY(vkCreateDevice(physical_, &dci, nullptr, &device_));
        vkGetDeviceQueue(device_, family_, 0, &queue_);
        return {};
    }

    bool has_extension(const char* name) const {
        uint32_t n = 0;
        vkEnumerateDeviceExtensionProperties(physical_, nullptr, &n, nullptr);
        std::vector<VkExtensionProperties> exts(n);
        vkEnumerateDeviceExtensionProperties(physical_, nullptr, &n, exts.data());
        for (const auto& e : exts)
            if (std::strcmp(e.extensionName, name) == 0) return true;
        return false;
    }

    long long heap_used() const {
        if (!has_budget_) return -1;
        VkPhysicalDeviceMemoryBudgetPropertiesEXT budget{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_BUDGET_PROPERTIES_EXT};
        VkPhysicalDeviceMemoryProperties2 p2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_PROPERTIES_2};
        p2.pNext = &budget;
        vkGetPhysicalDeviceMemoryProperties2(physical_, &p2);
        long long used = 0;
        for (uint32_t h = 0; h < p2.memoryProperties.memoryHeapCount; ++h) used += (long long)budget.heapUsage[h];
        return used;
    }

    int memory_type(uint32_t bits, VkMemoryPropertyFlags want) const {
        return vkapp::find_memory_type(memory_, bits, want);
    }

    Stop make_buffer(Buffer& b, VkBufferUsageFlags usage, bool host) {
        VkBufferCreateInfo bci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
        bci.size = kBufferBytes;
        bci.usage = usage;
        CHURN_TRY(vkCreateBuffer(device_, &bci, nullptr, &b.buffer));
        VkMemoryRequirements req;
        vkGetBufferMemoryRequirements(device_, b.buffer, &req);
        const VkMemoryPropertyFlags want = host ? kHostMemory : VkMemoryPropertyFlags(VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
        int type = memory_type(req.memoryTypeBits, want);
        if (type < 0) type = memory_type(req.memoryTypeBits, 0);
        VkMemoryAllocateInfo mai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
        mai.allocationSize = req.size;
        mai.memoryTypeIndex = uint32_t(type);
        CHURN_TRY(vkAllocateMemory(device_, &mai, nullptr, &b.memory));
        CHURN_TRY(vkBindBufferMemory(device_, b.buffer, b.memory, 0));
        if (host) CHURN_TRY(vkMapMemory(device_, b.memory, 0, VK_WHOLE_SIZE, 0, &b.mapped));
        return {};
    }

    // Re-begins the one command buffer (no reset: the pool lacks the flag), records, submits
    // with a fresh fence and waits; with `fenceless`, submits without one and waits for the
    // queue to be idle instead.
    template <typename Record>
    Stop submit(Record&& record, bool fenceless = false) {
        VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
        bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
        CHURN_TRY(vkBeginCommandBuffer(cb_, &bi));
        record(cb_);
        CHURN_TRY(vkEndCommandBuffer(cb_));
        VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
        si.commandBufferCount = 1;
        si.pCommandBuffers = &cb_;
        if (fenceless) {
            CHURN_TRY(vkQueueSubmit(queue_, 1, &si, VK_NULL_HANDLE));
            CHURN_TRY(vkQueueWaitIdle(queue_));
            return {};
        }
        VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
        VkFence fence;
        CHURN_TRY(vkCreateFence(device_, &fci, nullptr, &fence));
        VkResult r = vkQueueSubmit(queue_, 1, &si, fence);
        if (r == VK_SUCCESS) r = vkWaitForFences(device_, 1, &fence, VK_TRUE, UINT64_MAX);
        vkDestroyFence(device_, fence, nullptr);
        if (r != VK_SUCCESS) return Stop{"vkQueueSubmit / vkWaitForFences", r};
        return {};
    }

    static void barrier(VkCommandBuffer cb, VkPipelineStageFlags src, VkAccessFlags src_access,
                        VkPipelineStageFlags dst, VkAccessFlags dst_access) {
        vkapp::barrier(cb, src, src_access, dst, dst_access);
    }

    Stop work(int& wrong) {
        VkCommandPoolCreateInfo pci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
        pci.queueFamilyIndex = family_;  // no RESET_COMMAND_BUFFER_BIT, as in the suite
        CHURN_TRY(vkCreateCommandPool(device_, &pci, nullptr, &pool_));
        VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
        ai.commandPool = pool_;
        ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
        ai.commandBufferCount = 1;
        CHURN_TRY(vkAllocateCommandBuffers(device_, &ai, &cb_));

        const VkBufferUsageFlags storage =
            VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
        if (Stop s = make_buffer(upload_, VK_BUFFER_USAGE_TRANSFER_SRC_BIT, true); !s.what.empty()) return s;
        if (Stop s = make_buffer(readback_, VK_BUFFER_USAGE_TRANSFER_DST_BIT, true); !s.what.empty()) return s;
        for (Buffer& b : storage_)
            if (Stop s = make_buffer(b, storage, false); !s.what.empty()) return s;

        // The kernel: roundtrip.comp, in place over one storage buffer per descriptor set.
        VkDescriptorSetLayoutBinding binding{0, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT,
                                             nullptr};
        VkDescriptorSetLayoutCreateInfo dl{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
        dl.bindingCount = 1;
        dl.pBindings = &binding;
        CHURN_TRY(vkCreateDescriptorSetLayout(device_, &dl, nullptr, &set_layout_));
        VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, 8};
        VkPipelineLayoutCreateInfo pl{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
        pl.setLayoutCount = 1;
        pl.pSetLayouts = &set_layout_;
        pl.pushConstantRangeCount = 1;
        pl.pPushConstantRanges = &range;
        CHURN_TRY(vkCreatePipelineLayout(device_, &pl, nullptr, &pipeline_layout_));
        VkShaderModuleCreateInfo smci{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
        smci.codeSize = sizeof churn_step_comp;
        smci.pCode = churn_step_comp;
        VkShaderModule module;
        CHURN_TRY(vkCreateShaderModule(device_, &smci, nullptr, &module));
        VkComputePipelineCreateInfo cp{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
        cp.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
        cp.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
        cp.stage.module = module;
        cp.stage.pName = "main";
        cp.layout = pipeline_layout_;
        VkResult pr = vkCreateComputePipelines(device_, VK_NULL_HANDLE, 1, &cp, nullptr, &pipeline_);
        vkDestroyShaderModule(device_, module, nullptr);
        if (pr != VK_SUCCESS) return Stop{"vkCreateComputePipelines", pr};
        VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, kStorageBuffers};
        VkDescriptorPoolCreateInfo dpi{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
        dpi.maxSets = kStorageBuffers;
        dpi.poolSizeCount = 1;
        dpi.pPoolSizes = &size;
        CHURN_TRY(vkCreateDescriptorPool(device_, &dpi, nullptr, &descriptor_pool_));
        VkDescriptorSet sets[kStorageBuffers];
        VkDescriptorSetLayout layouts[kStorageBuffers];
        std::fill(layouts, layouts + kStorageBuffers, set_layout_);
        VkDescriptorSetAllocateInfo dsa{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
        dsa.descriptorPool = descriptor_pool_;
        dsa.descriptorSetCount = kStorageBuffers;
        dsa.pSetLayouts = layouts;
        CHURN_TRY(vkAllocateDescriptorSets(device_, &dsa, sets));
        for (int i = 0; i < kStorageBuffers; ++i) {
            VkDescriptorBufferInfo info{storage_[i].buffer, 0, VK_WHOLE_SIZE};
            VkWriteDescriptorSet w{VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
            w.dstSet = sets[i];
            w.descriptorCount = 1;
            w.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
            w.pBufferInfo = &info;
            vkUpdateDescriptorSets(device_, 1, &w, 0, nullptr);
        }

        // Inputs, then four submissions: upload, compute, readback (fenced), and one fence-less
        // clear of the upload buffer waited for with vkQueueWaitIdle.
        auto* in = static_cast<uint32_t*>(upload_.mapped);
        for (uint32_t w = 0; w < kWords; ++w) in[w] = w * 2246822519u + uint32_t(index_);
        const VkBufferCopy whole{0, 0, kBufferBytes};
        if (Stop s = submit([&](VkCommandBuffer cb) {
                for (Buffer& b : storage_) vkCmdCopyBuffer(cb, upload_.buffer, b.buffer, 1, &whole);
            });
            !s.what.empty())
            return s;
        if (Stop s = submit([&](VkCommandBuffer cb) {
                barrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                        VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
                vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline_);
                for (int i = 0; i < kStorageBuffers; ++i) {
                    const uint32_t push[2] = {kWords, uint32_t(i)};
                    vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline_layout_, 0, 1, &sets[i], 0,
                                            nullptr);
                    vkCmdPushConstants(cb, pipeline_layout_, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof push, push);
                    vkCmdDispatch(cb, kWords / 256, 1, 1);
                }
            });
            !s.what.empty())
            return s;
        for (int i = 0; i < kStorageBuffers; ++i) {
            if (Stop s = submit([&](VkCommandBuffer cb) {
                    barrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                            VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT);
                    vkCmdCopyBuffer(cb, storage_[i].buffer, readback_.buffer, 1, &whole);
                    barrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT,
                            VK_ACCESS_HOST_READ_BIT);
                });
                !s.what.empty())
                return s;
            const auto* out = static_cast<const uint32_t*>(readback_.mapped);
            for (uint32_t w = 0; w < kWords; ++w) {
                uint32_t v = in[w] * 2654435761u + (uint32_t(i) ^ w);
                v ^= v >> 15;
                if (out[w] != v) {
                    std::fprintf(stderr, "round %d: buffer %d word %u is 0x%08x, expected 0x%08x\n", index_, i, w,
                                 out[w], v);
                    ++wrong;
                    break;
                }
            }
        }
        return submit([&](VkCommandBuffer cb) { vkCmdFillBuffer(cb, upload_.buffer, 0, kBufferBytes, 0); }, true);
    }

    void destroy_buffer(Buffer& b) {
        if (b.buffer) vkDestroyBuffer(device_, b.buffer, nullptr);
        if (b.memory) vkFreeMemory(device_, b.memory, nullptr);
        b = Buffer{};
    }

    void destroy_resources() {
        if (descriptor_pool_) vkDestroyDescriptorPool(device_, descriptor_pool_, nullptr);
        if (pipeline_) vkDestroyPipeline(device_, pipeline_, nullptr);
        if (pipeline_layout_) vkDestroyPipelineLayout(device_, pipeline_layout_, nullptr);
        if (set_layout_) vkDestroyDescriptorSetLayout(device_, set_layout_, nullptr);
        descriptor_pool_ = VK_NULL_HANDLE;
        pipeline_ = VK_NULL_HANDLE;
        pipeline_layout_ = VK_NULL_HANDLE;
        set_layout_ = VK_NULL_HANDLE;
        destroy_buffer(upload_);
        destroy_buffer(readback_);
        for (Buffer& b : storage_) destroy_buffer(b);
        if (pool_) vkDestroyCommandPool(device_, pool_, nullptr);  // frees cb_
        pool_ = VK_NULL_HANDLE;
        cb_ = VK_NULL_HANDLE;
    }

    int index_;
    const TlsProbe& probe_;
    std::string device_name_;
    VkInstance instance_ = VK_NULL_HANDLE;
    VkPhysicalDevice physical_ = VK_NULL_HANDLE;
    VkPhysicalDeviceMemoryProperties memory_{};
    bool has_budget_ = false;
    uint32_t family_ = 0;
    VkDevice device_ = VK_NULL_HANDLE;
    VkQueue queue_ = VK_NULL_HANDLE;
    VkCommandPool pool_ = VK_NULL_HANDLE;
    VkCommandBuffer cb_ = VK_NULL_HANDLE;
    Buffer upload_, readback_, storage_[kStorageBuffers];
    VkDescriptorSetLayout set_layout_ = VK_NULL_HANDLE;
    VkPipelineLayout pipeline_layout_ = VK_NULL_HANDLE;
    VkPipeline pipeline_ = VK_NULL_HANDLE;
    VkDescriptorPool descriptor_pool_ = VK_NULL_HANDLE;
};

// --- reporting ---------------------------------------------------------------------------------

struct Measure {
    const char* name;
    long long Sample::*field;
};
const Measure kMeasures[] = {
    {"rss_kib", &Sample::rss_kib},       {"malloc_kib", &Sample::malloc_kib}, {"fds", &Sample::fds},
    {"threads", &Sample::threads},       {"objects", &Sample::objects},
    {"tls_live", &Sample::tls_live},     {"tls_after", &Sample::tls_after},
    {"heap_used", &Sample::heap_used},
};

void print_header() {
    std::printf("%7s %9s %10s %5s %7s %7s %8s %9s %12s %13s %15s %8s\n", "device", "rss_kib", "malloc_kib", "fds",
                "threads", "objects",
                "tls_live", "tls_after", "heap_used", "layer_created", "layer_destroyed", "ms");
}

void print_row(const Sample& s) {
    std::printf("%7d %9s %10s %5s %7s %7s %8s %9s %12s %13s %15s %8.1f\n", s.round, cell(s.rss_kib).c_str(),
                cell(s.malloc_kib).c_str(),
                cell(s.fds).c_str(), cell(s.threads).c_str(), cell(s.objects).c_str(), cell(s.tls_live).c_str(),
                cell(s.tls_after).c_str(), cell(s.heap_used).c_str(), cell(s.layer_created()).c_str(),
                cell(s.layer_destroyed()).c_str(), s.ms);
    std::fflush(stdout);
}

std::string json_value(long long v) { return v < 0 ? "null" : std::to_string(v); }

std::string json_number(double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.3f", v);
    return buf;
}

std::string json_string(const std::string& text) {
    std::string out = "\"";
    for (char c : text) {
        if (c == '"' || c == '\\') out += '\\';
        if (static_cast<unsigned char>(c) >= 0x20) out += c;
    }
    return out + "\"";
}

// Everything measured so far; write() keeps the JSON file current and prints the summary.
struct Report {
    std::string path;
    int devices, warmup;
    Sample start;
    size_t static_tls_total;
    std::string device_name;
    std::vector<Sample> samples;
    int wrong = 0;
    Stop stopped;

    void write(bool print) const {
        // Growth per device from the end of the warm-up to the last device.
        const int n = int(samples.size());
        const int from = std::min(warmup, n) - 1;  // index of device `warmup`
        std::string summary = "{";
        if (print) std::printf("\n%-12s %12s %12s %12s %14s\n", "measure", "device 1", "device W", "last", "per device");
        for (const Measure& m : kMeasures) {
            if (n == 0) break;
            const long long first = samples[0].*m.field, base = samples[size_t(from)].*m.field,
                            last = samples[size_t(n - 1)].*m.field;
            const bool known = first >= 0 && base >= 0 && last >= 0 && n - 1 > from;
            const double per = known ? double(last - base) / double(n - 1 - from) : 0;
            if (print)
                std::printf("%-12s %12s %12s %12s %14s\n", m.name, cell(first).c_str(), cell(base).c_str(),
                            cell(last).c_str(), known ? json_number(per).c_str() : "n/a");
            summary += std::string(summary.size() > 1 ? ", " : "") + "\"" + m.name + "\": {\"first\": " +
                       json_value(first) + ", \"base\": " + json_value(base) + ", \"last\": " + json_value(last) +
                       ", \"per_device\": " + (known ? json_number(per) : "null") + "}";
        }
        long long created = 0, destroyed = 0;
        bool layer_known = n > 0;
        for (const Sample& s : samples) {
            if (s.layer_created() < 0) layer_known = false;
            created += std::max(0LL, s.layer_created());
            destroyed += std::max(0LL, s.layer_destroyed());
        }
        const std::string objects = "{\"created\": " + std::to_string(created) + ", \"destroyed\": " +
                                    std::to_string(destroyed) + "}";
        summary += std::string(", \"layer_objects\": ") + (layer_known ? objects : "null") + "}";
        if (print) {
            std::printf("driver objects Slipstream created / destroyed on these devices: %s\n",
                        layer_known ? (std::to_string(created) + " / " + std::to_string(destroyed)).c_str()
                                    : "n/a (no VK_SLIPSTREAM_STATS_FILE, or the layer is not loaded)");
            if (wrong) std::printf("%d wrong result(s)\n", wrong);
        }
        if (path.empty()) return;
        std::ofstream out(path);
        if (!out) {
            if (print) std::fprintf(stderr, "device_churn: cannot write %s\n", path.c_str());
            return;
        }
        out << "{\n  \"device_name\": " << json_string(device_name) << ", \"devices_requested\": " << devices
            << ", \"devices_done\": " << n << ", \"warmup\": " << warmup << ", \"wrong_results\": " << wrong
            << ",\n  \"stopped\": ";
        if (stopped.what.empty()) out << "null";
        else
            out << "{\"device\": " << n + 1 << ", \"call\": " << json_string(stopped.what)
                << ", \"result\": " << int(stopped.result) << "}";
        out << ",\n  \"start\": {\"rss_kib\": " << start.rss_kib << ", \"malloc_kib\": " << start.malloc_kib
            << ", \"fds\": " << start.fds << ", \"threads\": " << start.threads << ", \"objects\": " << start.objects
            << ", \"tls_after\": " << json_value(start.tls_after) << ", \"static_tls_total\": " << static_tls_total
            << "},\n  \"summary\": " << summary << ",\n  \"rounds\": [";
        for (size_t i = 0; i < samples.size(); ++i) {
            const Sample& s = samples[i];
            out << (i ? ",\n" : "\n") << "    {\"device\": " << s.round;
            for (const Measure& m : kMeasures) out << ", \"" << m.name << "\": " << json_value(s.*m.field);
            out << ", \"own_fences_created\": " << json_value(s.own_fences_created)
                << ", \"own_fences_destroyed\": " << json_value(s.own_fences_destroyed)
                << ", \"probe_objects_created\": " << json_value(s.probe_objects_created)
                << ", \"probe_objects_destroyed\": " << json_value(s.probe_objects_destroyed)
                << ", \"ms\": " << json_number(s.ms) << "}";
        }
        out << "\n  ]\n}\n";
    }
};

}  // namespace

int main(int argc, char** argv) {
    int devices = 20, every = 0, warmup = -1;
    std::string json_path;
    TlsProbe probe;
    {
        // The probe lies next to this program unless --tls-probe says otherwise.
        char self[4096];
        const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
        std::string dir = n > 0 ? std::string(self, size_t(n)) : std::string(argv[0]);
        probe.path = dir.substr(0, dir.rfind('/') + 1) + "libslipstream_tls_probe.so";
    }
    for (int i = 1; i < argc; ++i) {
        auto value = [&](const char* flag) {
            if (i + 1 >= argc) {
                std::fprintf(stderr, "%s needs a value\n", flag);
                std::exit(2);
            }
            return argv[++i];
        };
        if (std::strcmp(argv[i], "--devices") == 0) devices = std::atoi(value("--devices"));
        else if (std::strcmp(argv[i], "--every") == 0) every = std::atoi(value("--every"));
        else if (std::strcmp(argv[i], "--warmup") == 0) warmup = std::atoi(value("--warmup"));
        else if (std::strcmp(argv[i], "--json") == 0) json_path = value("--json");
        else if (std::strcmp(argv[i], "--tls-probe") == 0) probe.path = value("--tls-probe");
        else {
            std::fprintf(stderr, "usage: %s [--devices N] [--every K] [--warmup W] [--json PATH] [--tls-probe SO]\n",
                         argv[0]);
            return 2;
        }
    }
    if (devices < 2) {
        std::fprintf(stderr, "--devices must be at least 2\n");
        return 2;
    }
    if (every <= 0) every = std::max(1, devices / 20);
    if (warmup < 1) warmup = std::max(1, std::min(10, devices / 4));
    if (warmup >= devices) warmup = devices - 1;

    probe.total = static_tls_total();
    auto measure = [&probe](Sample& s) {
        s.tls_after = probe.used();
        s.rss_kib = rss_kib();
        s.malloc_kib = malloc_kib();
        s.fds = count_dir("/proc/self/fd");
        if (s.fds > 0) --s.fds;  // the directory being read
        s.threads = count_dir("/proc/self/task");
        s.objects = loaded_objects();
    };
    Sample start;
    measure(start);
    std::printf("device_churn: %d devices, one row every %d, growth measured from device %d\n", devices, every,
                warmup);
    std::printf("before any device: rss %lld KiB, %lld fds, %lld threads, %lld objects; static TLS %s of %s "
                "bytes in use\n",
                start.rss_kib, start.fds, start.threads, start.objects, cell(start.tls_after).c_str(),
                probe.total ? std::to_string(probe.total).c_str() : "n/a");
    if (start.tls_after < 0) std::printf("(static TLS: cannot load the probe %s)\n", probe.path.c_str());

    Report report{json_path, devices, warmup, start, probe.total};
    int& wrong = report.wrong;
    Stop& stopped = report.stopped;
    for (int round = 1; round <= devices; ++round) {
        Sample s;
        s.round = round;
        const double t0 = now_ms();
        {
            Round r(round, probe);
            stopped = r.run(s, wrong);
            if (report.device_name.empty()) {
                report.device_name = r.device_name();
                std::printf("device: %s\n", report.device_name.c_str());
                print_header();
            }
        }
        s.ms = now_ms() - t0;
        if (!stopped.what.empty()) {
            std::printf("device %d: %s returned %d; stopping\n", round, stopped.what.c_str(), int(stopped.result));
            break;
        }
        measure(s);
        read_layer_stats(s);
        report.samples.push_back(s);
        if (round == 1 || round % every == 0 || round == devices) print_row(s);
        report.write(/*print=*/false);  // kept current: a driver may end the process
    }
    report.write(/*print=*/true);
    if (!stopped.what.empty()) return 3;
    return wrong ? 1 : 0;
}
