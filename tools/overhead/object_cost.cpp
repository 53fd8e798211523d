// slipstream-object-cost: what the driver charges to create and destroy the objects small GPU
// operations use, and what an empty submission costs with a fence kept versus a fence made
// for it (issue 22: some drivers spend hundreds of microseconds per fence or timeline
// semaphore). Each row is one create+destroy pair, timed pair by pair:
//   fence, fence_signaled, binary_semaphore, timeline_semaphore, event, command_pool,
//   buffer (256 B storage, no memory), memory_64k (vkAllocateMemory + vkFreeMemory of 64 KiB
//   of a device-local type),
//   submit_wait_kept:  empty vkQueueSubmit with a kept fence, vkWaitForFences, vkResetFences
//   submit_wait_fresh: vkCreateFence, empty vkQueueSubmit with it, vkWaitForFences, vkDestroyFence
//   timeline_initial_1000: a timeline semaphore created with initial value 1000
//   submit_wait_fresh_timeline: a timeline semaphore created (initial 0), an empty vkQueueSubmit
//     signaling 1, vkWaitSemaphores for 1, vkDestroySemaphore (pooled, its values are offset by
//     the layer: each reuse starts where the last one left the counter)
//   staging_64k: what a naive runtime pays per staging allocation: vkAllocateMemory of 64 KiB of
//     its host-visible, coherent type (device-local preferred, as the bench's naive staging),
//     vkMapMemory, vkUnmapMemory, vkFreeMemory (the layer's cache recycles it, zeroed)
//   map_unmap_64k: vkMapMemory + vkUnmapMemory of a kept 64 KiB allocation of that type
//   memset_64k: a memset of 64 KiB through a kept mapping of it (no Vulkan call: what zeroing
//     one recycled allocation costs the host, write-combined or not)
//   memory_budget_query: one vkGetPhysicalDeviceMemoryProperties2 with the
//     VK_EXT_memory_budget structure (the allocation cache's pressure check; its interval
//     follows this cost), or without it where the device lacks the extension
// One process holds two devices: one on an instance without layers, one on an instance that
// enables VK_LAYER_slipstream by name (its manifest must be findable, e.g. through
// VK_ADD_LAYER_PATH). Repetitions alternate between them and rotate the rows, so machine noise
// hits both alike. Prints a table (median and 10th percentile of all pairs) and one JSON line.
// `--also VK_SLIPSTREAM_X=v` (repeatable) adds a device with the layer on an instance created
// while that variable is set (the layer reads its settings at vkCreateInstance): configurations
// compared in the same process, in the same alternation, with a median column each.
#include "tiny_rig.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace {
using Clock = std::chrono::steady_clock;

const char* const kRows[] = {"fence",        "fence_signaled", "binary_semaphore", "timeline_semaphore",
                             "event",        "command_pool",   "buffer",           "memory_64k",
                             "submit_wait_kept", "submit_wait_fresh", "timeline_initial_1000",
                             "submit_wait_fresh_timeline", "memory_budget_query", "staging_64k",
                             "map_unmap_64k", "memset_64k"};
constexpr int kRowCount = int(sizeof kRows / sizeof kRows[0]);

struct Rig {
    overhead::TinyRig tiny;
    vkapp::Context& ctx = tiny.ctx;
    VkFence kept = VK_NULL_HANDLE;
    uint32_t memory_type = 0;
    uint32_t staging_type = 0;
    VkDeviceMemory kept_staging = VK_NULL_HANDLE;  // map_unmap_64k
    void* kept_map = nullptr;                      // memset_64k, through a second allocation
    VkDeviceMemory mapped_staging = VK_NULL_HANDLE;
    bool budget = false;  // VK_EXT_memory_budget

    explicit Rig(std::vector<const char*> layers) : tiny("slipstream-object-cost", options(std::move(layers))) {
        VkFenceCreateInfo fi{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
        VK_CHECK(vkCreateFence(ctx.device, &fi, nullptr, &kept));
        int type = vkapp::find_memory_type(ctx.memory_properties, ~0u, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
        memory_type = uint32_t(type < 0 ? 0 : type);
        const VkMemoryPropertyFlags host = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
        type = vkapp::find_memory_type(ctx.memory_properties, ~0u, host | VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
        if (type < 0) type = vkapp::find_memory_type(ctx.memory_properties, ~0u, host);
        staging_type = uint32_t(type < 0 ? 0 : type);
        kept_staging = allocate(staging_type);
        mapped_staging = allocate(staging_type);
        VK_CHECK(vkMapMemory(ctx.device, mapped_staging, 0, VK_WHOLE_SIZE, 0, &kept_map));
        uint32_t count = 0;
        vkEnumerateDeviceExtensionProperties(ctx.physical_device, nullptr, &count, nullptr);
        std::vector<VkExtensionProperties> extensions(count);
        vkEnumerateDeviceExtensionProperties(ctx.physical_device, nullptr, &count, extensions.data());
        for (const VkExtensionProperties& e : extensions)
            budget = budget || !std::strcmp(e.extensionName, VK_EXT_MEMORY_BUDGET_EXTENSION_NAME);
    }
    ~Rig() {
        vkQueueWaitIdle(ctx.queue);
        vkDestroyFence(ctx.device, kept, nullptr);
        vkFreeMemory(ctx.device, kept_staging, nullptr);
        vkFreeMemory(ctx.device, mapped_staging, nullptr);
    }
    VkDeviceMemory allocate(uint32_t type) {
        VkMemoryAllocateInfo ai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
        ai.allocationSize = 64 * 1024;
        ai.memoryTypeIndex = type;
        VkDeviceMemory m;
        VK_CHECK(vkAllocateMemory(ctx.device, &ai, nullptr, &m));
        return m;
    }
    // The staging rows, timed from `t0` on.
    void staging_pair(const std::string& name, Clock::time_point& t0) {
        void* p = nullptr;
        t0 = Clock::now();
        if (name == "memset_64k") {
            std::memset(kept_map, 0, 64 * 1024);
        } else if (name == "map_unmap_64k") {
            VK_CHECK(vkMapMemory(ctx.device, kept_staging, 0, VK_WHOLE_SIZE, 0, &p));
            vkUnmapMemory(ctx.device, kept_staging);
        } else {  // staging_64k
            VkDeviceMemory m = allocate(staging_type);
            VK_CHECK(vkMapMemory(ctx.device, m, 0, VK_WHOLE_SIZE, 0, &p));
            vkUnmapMemory(ctx.device, m);
            vkFreeMemory(ctx.device, m, nullptr);
        }
    }
    static vkapp::ContextOptions options(std::vector<const char*> layers) {
        vkapp::ContextOptions o;
        o.layers = std::move(layers);
        o.timeline_semaphores = true;
        return o;
    }

    // One pair of `row`, timed.
    double pair_ns(int row) {
        VkDevice dev = ctx.device;
        const std::string name = kRows[row];
        Clock::time_point t0 = Clock::now();
        if (name == "fence" || name == "fence_signaled") {
            VkFenceCreateInfo fi{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
            if (name == "fence_signaled") fi.flags = VK_FENCE_CREATE_SIGNALED_BIT;
            VkFence f;
            t0 = Clock::now();
            VK_CHECK(vkCreateFence(dev, &fi, nullptr, &f));
            vkDestroyFence(dev, f, nullptr);
        } else if (name == "binary_semaphore" || name == "timeline_semaphore" || name == "timeline_initial_1000") {
            VkSemaphoreTypeCreateInfo type{VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO};
            type.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
            if (name == "timeline_initial_1000") type.initialValue = 1000;
            VkSemaphoreCreateInfo si{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
            if (name != "binary_semaphore") si.pNext = &type;
            VkSemaphore s;
            t0 = Clock::now();
            VK_CHECK(vkCreateSemaphore(dev, &si, nullptr, &s));
            vkDestroySemaphore(dev, s, nullptr);
        } else if (name == "event") {
            VkEventCreateInfo ei{VK_STRUCTURE_TYPE_EVENT_CREATE_INFO};
            VkEvent e;
            t0 = Clock::now();
            VK_CHECK(vkCreateEvent(dev, &ei, nullptr, &e));
            vkDestroyEvent(dev, e, nullptr);
        } else if (name == "command_pool") {
            VkCommandPoolCreateInfo pi{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
            pi.queueFamilyIndex = ctx.queue_family;
            VkCommandPool p;
            t0 = Clock::now();
            VK_CHECK(vkCreateCommandPool(dev, &pi, nullptr, &p));
            vkDestroyCommandPool(dev, p, nullptr);
        } else if (name == "buffer") {
            VkBufferCreateInfo bi{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
            bi.size = 256;
            bi.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT;
            VkBuffer b;
            t0 = Clock::now();
            VK_CHECK(vkCreateBuffer(dev, &bi, nullptr, &b));
            vkDestroyBuffer(dev, b, nullptr);
        } else if (name == "memory_64k") {
            VkMemoryAllocateInfo ai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
            ai.allocationSize = 64 * 1024;
            ai.memoryTypeIndex = memory_type;
            VkDeviceMemory m;
            t0 = Clock::now();
            VK_CHECK(vkAllocateMemory(dev, &ai, nullptr, &m));
            vkFreeMemory(dev, m, nullptr);
        } else if (name == "memory_budget_query") {
            VkPhysicalDeviceMemoryBudgetPropertiesEXT b{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_BUDGET_PROPERTIES_EXT};
            VkPhysicalDeviceMemoryProperties2 props{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_PROPERTIES_2};
            if (budget) props.pNext = &b;
            vkGetPhysicalDeviceMemoryProperties2(ctx.physical_device, &props);
        } else if (name == "staging_64k" || name == "map_unmap_64k" || name == "memset_64k") {
            staging_pair(name, t0);
        } else if (name == "submit_wait_kept") {
            VK_CHECK(vkQueueSubmit(ctx.queue, 0, nullptr, kept));
            VK_CHECK(vkWaitForFences(dev, 1, &kept, VK_TRUE, UINT64_MAX));
            VK_CHECK(vkResetFences(dev, 1, &kept));
        } else if (name == "submit_wait_fresh_timeline") {
            VkSemaphoreTypeCreateInfo type{VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO};
            type.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
            VkSemaphoreCreateInfo si{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, &type};
            VkSemaphore s;
            VK_CHECK(vkCreateSemaphore(dev, &si, nullptr, &s));
            const uint64_t one = 1;
            VkTimelineSemaphoreSubmitInfo values{VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO};
            values.signalSemaphoreValueCount = 1;
            values.pSignalSemaphoreValues = &one;
            VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO, &values};
            submit.signalSemaphoreCount = 1;
            submit.pSignalSemaphores = &s;
            VK_CHECK(vkQueueSubmit(ctx.queue, 1, &submit, VK_NULL_HANDLE));
            VkSemaphoreWaitInfo wait{VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO};
            wait.semaphoreCount = 1;
            wait.pSemaphores = &s;
            wait.pValues = &one;
            VK_CHECK(vkWaitSemaphores(dev, &wait, UINT64_MAX));
            // Its batch has completed, not only its signal (valid usage at the destroy).
            VK_CHECK(vkQueueWaitIdle(ctx.queue));
            vkDestroySemaphore(dev, s, nullptr);
        } else {  // submit_wait_fresh
            VkFenceCreateInfo fi{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
            VkFence f;
            VK_CHECK(vkCreateFence(dev, &fi, nullptr, &f));
            VK_CHECK(vkQueueSubmit(ctx.queue, 0, nullptr, f));
            VK_CHECK(vkWaitForFences(dev, 1, &f, VK_TRUE, UINT64_MAX));
            vkDestroyFence(dev, f, nullptr);
        }
        return std::chrono::duration<double, std::nano>(Clock::now() - t0).count();
    }
};

double percentile(std::vector<double> v, double p) {
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, size_t(p * double(v.size())))];
}

// A device with the layer on an instance created while `assignment` (VAR=value) is set.
std::unique_ptr<Rig> rig_with(const std::string& assignment) {
    const size_t eq = assignment.find('=');
    const std::string name = assignment.substr(0, eq);
    const char* old = std::getenv(name.c_str());
    const std::string saved = old ? old : "";
    setenv(name.c_str(), assignment.substr(eq + 1).c_str(), 1);
    auto rig = std::make_unique<Rig>(std::vector<const char*>{"VK_LAYER_slipstream"});
    if (old) setenv(name.c_str(), saved.c_str(), 1);
    else unsetenv(name.c_str());
    return rig;
}

// Every side's pairs of every row; side 0 without the layer.
std::vector<std::vector<std::vector<double>>> measure(const std::vector<std::string>& also, int reps, int pairs,
                                                      std::string* device, int* failures) {
    std::vector<std::unique_ptr<Rig>> rigs;
    rigs.push_back(std::make_unique<Rig>(std::vector<const char*>{}));
    rigs.push_back(std::make_unique<Rig>(std::vector<const char*>{"VK_LAYER_slipstream"}));
    for (const std::string& a : also) rigs.push_back(rig_with(a));
    *device = rigs[0]->ctx.properties.deviceName;
    const int sides = int(rigs.size());
    std::vector<std::vector<std::vector<double>>> ns(sides, std::vector<std::vector<double>>(kRowCount));
    for (int rep = 0; rep <= reps; ++rep) {  // repetition 0 warms every side up (and fills the layer's pool)
        for (int k = 0; k < kRowCount; ++k) {
            const int row = (k + rep) % kRowCount;  // rotate who goes first
            for (int s = 0; s < sides; ++s) {
                const int side = (rep + s) % sides;  // rotate the sides
                for (int i = 0; i < pairs; ++i) {
                    const double t = rigs[side]->pair_ns(row);
                    if (rep) ns[side][row].push_back(t);
                }
            }
        }
    }
    rigs.clear();
    *failures = vkapp::g_validation_messages.load();
    return ns;
}
}  // namespace

int main(int argc, char** argv) {
    int reps = 11, pairs = 100;
    std::vector<std::string> also;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--reps") && i + 1 < argc) reps = std::atoi(argv[++i]);
        else if (!std::strcmp(argv[i], "--pairs") && i + 1 < argc) pairs = std::atoi(argv[++i]);
        else if (!std::strcmp(argv[i], "--also") && i + 1 < argc && std::strchr(argv[i + 1], '='))
            also.push_back(argv[++i]);
        else {
            std::fprintf(stderr, "usage: %s [--reps N] [--pairs N] [--also VK_SLIPSTREAM_X=value]...\n", argv[0]);
            return 2;
        }
    }
    if (reps < 1 || pairs < 1) {
        std::fprintf(stderr, "--reps and --pairs must be positive\n");
        return 2;
    }
    std::string device;
    int failures = 0;
    const auto ns = measure(also, reps, pairs, &device, &failures);
    std::printf("%s: %d create+destroy pairs per row and side, %d alternating repetitions\n", device.c_str(), pairs,
                reps);
    std::printf("%-28s%14s%14s%14s%14s%14s", "row (ns per pair)", "off median", "on median", "on - off", "off p10",
                "on p10");
    for (const std::string& a : also) std::printf("  %s median", a.c_str());
    std::printf("\n");
    std::string json = "{\"device\": \"" + device + "\", \"pairs\": " + std::to_string(pairs) +
                       ", \"reps\": " + std::to_string(reps);
    for (int r = 0; r < kRowCount; ++r) {
        const double off_med = percentile(ns[0][r], 0.5), on_med = percentile(ns[1][r], 0.5);
        const double off_p10 = percentile(ns[0][r], 0.1), on_p10 = percentile(ns[1][r], 0.1);
        std::printf("%-28s%14.0f%14.0f%14.0f%14.0f%14.0f", kRows[r], off_med, on_med, on_med - off_med, off_p10,
                    on_p10);
        json += std::string(", \"") + kRows[r] + "_ns\": {\"off_median\": " + std::to_string(off_med) +
                ", \"on_median\": " + std::to_string(on_med) + ", \"off_p10\": " + std::to_string(off_p10) +
                ", \"on_p10\": " + std::to_string(on_p10);
        for (size_t a = 0; a < also.size(); ++a) {
            const double med = percentile(ns[2 + a][r], 0.5);
            std::printf("%*.0f", int(also[a].size() + 9), med);
            json += ", \"" + also[a] + "_median\": " + std::to_string(med);
        }
        std::printf("\n");
        json += "}";
    }
    std::printf("%s}\n", json.c_str());
    return failures ? 1 : 0;
}
