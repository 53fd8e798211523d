// fault_app: a compute workload that checks every VkResult, for the fault-injection tests
// (fault_test.py runs it with VK_LAYER_SLIPSTREAM_test_faults under Slipstream, and without
// Slipstream). It records the first error it sees and where, then stops, cleans up, and runs the
// same workload again on a second device of its own, where no fault is injected.
//
//   fault_app [--steps N] [--wait-every K] [--wait fence|poll|queue-idle|device-idle|timeline|ring]
//             [--submit submit|submit2] [--timeout-ns T] [--secondary-every M] [--sleep-us U]
//             [--words W] [--readback-block] [--churn N [--churn-kib K] [--churn-rounds R]]
//             [--churn-device] [--fresh-fences]
//
// The workload: an upload copy, N dependent dispatches of the chain_step kernel ping-ponging
// between two buffers (one command buffer each, opening with a compute barrier), a copy into a
// readback buffer; submitted one command buffer per vkQueueSubmit(2), in groups of K, each group
// ended by the chosen wait:
//   fence        the group's last submission carries a fence: vkWaitForFences
//   poll         the same, then vkGetFenceStatus until it signals
//   queue-idle   no fences: vkQueueWaitIdle;   device-idle: vkDeviceWaitIdle
//   timeline     the group's last submission signals a timeline semaphore: vkWaitSemaphores
//   ring         every submission has a fence from a ring of 3, each waited for (and reset)
//                before its reuse; the group waits for all
// Waits use --timeout-ns (default: no limit); VK_TIMEOUT from a finite one, or VK_NOT_READY
// from a status query, is waited again (counted). With --secondary-every M, every Mth step's
// dispatch runs in a secondary command buffer (vkCmdExecuteCommands, which Slipstream cannot
// capture: its lazily recorded command buffer is made native there). --sleep-us sleeps after
// every submission (fused batches then go from Slipstream's deadline flusher thread); --words
// sets the buffers' size (longer dispatches: waits that block in the driver).
// --readback-block allocates the readback memory as a block 4x its buffer's size plus 1 MiB:
// Slipstream's cached readback learns what it is for only from its first use (a copy into it).
// --churn N: before the workload, R rounds (--churn-rounds, default 1) of N allocations of the
// upload buffer's memory type, all alive at once, then all freed (Slipstream's allocation cache
// keeps them): allocation i of a round is K + 4*i KiB (--churn-kib, default 64), sizes no request
// of the workload's fits into, so the cache holds memory when the workload allocates its own.
// --churn-device: the churn allocates the chain buffers' memory type (the first DEVICE_LOCAL
// one) instead, and its first two allocations have their size, so that the cache hands them to
// the chain buffers (recycled device-local memory, zeroed by Slipstream's GPU fill ahead of the
// first submission where the host cannot map it).
// --fresh-fences: fence and poll waits use a fence created for the group's last submission and
// destroyed after its wait (Slipstream's fence pool); a fence whose submission failed is
// destroyed at once, work it may stand for possibly still pending.

// Allocations, in this order: the two chain buffers (first DEVICE_LOCAL type), upload (first
// HOST_VISIBLE|HOST_COHERENT), readback (first HOST_VISIBLE|DEVICE_LOCAL, else HOST_VISIBLE|
// HOST_COHERENT: the naive choice Slipstream's cached readback moves), each after its buffer's
// requirements query.
//
// Output (stdout), one fact per line, for fault_test.py:
//   error: <call> <VkResult>          every error a call returned (VK_TIMEOUT / VK_NOT_READY of
//                                     retried waits are counted in "retried:", not here)
//   first-error: <call> <VkResult>    or "first-error: none"
//   results: correct | wrong | not-checked
//   after-lost: submit=<VkResult> wait=<VkResult>    (only after VK_ERROR_DEVICE_LOST)
//   retried: timeout=<n> not-ready=<n>
//   app-calls: <function>=<n> ...      what the application itself called on the first device
//   next-device: correct | wrong | error <call> <VkResult>
// Exit status 0 unless the program itself misbehaved (bad usage: 2; the poll guard of 20 s: 3).
#include "chain_step.h"
#include "suite_util.h"
#include "vk_app.h"

#include "fault_step_comp.h"

#include <chrono>
#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <vector>

namespace {

using chain::Params;

constexpr uint32_t kRing = 3;
// Words per buffer (--words): the default keeps every dispatch short; waits that must block in
// the driver (not be answered by Slipstream's spin) need longer ones.
uint32_t kN = 2048 + 37;
VkDeviceSize kBytes = VkDeviceSize(kN) * 4;

const char* result_name(VkResult r) {
    switch (r) {
    case VK_SUCCESS: return "VK_SUCCESS";
    case VK_NOT_READY: return "VK_NOT_READY";
    case VK_TIMEOUT: return "VK_TIMEOUT";
    case VK_INCOMPLETE: return "VK_INCOMPLETE";
    case VK_ERROR_OUT_OF_HOST_MEMORY: return "VK_ERROR_OUT_OF_HOST_MEMORY";
    case VK_ERROR_OUT_OF_DEVICE_MEMORY: return "VK_ERROR_OUT_OF_DEVICE_MEMORY";
    case VK_ERROR_INITIALIZATION_FAILED: return "VK_ERROR_INITIALIZATION_FAILED";
    case VK_ERROR_DEVICE_LOST: return "VK_ERROR_DEVICE_LOST";
    case VK_ERROR_MEMORY_MAP_FAILED: return "VK_ERROR_MEMORY_MAP_FAILED";
    default: return "VK_RESULT_OTHER";
    }
}

enum class WaitKind { Fence, Poll, QueueIdle, DeviceIdle, Timeline, Ring };

struct Options {
    uint32_t steps = 24;
    uint32_t wait_every = 0;  // 0: steps + 2 (one wait at the end)
    WaitKind wait = WaitKind::Fence;
    bool submit2 = false;
    uint64_t timeout_ns = UINT64_MAX;
    uint32_t secondary_every = 0;
    uint32_t sleep_us = 0;  // after every submission: batches then go by Slipstream's deadline flusher
    bool readback_block = false;
    uint32_t churn = 0, churn_kib = 64, churn_rounds = 1;
    bool churn_device = false;
    bool fresh_fences = false;
};

// The first error, every error, and what the application called.
struct Log {
    std::string first_call;
    VkResult first = VK_SUCCESS;
    uint32_t timeouts = 0, not_ready = 0;
    std::map<std::string, uint32_t> calls;
    bool counting = true;  // the first device only

    // True on VK_SUCCESS; records an error otherwise.
    bool ok(VkResult r, const char* call) {
        if (r == VK_SUCCESS) return true;
        std::printf("error: %s %s\n", call, result_name(r));
        if (first == VK_SUCCESS) {
            first = r;
            first_call = call;
        }
        return false;
    }
    void called(const char* fn) {
        if (counting) ++calls[fn];
    }
    bool failed() const { return first != VK_SUCCESS; }
};

Log g_log;

int memory_type(const vkapp::Context& ctx, uint32_t bits, VkMemoryPropertyFlags want, VkMemoryPropertyFlags fallback) {
    int t = vkapp::find_memory_type(ctx.memory_properties, bits, want);
    return t >= 0 ? t : vkapp::find_memory_type(ctx.memory_properties, bits, fallback);
}

struct Buffer {
    VkBuffer buffer = VK_NULL_HANDLE;
    VkDeviceMemory memory = VK_NULL_HANDLE;
    void* mapped = nullptr;
};

// `block`: the allocation is a block far larger than the buffer (no evidence for Slipstream's
// cached readback at allocation time). `map`: mapped now (else when read).
bool create_buffer(vkapp::Context& ctx, VkBufferUsageFlags usage, VkMemoryPropertyFlags want,
                   VkMemoryPropertyFlags fallback, Buffer& b, bool map = true, bool block = false) {
    VkBufferCreateInfo bci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    bci.size = kBytes;
    bci.usage = usage;
    if (!g_log.ok(vkCreateBuffer(ctx.device, &bci, nullptr, &b.buffer), "vkCreateBuffer")) return false;
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(ctx.device, b.buffer, &req);
    const int type = memory_type(ctx, req.memoryTypeBits, want, fallback);
    if (type < 0) {
        std::fprintf(stderr, "fault_app: no memory type for a buffer\n");
        std::exit(2);
    }
    VkMemoryAllocateInfo mai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    mai.allocationSize = block ? req.size * 4 + (VkDeviceSize(1) << 20) : req.size;
    mai.memoryTypeIndex = uint32_t(type);
    g_log.called("vkAllocateMemory");
    if (!g_log.ok(vkAllocateMemory(ctx.device, &mai, nullptr, &b.memory), "vkAllocateMemory")) return false;
    if (!g_log.ok(vkBindBufferMemory(ctx.device, b.buffer, b.memory, 0), "vkBindBufferMemory")) return false;
    if (map && (ctx.memory_properties.memoryTypes[type].propertyFlags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT))
        return g_log.ok(vkMapMemory(ctx.device, b.memory, 0, VK_WHOLE_SIZE, 0, &b.mapped), "vkMapMemory");
    return true;
}

void destroy_buffer(vkapp::Context& ctx, Buffer& b) {
    if (b.buffer) vkDestroyBuffer(ctx.device, b.buffer, nullptr);
    if (b.memory) vkFreeMemory(ctx.device, b.memory, nullptr);
    b = Buffer{};
}

// --churn: rounds of allocations alive at once, then freed. False when an allocation failed.
bool churn(vkapp::Context& ctx, const Options& o, VkBufferUsageFlags device_usage) {
    int type = vkapp::find_memory_type(ctx.memory_properties, ~0u, suite::kHostMemory);
    VkDeviceSize chain_size = 0;
    if (o.churn_device) {
        VkBufferCreateInfo bci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
        bci.size = kBytes;
        bci.usage = device_usage;
        VkBuffer probe = VK_NULL_HANDLE;
        if (!g_log.ok(vkCreateBuffer(ctx.device, &bci, nullptr, &probe), "vkCreateBuffer")) return false;
        VkMemoryRequirements req;
        vkGetBufferMemoryRequirements(ctx.device, probe, &req);
        vkDestroyBuffer(ctx.device, probe, nullptr);
        type = memory_type(ctx, req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0);
        chain_size = req.size;
    }
    if (type < 0) {
        std::fprintf(stderr, "fault_app: no memory type to churn\n");
        std::exit(2);
    }
    for (uint32_t round = 0; round < o.churn_rounds; ++round) {
        std::vector<VkDeviceMemory> held;
        bool ok = true;
        for (uint32_t i = 0; i < o.churn && ok; ++i) {
            VkMemoryAllocateInfo mai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
            mai.allocationSize = chain_size && i < 2 ? chain_size : (VkDeviceSize(o.churn_kib) + 4 * i) << 10;
            mai.memoryTypeIndex = uint32_t(type);
            VkDeviceMemory m = VK_NULL_HANDLE;
            g_log.called("vkAllocateMemory");
            ok = g_log.ok(vkAllocateMemory(ctx.device, &mai, nullptr, &m), "vkAllocateMemory");
            if (ok) held.push_back(m);
        }
        for (VkDeviceMemory m : held) vkFreeMemory(ctx.device, m, nullptr);
        if (!ok) return false;
    }
    return true;
}

// Everything one run of the workload on one device holds; destroyed in ~Workload.
class Workload {
public:
    Workload(vkapp::Context& ctx, const Options& o) : ctx_(ctx), o_(o) {}
    ~Workload() { destroy(); }
    Workload(const Workload&) = delete;
    Workload& operator=(const Workload&) = delete;

    // Runs it; false when a call failed (g_log has it) or the results are wrong (*correct).
    bool run(bool* correct);
    // After VK_ERROR_DEVICE_LOST: what a new submission and a device wait return.
    void probe_after_lost();

private:
    bool setup();
    bool record(uint32_t i, VkCommandBuffer cb);
    bool submit(VkCommandBuffer cb, VkFence fence, bool signal_timeline);
    bool wait_group(VkFence fence);
    bool wait_fence(VkFence fence);
    bool poll_fence(VkFence fence);
    bool reset_fence(VkFence fence);
    void destroy();

    vkapp::Context& ctx_;
    Options o_;
    Buffer ping_[2], upload_, readback_;
    vkapp::ComputePipeline pipe_;
    VkDescriptorPool dpool_ = VK_NULL_HANDLE;
    VkDescriptorSet sets_[2] = {};
    VkCommandPool pool_ = VK_NULL_HANDLE;
    std::vector<VkCommandBuffer> cbs_, secondaries_;
    VkFence fences_[kRing] = {};
    bool ring_busy_[kRing] = {};
    VkSemaphore timeline_ = VK_NULL_HANDLE;
    uint64_t timeline_value_ = 0;
    std::vector<uint32_t> initial_;
};

bool Workload::setup() {
    constexpr VkBufferUsageFlags dev = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                       VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    constexpr VkMemoryPropertyFlags dl = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
    constexpr VkMemoryPropertyFlags host = suite::kHostMemory;
    if (o_.churn && !churn(ctx_, o_, dev)) return false;
    for (Buffer& b : ping_)
        if (!create_buffer(ctx_, dev, dl, 0, b)) return false;
    if (!create_buffer(ctx_, VK_BUFFER_USAGE_TRANSFER_SRC_BIT, host, host, upload_)) return false;
    // Mapped only to read the results: a mapping before the GPU's first write would tell
    // Slipstream's cached readback the host writes it.
    if (!create_buffer(ctx_, VK_BUFFER_USAGE_TRANSFER_DST_BIT, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | dl, host,
                       readback_, false, o_.readback_block))
        return false;
    initial_.resize(kN);
    suite::Rng rng(0xfa017ull);
    for (uint32_t& v : initial_) v = rng.next32();
    std::memcpy(upload_.mapped, initial_.data(), kBytes);

    pipe_ = vkapp::create_compute_pipeline(ctx_, fault_step_comp, sizeof(fault_step_comp), 2, sizeof(Params));
    dpool_ = suite::create_storage_pool(ctx_, 2, 4);
    for (int i = 0; i < 2; ++i) {
        sets_[i] = suite::allocate_set(ctx_, dpool_, pipe_.set_layout);
        vkapp::write_storage_buffers(ctx_, sets_[i], {ping_[i].buffer, ping_[1 - i].buffer});
    }

    VkCommandPoolCreateInfo pci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    pci.queueFamilyIndex = ctx_.queue_family;
    g_log.called("vkCreateCommandPool");
    if (!g_log.ok(vkCreateCommandPool(ctx_.device, &pci, nullptr, &pool_), "vkCreateCommandPool")) return false;
    VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    ai.commandPool = pool_;
    ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ai.commandBufferCount = o_.steps + 2;
    std::vector<VkCommandBuffer> cbs(ai.commandBufferCount);
    g_log.called("vkAllocateCommandBuffers");
    if (!g_log.ok(vkAllocateCommandBuffers(ctx_.device, &ai, cbs.data()), "vkAllocateCommandBuffers")) return false;
    cbs_ = cbs;
    if (o_.secondary_every) {
        ai.level = VK_COMMAND_BUFFER_LEVEL_SECONDARY;
        ai.commandBufferCount = o_.steps;
        cbs.resize(o_.steps);
        g_log.called("vkAllocateCommandBuffers");
        if (!g_log.ok(vkAllocateCommandBuffers(ctx_.device, &ai, cbs.data()), "vkAllocateCommandBuffers"))
            return false;
        secondaries_ = cbs;
    }
    const bool fence_waits = o_.wait == WaitKind::Fence || o_.wait == WaitKind::Poll;
    const uint32_t fences = o_.wait == WaitKind::Ring ? kRing : fence_waits && !o_.fresh_fences ? 1 : 0;
    for (uint32_t i = 0; i < fences; ++i) {
        VkFenceCreateInfo fi{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
        g_log.called("vkCreateFence");
        if (!g_log.ok(vkCreateFence(ctx_.device, &fi, nullptr, &fences_[i]), "vkCreateFence")) return false;
    }
    if (o_.wait == WaitKind::Timeline) {
        VkSemaphoreTypeCreateInfo ti{VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO};
        ti.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
        VkSemaphoreCreateInfo ci{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, &ti};
        g_log.called("vkCreateSemaphore");
        if (!g_log.ok(vkCreateSemaphore(ctx_.device, &ci, nullptr, &timeline_), "vkCreateSemaphore")) return false;
    }
    for (uint32_t i = 0; i < cbs_.size(); ++i)
        if (!record(i, cbs_[i])) return false;
    return true;
}

// Command buffer i: 0 uploads, 1..steps dispatch step i-1, steps+1 reads back.
bool Workload::record(uint32_t i, VkCommandBuffer cb) {
    VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    g_log.called("vkBeginCommandBuffer");
    if (!g_log.ok(vkBeginCommandBuffer(cb, &bi), "vkBeginCommandBuffer")) return false;
    if (i == 0) {
        VkBufferCopy copy{0, 0, kBytes};
        vkCmdCopyBuffer(cb, upload_.buffer, ping_[0].buffer, 1, &copy);
        vkapp::barrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                       VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
    } else if (i <= o_.steps) {
        const uint32_t step = i - 1;
        // Every step reads what the previous one wrote and overwrites what it read.
        vkapp::barrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_SHADER_READ_BIT,
                       VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
        const Params p = chain::params_for(step, kN);
        auto dispatch = [&](VkCommandBuffer target) {
            vkCmdBindPipeline(target, VK_PIPELINE_BIND_POINT_COMPUTE, pipe_.pipeline);
            vkCmdBindDescriptorSets(target, VK_PIPELINE_BIND_POINT_COMPUTE, pipe_.layout, 0, 1, &sets_[step % 2], 0,
                                    nullptr);
            vkCmdPushConstants(target, pipe_.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof p, &p);
            vkCmdDispatch(target, 8, 1, 1);
        };
        if (o_.secondary_every && step % o_.secondary_every == o_.secondary_every - 1) {
            VkCommandBuffer secondary = secondaries_[step];
            VkCommandBufferInheritanceInfo inherit{VK_STRUCTURE_TYPE_COMMAND_BUFFER_INHERITANCE_INFO};
            VkCommandBufferBeginInfo sbi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
            sbi.pInheritanceInfo = &inherit;
            g_log.called("vkBeginCommandBuffer");
            if (!g_log.ok(vkBeginCommandBuffer(secondary, &sbi), "vkBeginCommandBuffer")) return false;
            dispatch(secondary);
            g_log.called("vkEndCommandBuffer");
            if (!g_log.ok(vkEndCommandBuffer(secondary), "vkEndCommandBuffer")) return false;
            vkCmdExecuteCommands(cb, 1, &secondary);
        } else {
            dispatch(cb);
        }
    } else {
        vkapp::barrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                       VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT);
        VkBufferCopy copy{0, 0, kBytes};
        vkCmdCopyBuffer(cb, ping_[o_.steps % 2].buffer, readback_.buffer, 1, &copy);
        vkapp::barrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT,
                       VK_ACCESS_HOST_READ_BIT);
    }
    g_log.called("vkEndCommandBuffer");
    return g_log.ok(vkEndCommandBuffer(cb), "vkEndCommandBuffer");
}

bool Workload::submit(VkCommandBuffer cb, VkFence fence, bool signal_timeline) {
    const uint64_t value = timeline_value_ + 1;
    if (o_.submit2) {
        VkCommandBufferSubmitInfo cbi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_SUBMIT_INFO};
        cbi.commandBuffer = cb;
        VkSemaphoreSubmitInfo signal{VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO};
        signal.semaphore = timeline_;
        signal.value = value;
        signal.stageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT;
        VkSubmitInfo2 si{VK_STRUCTURE_TYPE_SUBMIT_INFO_2};
        si.commandBufferInfoCount = 1;
        si.pCommandBufferInfos = &cbi;
        if (signal_timeline) {
            si.signalSemaphoreInfoCount = 1;
            si.pSignalSemaphoreInfos = &signal;
        }
        g_log.called("vkQueueSubmit2");
        if (!g_log.ok(vkQueueSubmit2(ctx_.queue, 1, &si, fence), "vkQueueSubmit2")) return false;
    } else {
        VkTimelineSemaphoreSubmitInfo values{VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO};
        values.signalSemaphoreValueCount = 1;
        values.pSignalSemaphoreValues = &value;
        VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
        si.commandBufferCount = 1;
        si.pCommandBuffers = &cb;
        if (signal_timeline) {
            si.pNext = &values;
            si.signalSemaphoreCount = 1;
            si.pSignalSemaphores = &timeline_;
        }
        g_log.called("vkQueueSubmit");
        if (!g_log.ok(vkQueueSubmit(ctx_.queue, 1, &si, fence), "vkQueueSubmit")) return false;
    }
    if (signal_timeline) timeline_value_ = value;
    return true;
}

bool Workload::wait_fence(VkFence fence) {
    for (;;) {
        const VkResult r = vkWaitForFences(ctx_.device, 1, &fence, VK_TRUE, o_.timeout_ns);
        if (r == VK_TIMEOUT && o_.timeout_ns != UINT64_MAX) {
            ++g_log.timeouts;
            continue;
        }
        return g_log.ok(r, "vkWaitForFences");
    }
}

bool Workload::poll_fence(VkFence fence) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    for (;;) {
        const VkResult r = vkGetFenceStatus(ctx_.device, fence);
        if (r != VK_NOT_READY) return g_log.ok(r, "vkGetFenceStatus");
        ++g_log.not_ready;
        if (std::chrono::steady_clock::now() > deadline) {
            std::printf("poll-guard: the fence did not signal in 20 s\n");
            std::fflush(stdout);
            std::exit(3);
        }
        std::this_thread::yield();
    }
}

bool Workload::reset_fence(VkFence fence) { return g_log.ok(vkResetFences(ctx_.device, 1, &fence), "vkResetFences"); }

bool Workload::wait_group(VkFence fence) {
    switch (o_.wait) {
    case WaitKind::Fence: return wait_fence(fence) && reset_fence(fence);
    case WaitKind::Poll: return poll_fence(fence) && reset_fence(fence);
    case WaitKind::QueueIdle: return g_log.ok(vkQueueWaitIdle(ctx_.queue), "vkQueueWaitIdle");
    case WaitKind::DeviceIdle: return g_log.ok(vkDeviceWaitIdle(ctx_.device), "vkDeviceWaitIdle");
    case WaitKind::Timeline: {
        VkSemaphoreWaitInfo wi{VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO};
        wi.semaphoreCount = 1;
        wi.pSemaphores = &timeline_;
        wi.pValues = &timeline_value_;
        for (;;) {
            const VkResult r = vkWaitSemaphores(ctx_.device, &wi, o_.timeout_ns);
            if (r == VK_TIMEOUT && o_.timeout_ns != UINT64_MAX) {
                ++g_log.timeouts;
                continue;
            }
            return g_log.ok(r, "vkWaitSemaphores");
        }
    }
    case WaitKind::Ring:
        for (uint32_t k = 0; k < kRing; ++k) {
            if (!ring_busy_[k]) continue;
            if (!wait_fence(fences_[k]) || !reset_fence(fences_[k])) return false;
            ring_busy_[k] = false;
        }
        return true;
    }
    return false;
}

bool Workload::run(bool* correct) {
    *correct = false;
    if (!setup()) return false;
    const uint32_t total = uint32_t(cbs_.size());
    const uint32_t every = o_.wait_every ? o_.wait_every : total;
    for (uint32_t i = 0; i < total; ++i) {
        const bool last_of_group = (i + 1) % every == 0 || i + 1 == total;
        VkFence fence = VK_NULL_HANDLE;
        if (o_.wait == WaitKind::Ring) {
            const uint32_t k = i % kRing;
            if (ring_busy_[k]) {
                if (!wait_fence(fences_[k]) || !reset_fence(fences_[k])) return false;
                ring_busy_[k] = false;
            }
            fence = fences_[k];
            ring_busy_[k] = true;
        } else if (last_of_group && (o_.wait == WaitKind::Fence || o_.wait == WaitKind::Poll)) {
            if (o_.fresh_fences) {
                VkFenceCreateInfo fi{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
                g_log.called("vkCreateFence");
                if (!g_log.ok(vkCreateFence(ctx_.device, &fi, nullptr, &fences_[0]), "vkCreateFence")) return false;
            }
            fence = fences_[0];
        }
        if (!submit(cbs_[i], fence, last_of_group && o_.wait == WaitKind::Timeline)) {
            if (o_.wait == WaitKind::Ring) ring_busy_[i % kRing] = false;  // a failed submission signals nothing
            return false;  // (a fresh fence is destroyed with the rest)
        }
        if (o_.sleep_us) std::this_thread::sleep_for(std::chrono::microseconds(o_.sleep_us));
        if (last_of_group && !wait_group(fence)) return false;
        if (fence && o_.fresh_fences) {
            vkDestroyFence(ctx_.device, fence, nullptr);
            fences_[0] = VK_NULL_HANDLE;
        }
    }
    // The CPU reference.
    std::vector<uint32_t> a = initial_, b(kN);
    for (uint32_t s = 0; s < o_.steps; ++s) {
        chain::cpu_step(a, b, chain::params_for(s, kN));
        a.swap(b);
    }
    if (!g_log.ok(vkMapMemory(ctx_.device, readback_.memory, 0, VK_WHOLE_SIZE, 0, &readback_.mapped), "vkMapMemory"))
        return false;
    VkMappedMemoryRange range{VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE};
    range.memory = readback_.memory;
    range.size = VK_WHOLE_SIZE;
    if (!g_log.ok(vkInvalidateMappedMemoryRanges(ctx_.device, 1, &range), "vkInvalidateMappedMemoryRanges")) return false;
    *correct = std::memcmp(readback_.mapped, a.data(), kBytes) == 0;
    return *correct;
}

void Workload::probe_after_lost() {
    // A new command buffer (never submitted), recorded and submitted: device loss must stick.
    // (Its allocation may meet an injected fault too: tried again.)
    VkCommandBuffer cb = VK_NULL_HANDLE;
    VkResult submitted = VK_ERROR_INITIALIZATION_FAILED;  // printed as "not probed"
    VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    ai.commandPool = pool_;
    ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ai.commandBufferCount = 1;
    VkResult allocated = VK_ERROR_INITIALIZATION_FAILED;
    for (int attempt = 0; pool_ && attempt < 20 && allocated != VK_SUCCESS; ++attempt)
        allocated = vkAllocateCommandBuffers(ctx_.device, &ai, &cb);
    if (allocated == VK_SUCCESS) {
        VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
        if (vkBeginCommandBuffer(cb, &bi) == VK_SUCCESS) {
            VkBufferCopy copy{0, 0, 64};
            if (upload_.buffer && ping_[1].memory) vkCmdCopyBuffer(cb, upload_.buffer, ping_[1].buffer, 1, &copy);
            if (vkEndCommandBuffer(cb) == VK_SUCCESS) {
                VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
                si.commandBufferCount = 1;
                si.pCommandBuffers = &cb;
                submitted = vkQueueSubmit(ctx_.queue, 1, &si, VK_NULL_HANDLE);
            }
        }
    }
    const VkResult waited = vkDeviceWaitIdle(ctx_.device);
    std::printf("after-lost: submit=%s wait=%s\n",
                submitted == VK_ERROR_INITIALIZATION_FAILED ? "not-probed" : result_name(submitted), result_name(waited));
}

void Workload::destroy() {
    if (!ctx_.device) return;
    // Nothing may be in use when it is destroyed: wait, again where a wait failed for want of
    // memory (a lost device has nothing in use any more).
    for (int attempt = 0; attempt < 50; ++attempt) {
        const VkResult r = vkDeviceWaitIdle(ctx_.device);
        if (r == VK_SUCCESS || r == VK_ERROR_DEVICE_LOST) break;
    }
    if (pool_) vkDestroyCommandPool(ctx_.device, pool_, nullptr);
    pool_ = VK_NULL_HANDLE;
    for (VkFence& f : fences_) {
        if (f) vkDestroyFence(ctx_.device, f, nullptr);
        f = VK_NULL_HANDLE;
    }
    if (timeline_) vkDestroySemaphore(ctx_.device, timeline_, nullptr);
    timeline_ = VK_NULL_HANDLE;
    if (dpool_) vkDestroyDescriptorPool(ctx_.device, dpool_, nullptr);
    dpool_ = VK_NULL_HANDLE;
    if (pipe_.pipeline) vkapp::destroy_compute_pipeline(ctx_, pipe_);
    for (Buffer* b : {&ping_[0], &ping_[1], &upload_, &readback_}) destroy_buffer(ctx_, *b);
}

[[noreturn]] void usage(const char* self) {
    std::fprintf(stderr,
                 "usage: %s [--steps N] [--wait-every K] [--wait fence|poll|queue-idle|device-idle|timeline|ring]\n"
                 "          [--submit submit|submit2] [--timeout-ns T] [--secondary-every M] [--sleep-us U]\n"
                 "          [--words W] [--readback-block] [--churn N [--churn-kib K] [--churn-rounds R]]\n"
                 "          [--churn-device] [--fresh-fences]\n",
                 self);
    std::exit(2);
}

Options parse(int argc, char** argv) {
    Options o;
    auto number = [&](int& i) {
        if (i + 1 >= argc) usage(argv[0]);
        char* end = nullptr;
        const unsigned long long v = std::strtoull(argv[++i], &end, 10);
        if (*end) usage(argv[0]);
        return uint64_t(v);
    };
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--steps") o.steps = uint32_t(std::max<uint64_t>(1, std::min<uint64_t>(number(i), 1000)));
        else if (a == "--wait-every") o.wait_every = uint32_t(std::min<uint64_t>(number(i), 1000));
        else if (a == "--timeout-ns") o.timeout_ns = number(i);
        else if (a == "--secondary-every") o.secondary_every = uint32_t(std::min<uint64_t>(number(i), 1000));
        else if (a == "--readback-block") o.readback_block = true;
        else if (a == "--fresh-fences") o.fresh_fences = true;
        else if (a == "--churn-device") o.churn_device = true;
        else if (a == "--churn") o.churn = uint32_t(std::min<uint64_t>(number(i), 256));
        else if (a == "--churn-kib") o.churn_kib = uint32_t(std::max<uint64_t>(16, std::min<uint64_t>(number(i), 65536)));
        else if (a == "--churn-rounds") o.churn_rounds = uint32_t(std::max<uint64_t>(1, std::min<uint64_t>(number(i), 1000)));
        else if (a == "--sleep-us") o.sleep_us = uint32_t(std::min<uint64_t>(number(i), 100000));
        else if (a == "--words") {
            kN = uint32_t(std::max<uint64_t>(64, std::min<uint64_t>(number(i), 1u << 24)));
            kBytes = VkDeviceSize(kN) * 4;
        }
        else if (a == "--submit" && i + 1 < argc) {
            const std::string v = argv[++i];
            if (v != "submit" && v != "submit2") usage(argv[0]);
            o.submit2 = v == "submit2";
        } else if (a == "--wait" && i + 1 < argc) {
            const std::string v = argv[++i];
            const std::map<std::string, WaitKind> kinds = {{"fence", WaitKind::Fence},         {"poll", WaitKind::Poll},
                                                           {"queue-idle", WaitKind::QueueIdle}, {"device-idle", WaitKind::DeviceIdle},
                                                           {"timeline", WaitKind::Timeline},   {"ring", WaitKind::Ring}};
            auto it = kinds.find(v);
            if (it == kinds.end()) usage(argv[0]);
            o.wait = it->second;
        } else {
            usage(argv[0]);
        }
    }
    return o;
}

vkapp::ContextOptions context_options() {
    vkapp::ContextOptions c;
    c.synchronization2 = true;
    c.timeline_semaphores = true;
    return c;
}

}  // namespace

int main(int argc, char** argv) {
    const Options o = parse(argc, argv);
    std::setvbuf(stdout, nullptr, _IOLBF, 0);
    {
        vkapp::Context ctx = vkapp::create_context("fault_app", context_options());
        bool correct = false;
        {
            Workload w(ctx, o);
            const bool ok = w.run(&correct);
            std::printf("first-error: %s%s%s\n", g_log.failed() ? g_log.first_call.c_str() : "none",
                        g_log.failed() ? " " : "", g_log.failed() ? result_name(g_log.first) : "");
            std::printf("results: %s\n", ok || !g_log.failed() ? (correct ? "correct" : "wrong") : "not-checked");
            if (g_log.first == VK_ERROR_DEVICE_LOST) w.probe_after_lost();
        }
        std::printf("retried: timeout=%u not-ready=%u\n", g_log.timeouts, g_log.not_ready);
        std::printf("app-calls:");
        for (const auto& [fn, n] : g_log.calls) std::printf(" %s=%u", fn.c_str(), n);
        std::printf("\n");
        vkapp::destroy_context(ctx);
    }
    // A new device in the same process: no fault reaches it, and it must work.
    g_log = Log{};
    g_log.counting = false;
    Options clean = o;
    clean.wait = WaitKind::Fence;
    clean.wait_every = 0;
    clean.timeout_ns = UINT64_MAX;
    clean.sleep_us = 0;
    vkapp::Context ctx = vkapp::create_context("fault_app (next device)", context_options());
    bool correct = false;
    {
        Workload w(ctx, clean);
        w.run(&correct);
    }
    if (g_log.failed()) std::printf("next-device: error %s %s\n", g_log.first_call.c_str(), result_name(g_log.first));
    else std::printf("next-device: %s\n", correct ? "correct" : "wrong");
    vkapp::destroy_context(ctx);
    return 0;
}
