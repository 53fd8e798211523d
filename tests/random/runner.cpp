#include "runner.h"

#include "hazards.h"
#include "vk_app.h"

#include "rnd_accum_comp.h"
#include "rnd_atomic_comp.h"
#include "rnd_mix_comp.h"

#include <chrono>
#include <cstdarg>
#include <cstring>
#include <map>
#include <thread>
#include <tuple>
#include <vector>

namespace rnd {
namespace {

constexpr uint64_t kWaitTimeoutNs = 20ull * 1000 * 1000 * 1000;
constexpr VkMemoryPropertyFlags kCoherent =
    VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
constexpr VkBufferUsageFlags kUsage =
    VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;

struct PushConstants {
    uint32_t n, salt, stride, rounds;
};

// What a recorded command buffer did to the model, replayed into it at a resubmission.
struct Item {
    enum Type { access, barrier, host_barrier } type;
    int slot = -1;
    uint8_t stage = 0;
    bool write = false;
    bool global = false;
    std::vector<int> slots;
    uint8_t src = 0;
};

struct Cb {
    VkCommandBuffer primary = VK_NULL_HANDLE, secondary = VK_NULL_HANDLE;
    enum State { idle, recording, ended, submitted } state = idle;
    int queue = -1;
    bool reusable = false, wrapped = false;
    std::vector<Item> items;
    std::vector<std::pair<int, uint32_t>> uses;  // (slot, generation)
    std::vector<VkEvent> events;
    std::vector<uint32_t> query_pairs;
    uint64_t end_pos = 0;        // the queue's position at its end (at its last submission)
    int last_sub = -1;
    VkCommandBuffer rec() const { return wrapped ? secondary : primary; }
};

struct Slot {
    vkapp::Buffer buf;
    SlotSpec spec;
    uint32_t gen = 0;
    bool alive = false;
    bool temp = false;  // a read-back buffer
};

struct SemWait {
    VkSemaphore sem;
    uint64_t value;  // 0: binary
    int from_queue;
    uint64_t pos;
};

struct Sub {
    int queue;
    uint64_t end_pos;
    VkFence fence = VK_NULL_HANDLE;
    uint64_t timeline_value = 0;
    std::vector<uint64_t> covers;  // per queue: what is complete once this is
};

struct QueueState {
    VkQueue queue = VK_NULL_HANDLE;
    int open = -1;
    std::vector<int> ended;
    VkSemaphore timeline = VK_NULL_HANDLE;
    uint64_t timeline_next = 1;
    uint64_t submitted_pos = 0;
    std::vector<SemWait> pending_waits;
    int last_sub = -1;
    // The signal of `timeline` that the 1.3.239 validation layer holds. It keeps a semaphore's
    // first signal until a device wait on it is submitted (host waits do not count), ignores
    // the signals made meanwhile, and pairs that wait with the one it kept, whatever values
    // they name (tests/random/syncval_timeline.cpp shows it). So a device wait names only this
    // value, one wait at most claims it, and none is held once that wait is submitted. 0: none.
    uint64_t held_value = 0;
    uint64_t held_pos = 0;  // the queue's position the held signal covers
    bool held_claimed = false;  // a wait for it is pending on some queue
};

enum class SignalKind { none, binary, timeline };

class Runner {
public:
    // With `shared`, the program runs on that context's device (run_batch) and leaves it open.
    Runner(const Program& program, const RunOptions& options, vkapp::Context* shared = nullptr)
        : program_(program), opt_(options), shared_(shared != nullptr), ctx_(shared ? *shared : own_ctx_) {}
    int run();
    uint64_t digest() const { return digest_; }

private:
    // --- set-up ---
    void create_device();
    void create_pipelines();
    int new_slot(const SlotSpec& spec, bool temp);
    void alloc_slot(int s, int queue);
    void free_slot(int s);
    // --- logging and digest ---
    void log(const char* fmt, ...) __attribute__((format(printf, 2, 3)));
    void digest_bytes(const char* what, int slot, const void* data, size_t size);
    // --- recording ---
    Cb& open_cb(int q);
    void end_cb(int q);
    void gpu_command(int q, std::vector<std::tuple<int, uint8_t, bool>> accesses);
    void emit_barrier(int q, const std::vector<int>& slots, bool force_global);
    void record_full_barrier(VkCommandBuffer cb, bool v2);
    void emit_host_barrier(int q);
    void note_access(int q, int slot, uint8_t stage, bool write);
    void need_cross(int q, int slot, bool write);
    // --- submission and waits ---
    void submit(int q, bool end_open, SignalKind signal, SemWait* out_wait, bool force_fence = false);
    void flush_to(int p, uint64_t pos);
    void signal_for(int p, uint64_t pos, std::vector<SemWait>& waits);
    void host_wait(int p, uint64_t pos, bool fence_first = false);
    void complete_sub(int sub);
    void wait_fence(VkFence f, bool poll);
    VkFence get_fence();
    void recycle_fence(VkFence f);
    // --- actions ---
    void lower(const Action& a, uint32_t index);
    void do_dispatch(int q);
    void do_copy(int q);
    void do_fill(int q);
    void do_update(int q, int slot, bool whole);
    void do_timestamp(int q);
    void do_host_read(int slot, const char* what);
    void do_host_write(int slot, bool whole);
    void do_read_back(int slot);
    void do_resubmit();
    int pick_resubmittable();     // a reusable command buffer that completed, or -1
    int record_kernel(int q);     // --repeat-resubmits: a new one of dispatches only, submitted
    bool force_reusable_ = false;  // ... open_cb makes a reusable command buffer, unwrapped
    void resubmit(int id, int q);  // submits it again on queue q
    int pick_slot(bool host_only = false);
    void make_host_safe(int slot, bool for_write);
    void finale();
    void release_held_signals();
    [[noreturn]] void hang(const char* what);

    const Program& program_;
    const RunOptions& opt_;
    Rng rng_{0};
    vkapp::Context own_ctx_;
    const bool shared_;
    vkapp::Context& ctx_;
    bool sync2_ = false;
    bool timestamps_ = false;
    PFN_vkCmdPushDescriptorSetKHR push_descriptor_ = nullptr;
    vkapp::ComputePipeline pipes_[3];
    VkDescriptorSetLayout push_layouts_[3] = {};
    VkPipelineLayout push_pipe_layouts_[3] = {};
    VkPipeline push_pipes_[3] = {};
    VkDescriptorPool dpool_ = VK_NULL_HANDLE;
    std::map<std::tuple<int, int, uint32_t, int, uint32_t>, VkDescriptorSet> sets_;
    VkCommandPool cmd_pool_ = VK_NULL_HANDLE;
    VkQueryPool query_pool_ = VK_NULL_HANDLE;
    uint32_t query_pairs_used_ = 0, query_capacity_ = 0;
    std::vector<bool> pair_submitted_;
    std::vector<Slot> slots_;
    std::vector<Cb> cbs_;
    std::vector<Sub> subs_;
    std::vector<QueueState> queues_;
    HazardModel* model_ = nullptr;
    std::vector<VkFence> free_fences_;
    std::vector<VkFence> all_fences_;
    std::vector<VkSemaphore> binaries_;
    uint64_t digest_ = 1469598103934665603ull;
    uint32_t reads_ = 0;
    FILE* dump_ = nullptr;
    int cur_queue_ = 0;
    std::string step_;
};

void Runner::log(const char* fmt, ...) {
    if (!opt_.print) return;
    std::printf("%s ", step_.c_str());
    va_list ap;
    va_start(ap, fmt);
    std::vprintf(fmt, ap);
    va_end(ap);
    std::printf("\n");
}

void Runner::hang(const char* what) {
    std::fflush(stdout);
    std::fprintf(stderr, "random_program: %s did not finish within %llu s (a hang)\n", what,
                 static_cast<unsigned long long>(kWaitTimeoutNs / 1000000000ull));
    std::fflush(stderr);
    std::_Exit(3);
}

void Runner::digest_bytes(const char* what, int slot, const void* data, size_t size) {
    const uint32_t header[3] = {reads_, uint32_t(slot), uint32_t(size)};
    digest_ = vkapp::fnv1a(header, sizeof(header), digest_);
    digest_ = vkapp::fnv1a(data, size, digest_);
    log("host reads %s slot %d (%zu bytes), digest %016llx", what, slot, size,
        static_cast<unsigned long long>(digest_));
    if (dump_) {
        std::fprintf(dump_, "read %u %s slot %d bytes %zu\n", reads_, what, slot, size);
        std::fwrite(data, 1, size, dump_);
        std::fprintf(dump_, "\n");
    }
    ++reads_;
}

// ---------------------------------------------------------------- set-up

vkapp::Context open_context(const RunOptions& options) {
    vkapp::ContextOptions o;
    o.synchronization2 = true;
    o.timeline_semaphores = true;
    o.queue_count = options.queues;
    o.optional_device_extensions = {VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME};
    return vkapp::create_context("random_program", o);
}

void Runner::create_device() {
    if (!shared_) ctx_ = open_context(opt_);
    sync2_ = true;
    if (ctx_.has_device_extension(VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME))
        push_descriptor_ = reinterpret_cast<PFN_vkCmdPushDescriptorSetKHR>(
            vkGetDeviceProcAddr(ctx_.device, "vkCmdPushDescriptorSetKHR"));
    timestamps_ = ctx_.queue_family_properties.timestampValidBits > 0 &&
                  ctx_.properties.limits.timestampComputeAndGraphics;
    for (size_t i = 0; i < ctx_.queues.size(); ++i) {
        QueueState qs;
        qs.queue = ctx_.queues[i];
        qs.timeline = vkapp::create_timeline_semaphore(ctx_, 0);
        queues_.push_back(qs);
    }
    // --share-queues on a device with fewer queues than asked (lavapipe has one): the others
    // share its last queue. Their handoffs (binary and timeline semaphores, the signal always
    // submitted first) then run on one VkQueue, which orders more than the model assumes but
    // still takes every path a layer has for them.
    const size_t real = queues_.size();
    while (opt_.share_queues && queues_.size() < opt_.queues) {
        QueueState qs;
        qs.queue = queues_[real - 1].queue;
        qs.timeline = vkapp::create_timeline_semaphore(ctx_, 0);
        queues_.push_back(qs);
    }
    std::printf("random_program: seed %llu, %zu actions, %zu queue(s) (%zu shared), synchronization2 %s, push "
                "descriptors %s, timestamps %s\n",
                static_cast<unsigned long long>(opt_.seed), program_.actions.size(), queues_.size(),
                queues_.size() - real, sync2_ ? "yes" : "no", push_descriptor_ ? "yes" : "no",
                timestamps_ ? "yes" : "no");
    VkCommandPoolCreateInfo ci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    ci.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    ci.queueFamilyIndex = ctx_.queue_family;
    VK_CHECK(vkCreateCommandPool(ctx_.device, &ci, nullptr, &cmd_pool_));
    if (timestamps_) {
        query_capacity_ = 2 * uint32_t(program_.actions.size()) + 2;
        VkQueryPoolCreateInfo qi{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
        qi.queryType = VK_QUERY_TYPE_TIMESTAMP;
        qi.queryCount = query_capacity_;
        VK_CHECK(vkCreateQueryPool(ctx_.device, &qi, nullptr, &query_pool_));
    }
    const uint32_t sets = uint32_t(program_.actions.size()) + 8;
    VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 2 * sets};
    VkDescriptorPoolCreateInfo dpi{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    dpi.maxSets = sets;
    dpi.poolSizeCount = 1;
    dpi.pPoolSizes = &size;
    VK_CHECK(vkCreateDescriptorPool(ctx_.device, &dpi, nullptr, &dpool_));
}

void Runner::create_pipelines() {
    const uint32_t* code[3] = {rnd_mix_comp, rnd_accum_comp, rnd_atomic_comp};
    const size_t size[3] = {sizeof(rnd_mix_comp), sizeof(rnd_accum_comp), sizeof(rnd_atomic_comp)};
    for (int i = 0; i < 3; ++i) {
        pipes_[i] = vkapp::create_compute_pipeline(ctx_, code[i], size[i], 2, sizeof(PushConstants));
        if (!push_descriptor_) continue;
        VkDescriptorSetLayoutBinding b[2] = {};
        for (uint32_t j = 0; j < 2; ++j) {
            b[j].binding = j;
            b[j].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
            b[j].descriptorCount = 1;
            b[j].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
        }
        VkDescriptorSetLayoutCreateInfo dl{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
        dl.flags = VK_DESCRIPTOR_SET_LAYOUT_CREATE_PUSH_DESCRIPTOR_BIT_KHR;
        dl.bindingCount = 2;
        dl.pBindings = b;
        VK_CHECK(vkCreateDescriptorSetLayout(ctx_.device, &dl, nullptr, &push_layouts_[i]));
        VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(PushConstants)};
        VkPipelineLayoutCreateInfo pl{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
        pl.setLayoutCount = 1;
        pl.pSetLayouts = &push_layouts_[i];
        pl.pushConstantRangeCount = 1;
        pl.pPushConstantRanges = &range;
        VK_CHECK(vkCreatePipelineLayout(ctx_.device, &pl, nullptr, &push_pipe_layouts_[i]));
        VkShaderModule module = vkapp::create_shader_module(ctx_, code[i], size[i]);
        VkComputePipelineCreateInfo cp{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
        cp.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
        cp.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
        cp.stage.module = module;
        cp.stage.pName = "main";
        cp.layout = push_pipe_layouts_[i];
        VK_CHECK(vkCreateComputePipelines(ctx_.device, VK_NULL_HANDLE, 1, &cp, nullptr, &push_pipes_[i]));
        vkDestroyShaderModule(ctx_.device, module, nullptr);
    }
}

int Runner::new_slot(const SlotSpec& spec, bool temp) {
    Slot s;
    s.spec = spec;
    s.temp = temp;
    slots_.push_back(s);
    return int(slots_.size()) - 1;
}

// Allocates slot s's buffer and gives it defined contents: the host writes a host-visible
// one, an update on queue `queue` a device-local one (fresh memory's contents are undefined,
// and a layer that recycles memory hands out other bytes than the driver).
void Runner::alloc_slot(int s, int queue) {
    Slot& sl = slots_[size_t(s)];
    VkMemoryPropertyFlags flags = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
    if (sl.spec.host_visible) {
        flags = kCoherent;
        if (sl.spec.cached) {
            const VkMemoryPropertyFlags want = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
            for (uint32_t i = 0; i < ctx_.memory_properties.memoryTypeCount; ++i)
                if ((ctx_.memory_properties.memoryTypes[i].propertyFlags & want) == want) flags = want;
        }
    }
    sl.buf = vkapp::create_buffer(ctx_, VkDeviceSize(sl.spec.words) * 4, kUsage, flags);
    sl.alive = true;
    ++sl.gen;
    log("allocate slot %d: %u words, %s", s, sl.spec.words,
        sl.spec.host_visible ? (sl.spec.cached ? "host-visible cached" : "host-visible coherent") : "device-local");
    if (sl.temp) return;
    if (sl.spec.host_visible) {
        do_host_write(s, true);
    } else {
        do_update(queue, s, true);
    }
}

void Runner::free_slot(int s) {
    Slot& sl = slots_[size_t(s)];
    make_host_safe(s, true);
    if (sl.buf.mapped && rng_.chance(50)) {
        vkUnmapMemory(ctx_.device, sl.buf.memory);
        sl.buf.mapped = nullptr;
    }
    vkapp::destroy_buffer(ctx_, sl.buf);
    sl.alive = false;
    log("free slot %d", s);
}

// ---------------------------------------------------------------- recording

Cb& Runner::open_cb(int q) {
    QueueState& qs = queues_[size_t(q)];
    if (qs.open >= 0) return cbs_[size_t(qs.open)];
    // A command buffer whose work completed may be recorded again (reset explicitly or by
    // vkBeginCommandBuffer); else a new one.
    std::vector<int> retired;
    for (size_t i = 0; i < cbs_.size(); ++i) {
        const Cb& c = cbs_[i];
        if (c.state == Cb::submitted && c.end_pos <= model_->done(subs_[size_t(c.last_sub)].queue))
            retired.push_back(int(i));
    }
    int id;
    if (!retired.empty() && rng_.chance(60)) {
        id = retired[rng_.below(uint32_t(retired.size()))];
        Cb& c = cbs_[size_t(id)];
        if (rng_.chance(50)) {
            const VkCommandBufferResetFlags f = rng_.chance(30) ? VK_COMMAND_BUFFER_RESET_RELEASE_RESOURCES_BIT : 0;
            VK_CHECK(vkResetCommandBuffer(c.primary, f));
            if (c.secondary) VK_CHECK(vkResetCommandBuffer(c.secondary, f));
            log("reset command buffer %d", id);
        }
        for (VkEvent e : c.events) vkDestroyEvent(ctx_.device, e, nullptr);
        c.events.clear();
    } else {
        cbs_.push_back(Cb{});
        id = int(cbs_.size()) - 1;
        VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
        ai.commandPool = cmd_pool_;
        ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
        ai.commandBufferCount = 1;
        VK_CHECK(vkAllocateCommandBuffers(ctx_.device, &ai, &cbs_.back().primary));
    }
    Cb& c = cbs_[size_t(id)];
    c.state = Cb::recording;
    c.queue = q;
    c.items.clear();
    c.uses.clear();
    c.query_pairs.clear();
    c.reusable = force_reusable_ || rng_.chance(25);
    c.wrapped = !force_reusable_ && rng_.chance(12);
    if (c.wrapped && !c.secondary) {
        VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
        ai.commandPool = cmd_pool_;
        ai.level = VK_COMMAND_BUFFER_LEVEL_SECONDARY;
        ai.commandBufferCount = 1;
        VK_CHECK(vkAllocateCommandBuffers(ctx_.device, &ai, &c.secondary));
    }
    VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    bi.flags = c.reusable ? 0 : VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    VK_CHECK(vkBeginCommandBuffer(c.primary, &bi));
    if (c.wrapped) {
        VkCommandBufferInheritanceInfo inh{VK_STRUCTURE_TYPE_COMMAND_BUFFER_INHERITANCE_INFO};
        VkCommandBufferBeginInfo sbi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
        sbi.flags = bi.flags;
        sbi.pInheritanceInfo = &inh;
        VK_CHECK(vkBeginCommandBuffer(c.secondary, &sbi));
    }
    qs.open = id;
    log("begin command buffer %d on queue %d%s%s", id, q, c.reusable ? ", reusable" : ", one-time",
        c.wrapped ? ", its commands in a secondary" : "");
    if (c.reusable || c.wrapped) {
        // A reusable command buffer opens with a full barrier (a naive runtime's habit), so that
        // it is valid wherever it is submitted again. A secondary's work gets one in its
        // primary, in front of vkCmdExecuteCommands: the 1.3.239 validation layer does not
        // apply barriers recorded in a secondary to accesses made before it (a valid program
        // with such a barrier is reported as a hazard without any layer), so the barriers inside
        // a secondary only ever order its own commands.
        const bool v2 = sync2_ && rng_.chance(50);
        record_full_barrier(c.primary, v2);
        model_->barrier(q, true, {}, kAllStages);
        Item it{Item::barrier};
        it.global = true;
        it.src = kAllStages;
        c.items.push_back(it);
        log("  full barrier (ALL_COMMANDS, %s)", v2 ? "vkCmdPipelineBarrier2" : "vkCmdPipelineBarrier");
    }
    return c;
}

void Runner::end_cb(int q) {
    QueueState& qs = queues_[size_t(q)];
    if (qs.open < 0) return;
    Cb& c = cbs_[size_t(qs.open)];
    if (c.wrapped) {
        VK_CHECK(vkEndCommandBuffer(c.secondary));
        vkCmdExecuteCommands(c.primary, 1, &c.secondary);
    }
    VK_CHECK(vkEndCommandBuffer(c.primary));
    c.state = Cb::ended;
    c.end_pos = model_->mark(q);
    qs.ended.push_back(qs.open);
    log("end command buffer %d", qs.open);
    qs.open = -1;
}

void Runner::record_full_barrier(VkCommandBuffer cb, bool v2) {
    if (v2) {
        VkMemoryBarrier2 mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER_2};
        mb.srcStageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT;
        mb.srcAccessMask = VK_ACCESS_2_MEMORY_WRITE_BIT;
        mb.dstStageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT;
        mb.dstAccessMask = VK_ACCESS_2_MEMORY_READ_BIT | VK_ACCESS_2_MEMORY_WRITE_BIT;
        VkDependencyInfo di{VK_STRUCTURE_TYPE_DEPENDENCY_INFO};
        di.memoryBarrierCount = 1;
        di.pMemoryBarriers = &mb;
        vkCmdPipelineBarrier2(cb, &di);
    } else {
        vkapp::barrier(cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_ACCESS_MEMORY_WRITE_BIT,
                       VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT);
    }
}

namespace {
VkPipelineStageFlags stages1(uint8_t s) {
    VkPipelineStageFlags f = 0;
    if (s & kCompute) f |= VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT;
    if (s & kTransfer) f |= VK_PIPELINE_STAGE_TRANSFER_BIT;
    return f;
}
VkAccessFlags writes1(uint8_t s) {
    VkAccessFlags f = 0;
    if (s & kCompute) f |= VK_ACCESS_SHADER_WRITE_BIT;
    if (s & kTransfer) f |= VK_ACCESS_TRANSFER_WRITE_BIT;
    return f;
}
constexpr VkAccessFlags kDstAccess1 =
    VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
}  // namespace

// A barrier on q's open command buffer: for `slots` (the buffers a command conflicts on; empty
// for a barrier nothing needs), in a random form: either version, global or per buffer, with
// named stages or ALL_COMMANDS, or an event set and waited at once.
void Runner::emit_barrier(int q, const std::vector<int>& needed, bool force_global) {
    Cb& c = open_cb(q);
    VkCommandBuffer cb = c.rec();
    std::vector<int> slots = needed;
    if (slots.empty()) {
        const int s = pick_slot();
        if (s >= 0) slots.push_back(s);
    }
    const uint32_t form = rng_.below(sync2_ ? 8 : 4);  // 0-3 version 1, 4-7 version 2
    const bool v2 = form >= 4;
    uint32_t shape = form % 4;  // 0 global named, 1 global ALL_COMMANDS, 2 buffers, 3 event
    // No events in secondary command buffers: the 1.3.239 validation layer loses the stage mask
    // of a vkCmdSetEvent recorded there and reports every wait on it (VUID-vkCmdWaitEvents-
    // srcStageMask-parameter; KhronosGroup/Vulkan-ValidationLayers#4544), without any layer.
    if (shape == 3 && c.wrapped) shape = 0;
    const bool all = shape == 1 || (shape != 0 && rng_.chance(40));
    const bool global = force_global || shape != 2 || slots.empty();
    uint8_t src = 0;
    if (global) {
        src = model_->unsynced_stages(q);
    } else {
        for (int s : slots) src |= model_->unsynced_stages(q, s);
    }
    if (all || src == 0) src = kAllStages;
    const VkPipelineStageFlags src1 = all ? VkPipelineStageFlags(VK_PIPELINE_STAGE_ALL_COMMANDS_BIT) : stages1(src);
    const VkPipelineStageFlags dst1 = all ? VkPipelineStageFlags(VK_PIPELINE_STAGE_ALL_COMMANDS_BIT) : stages1(kAllStages);
    const VkAccessFlags srca1 = all ? VkAccessFlags(VK_ACCESS_MEMORY_WRITE_BIT) : writes1(src);
    const VkAccessFlags dsta1 = all ? (VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT) : kDstAccess1;
    // Version 2 masks share version 1's bit values for these stages and accesses.
    VkMemoryBarrier2 mb2{VK_STRUCTURE_TYPE_MEMORY_BARRIER_2};
    mb2.srcStageMask = src1;
    mb2.srcAccessMask = srca1;
    mb2.dstStageMask = dst1;
    mb2.dstAccessMask = dsta1;
    std::vector<VkBufferMemoryBarrier> bb1;
    std::vector<VkBufferMemoryBarrier2> bb2;
    if (!global) {
        for (int s : slots) {
            VkBufferMemoryBarrier b{VK_STRUCTURE_TYPE_BUFFER_MEMORY_BARRIER};
            b.srcAccessMask = srca1;
            b.dstAccessMask = dsta1;
            b.srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
            b.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
            b.buffer = slots_[size_t(s)].buf.buffer;
            b.offset = 0;
            b.size = VK_WHOLE_SIZE;
            bb1.push_back(b);
            VkBufferMemoryBarrier2 b2{VK_STRUCTURE_TYPE_BUFFER_MEMORY_BARRIER_2};
            b2.srcStageMask = src1;
            b2.srcAccessMask = srca1;
            b2.dstStageMask = dst1;
            b2.dstAccessMask = dsta1;
            b2.srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
            b2.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
            b2.buffer = b.buffer;
            b2.offset = 0;
            b2.size = VK_WHOLE_SIZE;
            bb2.push_back(b2);
        }
    }
    VkDependencyInfo di{VK_STRUCTURE_TYPE_DEPENDENCY_INFO};
    if (global) {
        di.memoryBarrierCount = 1;
        di.pMemoryBarriers = &mb2;
    } else {
        di.bufferMemoryBarrierCount = uint32_t(bb2.size());
        di.pBufferMemoryBarriers = bb2.data();
    }
    VkMemoryBarrier mb1{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    mb1.srcAccessMask = srca1;
    mb1.dstAccessMask = dsta1;
    if (shape == 3) {
        VkEventCreateInfo ei{VK_STRUCTURE_TYPE_EVENT_CREATE_INFO};
        VkEvent e;
        VK_CHECK(vkCreateEvent(ctx_.device, &ei, nullptr, &e));
        c.events.push_back(e);
        if (v2) {
            vkCmdSetEvent2(cb, e, &di);
            vkCmdWaitEvents2(cb, 1, &e, &di);
        } else {
            vkCmdSetEvent(cb, e, src1);
            vkCmdWaitEvents(cb, 1, &e, src1, dst1, 1, &mb1, 0, nullptr, 0, nullptr);
        }
    } else if (v2) {
        vkCmdPipelineBarrier2(cb, &di);
    } else if (global) {
        vkCmdPipelineBarrier(cb, src1, dst1, 0, 1, &mb1, 0, nullptr, 0, nullptr);
    } else {
        vkCmdPipelineBarrier(cb, src1, dst1, 0, 0, nullptr, uint32_t(bb1.size()), bb1.data(), 0, nullptr);
    }
    model_->barrier(q, global, slots, src);
    if (!global)
        for (int s : slots) c.uses.push_back({s, slots_[size_t(s)].gen});
    Item it{Item::barrier};
    it.global = global;
    it.slots = slots;
    it.src = src;
    c.items.push_back(it);
    log("  %s %s%s (%s)", shape == 3 ? "event set+wait" : "barrier", v2 ? "v2 " : "",
        global ? "global" : "per buffer", all ? "ALL_COMMANDS" : "named stages");
}

void Runner::emit_host_barrier(int q) {
    Cb& c = open_cb(q);
    if (sync2_ && rng_.chance(50)) {
        VkMemoryBarrier2 mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER_2};
        mb.srcStageMask = rng_.chance(50) ? VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT
                                          : (VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_2_TRANSFER_BIT);
        mb.srcAccessMask = VK_ACCESS_2_SHADER_WRITE_BIT | VK_ACCESS_2_TRANSFER_WRITE_BIT;
        mb.dstStageMask = VK_PIPELINE_STAGE_2_HOST_BIT;
        mb.dstAccessMask = VK_ACCESS_2_HOST_READ_BIT;
        VkDependencyInfo di{VK_STRUCTURE_TYPE_DEPENDENCY_INFO};
        di.memoryBarrierCount = 1;
        di.pMemoryBarriers = &mb;
        vkCmdPipelineBarrier2(c.rec(), &di);
    } else {
        vkapp::barrier(c.rec(),
                       rng_.chance(50) ? VK_PIPELINE_STAGE_ALL_COMMANDS_BIT
                                       : (VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT),
                       VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT,
                       VK_ACCESS_HOST_READ_BIT);
    }
    model_->host_barrier(q);
    c.items.push_back(Item{Item::host_barrier});
    log("  barrier to HOST");
}

// q's next submission waits, through a semaphore, for p's work that an access (slot, write)
// on q conflicts with.
void Runner::need_cross(int q, int slot, bool write) {
    for (int p = 0; p < int(queues_.size()); ++p) {
        if (p == q) continue;
        const uint64_t pos = model_->cross_needed(q, p, slot, write);
        if (!pos) continue;
        std::vector<SemWait> waits;
        signal_for(p, pos, waits);
        for (const SemWait& w : waits) {
            queues_[size_t(q)].pending_waits.push_back(w);
            model_->waited(q, p, w.pos);
            log("  queue %d will wait for queue %d up to %llu (%s semaphore%s)", q, p,
                static_cast<unsigned long long>(w.pos), w.value ? "timeline" : "binary",
                w.pos < pos ? ", only to release the held signal" : "");
        }
    }
}

void Runner::note_access(int q, int slot, uint8_t stage, bool write) {
    model_->access(q, slot, stage, write);
    Cb& c = cbs_[size_t(queues_[size_t(q)].open)];
    Item it{Item::access};
    it.slot = slot;
    it.stage = stage;
    it.write = write;
    c.items.push_back(it);
    c.uses.push_back({slot, slots_[size_t(slot)].gen});
}

// Before a command with these accesses (slot, stage, write) on q: semaphore waits for the other
// queue's conflicting work, a barrier for this queue's.
void Runner::gpu_command(int q, std::vector<std::tuple<int, uint8_t, bool>> accesses) {
    open_cb(q);
    for (auto& [slot, stage, write] : accesses) need_cross(q, slot, write);
    std::vector<int> conflicts;
    for (auto& [slot, stage, write] : accesses)
        if (model_->conflict_stages(q, slot, write)) conflicts.push_back(slot);
    if (!conflicts.empty()) emit_barrier(q, conflicts, false);
}

// ---------------------------------------------------------------- submission and waits

VkFence Runner::get_fence() {
    if (!free_fences_.empty() && rng_.chance(60)) {
        VkFence f = free_fences_.back();
        free_fences_.pop_back();
        VK_CHECK(vkResetFences(ctx_.device, 1, &f));
        return f;
    }
    VkFenceCreateInfo fi{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VkFence f;
    VK_CHECK(vkCreateFence(ctx_.device, &fi, nullptr, &f));
    all_fences_.push_back(f);
    return f;
}

// A fence seen signaled: reused later (after a reset) or destroyed.
void Runner::recycle_fence(VkFence f) {
    if (rng_.chance(25)) {
        vkDestroyFence(ctx_.device, f, nullptr);
        for (VkFence& g : all_fences_)
            if (g == f) g = VK_NULL_HANDLE;
    } else {
        free_fences_.push_back(f);
    }
}

// Submits what q has recorded (ending its open command buffer first with `end_open`), in one
// vkQueueSubmit or vkQueueSubmit2 call of one to three batches, the queue's pending semaphore
// waits on the first, maybe a fence and a timeline signal, and the signal asked for.
void Runner::submit(int q, bool end_open, SignalKind signal, SemWait* out_wait, bool force_fence) {
    QueueState& qs = queues_[size_t(q)];
    if (end_open) end_cb(q);
    std::vector<int> cbs = qs.ended;
    qs.ended.clear();
    Sub sub;
    sub.queue = q;
    sub.covers.assign(queues_.size(), 0);
    if (qs.last_sub >= 0) sub.covers = subs_[size_t(qs.last_sub)].covers;
    uint64_t end_pos = qs.submitted_pos;
    for (int id : cbs) end_pos = std::max(end_pos, cbs_[size_t(id)].end_pos);
    sub.end_pos = end_pos;
    sub.covers[size_t(q)] = end_pos;
    std::vector<SemWait> waits = qs.pending_waits;
    qs.pending_waits.clear();
    for (const SemWait& w : waits) {
        if (!w.value) continue;
        QueueState& from = queues_[size_t(w.from_queue)];
        if (from.held_value != w.value || !from.held_claimed) {
            std::fprintf(stderr, "random_program: internal error: a timeline wait for %llu that the validation "
                                 "layer would not pair with its signal\n", static_cast<unsigned long long>(w.value));
            std::exit(4);
        }
        from.held_value = 0;
        from.held_claimed = false;
    }
    for (const SemWait& w : waits) sub.covers[size_t(w.from_queue)] = std::max(sub.covers[size_t(w.from_queue)], w.pos);
    const bool use_fence = force_fence || rng_.chance(45);
    const bool use_timeline = signal == SignalKind::timeline || rng_.chance(20);
    if (use_fence) sub.fence = get_fence();
    std::vector<std::pair<VkSemaphore, uint64_t>> signals;
    if (use_timeline) {
        sub.timeline_value = qs.timeline_next++;
        signals.push_back({qs.timeline, sub.timeline_value});
        if (!qs.held_value) {
            qs.held_value = sub.timeline_value;
            qs.held_pos = end_pos;
        }
    }
    if (signal == SignalKind::binary) {
        VkSemaphore s;
        VkSemaphoreCreateInfo ci{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
        VK_CHECK(vkCreateSemaphore(ctx_.device, &ci, nullptr, &s));
        binaries_.push_back(s);
        signals.push_back({s, 0});
        if (out_wait) *out_wait = {s, 0, q, end_pos};
    } else if (signal == SignalKind::timeline && out_wait) {
        *out_wait = {qs.timeline, sub.timeline_value, q, end_pos};
    }
    // Batches: the command buffers split in one to three runs (at least one batch).
    uint32_t batches = cbs.empty() ? 1 : 1 + rng_.below(std::min<uint32_t>(3, uint32_t(cbs.size())));
    std::vector<std::vector<VkCommandBuffer>> runs(batches);
    for (size_t i = 0; i < cbs.size(); ++i) {
        const size_t b = std::min<size_t>(batches - 1, i * batches / cbs.size());
        runs[b].push_back(cbs_[size_t(cbs[i])].primary);
    }
    const bool all_commands_wait = rng_.chance(50);
    const VkPipelineStageFlags wait_stage = all_commands_wait
                                                ? VK_PIPELINE_STAGE_ALL_COMMANDS_BIT
                                                : (VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT);
    const bool v2 = sync2_ && rng_.chance(40);
    // An empty call with only a fence is valid too (vkQueueSubmit with no batch).
    const bool no_batch = !v2 && cbs.empty() && waits.empty() && signals.empty() && use_fence && rng_.chance(50);
    if (no_batch) {
        VK_CHECK(vkQueueSubmit(qs.queue, 0, nullptr, sub.fence));
    } else if (v2) {
        std::vector<VkSubmitInfo2> infos(batches, VkSubmitInfo2{VK_STRUCTURE_TYPE_SUBMIT_INFO_2});
        std::vector<std::vector<VkCommandBufferSubmitInfo>> cbi(batches);
        std::vector<VkSemaphoreSubmitInfo> wi, si;
        for (const SemWait& w : waits) {
            VkSemaphoreSubmitInfo s{VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO};
            s.semaphore = w.sem;
            s.value = w.value;
            s.stageMask = wait_stage;
            wi.push_back(s);
        }
        for (auto& [sem, value] : signals) {
            VkSemaphoreSubmitInfo s{VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO};
            s.semaphore = sem;
            s.value = value;
            s.stageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT;
            si.push_back(s);
        }
        for (uint32_t b = 0; b < batches; ++b) {
            for (VkCommandBuffer cb : runs[b]) {
                VkCommandBufferSubmitInfo c{VK_STRUCTURE_TYPE_COMMAND_BUFFER_SUBMIT_INFO};
                c.commandBuffer = cb;
                cbi[b].push_back(c);
            }
            infos[b].commandBufferInfoCount = uint32_t(cbi[b].size());
            infos[b].pCommandBufferInfos = cbi[b].data();
        }
        infos[0].waitSemaphoreInfoCount = uint32_t(wi.size());
        infos[0].pWaitSemaphoreInfos = wi.data();
        infos[batches - 1].signalSemaphoreInfoCount = uint32_t(si.size());
        infos[batches - 1].pSignalSemaphoreInfos = si.data();
        VK_CHECK(vkQueueSubmit2(qs.queue, batches, infos.data(), sub.fence));
    } else {
        std::vector<VkSubmitInfo> infos(batches, VkSubmitInfo{VK_STRUCTURE_TYPE_SUBMIT_INFO});
        std::vector<VkSemaphore> wsem, ssem;
        std::vector<uint64_t> wval, sval;
        std::vector<VkPipelineStageFlags> wstage;
        bool any_timeline = false;
        for (const SemWait& w : waits) {
            wsem.push_back(w.sem);
            wval.push_back(w.value);
            wstage.push_back(wait_stage);
            any_timeline |= w.value != 0;
        }
        for (auto& [sem, value] : signals) {
            ssem.push_back(sem);
            sval.push_back(value);
            any_timeline |= value != 0;
        }
        for (uint32_t b = 0; b < batches; ++b) {
            infos[b].commandBufferCount = uint32_t(runs[b].size());
            infos[b].pCommandBuffers = runs[b].data();
        }
        infos[0].waitSemaphoreCount = uint32_t(wsem.size());
        infos[0].pWaitSemaphores = wsem.data();
        infos[0].pWaitDstStageMask = wstage.data();
        infos[batches - 1].signalSemaphoreCount = uint32_t(ssem.size());
        infos[batches - 1].pSignalSemaphores = ssem.data();
        // Timeline values ride in a VkTimelineSemaphoreSubmitInfo (binary entries ignored).
        std::vector<VkTimelineSemaphoreSubmitInfo> tl(batches, VkTimelineSemaphoreSubmitInfo{
                                                                   VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO});
        if (any_timeline) {
            tl[0].waitSemaphoreValueCount = uint32_t(wval.size());
            tl[0].pWaitSemaphoreValues = wval.data();
            tl[batches - 1].signalSemaphoreValueCount = uint32_t(sval.size());
            tl[batches - 1].pSignalSemaphoreValues = sval.data();
            infos[0].pNext = &tl[0];
            infos[batches - 1].pNext = &tl[batches - 1];
        }
        VK_CHECK(vkQueueSubmit(qs.queue, batches, infos.data(), sub.fence));
    }
    subs_.push_back(sub);
    const int sub_id = int(subs_.size()) - 1;
    qs.last_sub = sub_id;
    qs.submitted_pos = end_pos;
    for (int id : cbs) {
        Cb& c = cbs_[size_t(id)];
        c.state = Cb::submitted;
        c.last_sub = sub_id;
        c.end_pos = end_pos;
        for (uint32_t pair : c.query_pairs) pair_submitted_[pair] = true;
    }
    if (opt_.print) {
        std::string list;
        for (int id : cbs) list += " " + std::to_string(id);
        log("  %s on queue %d: %u batch(es), command buffers [%s ], %zu wait(s), %zu signal(s)%s -> submission %d",
            no_batch ? "vkQueueSubmit (no batch)" : v2 ? "vkQueueSubmit2" : "vkQueueSubmit", q, batches,
            list.c_str(), waits.size(), signals.size(), sub.fence ? ", fence" : "", sub_id);
    }
}

// p's work up to `pos` is submitted (ending and submitting what p has recorded if needed).
void Runner::flush_to(int p, uint64_t pos) {
    QueueState& qs = queues_[size_t(p)];
    if (pos > qs.submitted_pos) submit(p, true, SignalKind::none, nullptr);
}

// Waits (semaphore and value) for what p signals after its work up to `pos`: a new binary
// semaphore, or p's timeline where the validation layer would pair the wait with that very
// signal (QueueState::held_value). A held signal that does not cover `pos` gets a wait of its
// own (nobody needs it) so that it is released, and `pos` a binary semaphore.
void Runner::signal_for(int p, uint64_t pos, std::vector<SemWait>& waits) {
    QueueState& qs = queues_[size_t(p)];
    SignalKind kind = rng_.chance(50) ? SignalKind::timeline : SignalKind::binary;
    if (kind == SignalKind::timeline && qs.held_value) {
        if (!qs.held_claimed) {
            qs.held_claimed = true;
            waits.push_back({qs.timeline, qs.held_value, p, qs.held_pos});
            if (qs.held_pos >= pos) return;
        }
        kind = SignalKind::binary;
    }
    SemWait w{};
    const bool end_open = pos > qs.submitted_pos;
    submit(p, end_open, kind, &w);
    if (kind == SignalKind::timeline) qs.held_claimed = true;  // submit made it the held one
    waits.push_back(w);
}

void Runner::complete_sub(int id) {
    const Sub& s = subs_[size_t(id)];
    for (size_t q = 0; q < s.covers.size(); ++q) model_->completed(int(q), s.covers[q]);
}

void Runner::wait_fence(VkFence f, bool poll) {
    if (!poll) {
        const VkResult r = vkWaitForFences(ctx_.device, 1, &f, VK_TRUE, kWaitTimeoutNs);
        if (r == VK_TIMEOUT) hang("vkWaitForFences");
        VK_CHECK(r);
        return;
    }
    const auto start = std::chrono::steady_clock::now();
    for (;;) {
        const VkResult r = vkGetFenceStatus(ctx_.device, f);
        if (r == VK_SUCCESS) return;
        if (r != VK_NOT_READY) VK_CHECK(r);
        if (std::chrono::steady_clock::now() - start > std::chrono::nanoseconds(kWaitTimeoutNs))
            hang("polling vkGetFenceStatus");
        std::this_thread::yield();
    }
}

// The host waits until p's work up to `pos` (submitted) is complete, in a random way.
void Runner::host_wait(int p, uint64_t pos, bool fence_first) {
    if (pos <= model_->done(p)) return;
    flush_to(p, pos);
    QueueState& qs = queues_[size_t(p)];
    // 0-3 fence, 4-5 poll, 6-7 timeline, 8 queue idle, 9 device idle; `fence_first`: mostly 0-5
    const uint32_t how = fence_first && rng_.chance(80) ? rng_.below(6) : rng_.below(10);
    int target = -1;
    for (size_t i = 0; i < subs_.size(); ++i) {
        const Sub& s = subs_[i];
        if (s.queue != p || s.end_pos < pos) continue;
        if ((how <= 5 && s.fence) || ((how == 6 || how == 7) && s.timeline_value)) {
            target = int(i);
            break;
        }
    }
    if (how == 9) {
        const VkResult r = vkDeviceWaitIdle(ctx_.device);
        VK_CHECK(r);
        log("  vkDeviceWaitIdle");
        for (QueueState& other : queues_)
            if (other.last_sub >= 0) complete_sub(other.last_sub);
        for (Sub& s : subs_)
            if (s.fence) {
                recycle_fence(s.fence);
                s.fence = VK_NULL_HANDLE;
            }
        return;
    }
    if (how == 8) {
        VK_CHECK(vkQueueWaitIdle(qs.queue));
        log("  vkQueueWaitIdle(queue %d)", p);
        complete_sub(qs.last_sub);
        for (Sub& s : subs_)
            if (s.fence && s.queue == p) {
                recycle_fence(s.fence);
                s.fence = VK_NULL_HANDLE;
            }
        return;
    }
    if ((how == 6 || how == 7) && target >= 0) {
        const Sub& s = subs_[size_t(target)];
        auto wait = reinterpret_cast<PFN_vkWaitSemaphores>(vkGetDeviceProcAddr(ctx_.device, "vkWaitSemaphores"));
        const bool any = rng_.chance(30);
        const VkResult r = vkapp::wait_timelines(wait, ctx_.device, {{qs.timeline, s.timeline_value}}, any, kWaitTimeoutNs);
        if (r == VK_TIMEOUT) hang("vkWaitSemaphores");
        VK_CHECK(r);
        log("  vkWaitSemaphores(queue %d's timeline >= %llu)", p, static_cast<unsigned long long>(s.timeline_value));
        complete_sub(target);
        return;
    }
    if (target < 0 || how > 5) {
        // Nothing to wait on that way: a submission of only a fence, which signals once all
        // earlier work on the queue is complete.
        submit(p, false, SignalKind::none, nullptr, true);
        target = qs.last_sub;
    }
    Sub& s = subs_[size_t(target)];
    const bool poll = how == 4 || how == 5;
    wait_fence(s.fence, poll);
    log("  %s(submission %d)", poll ? "poll vkGetFenceStatus" : "vkWaitForFences", target);
    complete_sub(target);
    recycle_fence(s.fence);
    s.fence = VK_NULL_HANDLE;
}

// Before the host reads (for_write false) or writes / frees `slot`: barriers to HOST where a
// queue wrote it, then host waits.
void Runner::make_host_safe(int slot, bool for_write) {
    if (!for_write) {
        for (int p = 0; p < int(queues_.size()); ++p)
            if (model_->host_pending(p, slot) && model_->host_read_needs(p, slot)) emit_host_barrier(p);
    }
    for (int p = 0; p < int(queues_.size()); ++p) {
        const uint64_t pos = for_write ? model_->host_write_needs(p, slot) : model_->host_read_needs(p, slot);
        if (pos) host_wait(p, pos);
    }
}

// ---------------------------------------------------------------- actions

int Runner::pick_slot(bool host_only) {
    std::vector<int> c;
    for (size_t i = 0; i < slots_.size(); ++i)
        if (slots_[i].alive && !slots_[i].temp && (!host_only || slots_[i].spec.host_visible)) c.push_back(int(i));
    if (c.empty()) return -1;
    return c[rng_.below(uint32_t(c.size()))];
}

void Runner::do_dispatch(int q) {
    const int src = pick_slot();
    const int dst = pick_slot();
    if (src < 0 || dst < 0 || src == dst) return;
    const int shader = int(rng_.below(3));
    const uint32_t n = std::min(slots_[size_t(src)].spec.words, slots_[size_t(dst)].spec.words);
    PushConstants pc{n, rng_.below(1u << 30), 1 + rng_.below(97), 0};
    pc.rounds = shader == 2 ? 1 + rng_.below(std::min<uint32_t>(n, 64)) : rng_.below(4);
    const uint32_t groups = 1 + rng_.below(n / 64 + 1);
    const bool push = push_descriptor_ && rng_.chance(50);
    gpu_command(q, {{src, kCompute, false}, {dst, kCompute, true}});
    Cb& c = open_cb(q);
    VkCommandBuffer cb = c.rec();
    if (push) {
        vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, push_pipes_[shader]);
        VkDescriptorBufferInfo infos[2] = {{slots_[size_t(src)].buf.buffer, 0, VK_WHOLE_SIZE},
                                           {slots_[size_t(dst)].buf.buffer, 0, VK_WHOLE_SIZE}};
        VkWriteDescriptorSet w[2] = {};
        for (uint32_t i = 0; i < 2; ++i) {
            w[i].sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
            w[i].dstBinding = i;
            w[i].descriptorCount = 1;
            w[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
            w[i].pBufferInfo = &infos[i];
        }
        push_descriptor_(cb, VK_PIPELINE_BIND_POINT_COMPUTE, push_pipe_layouts_[shader], 0, 2, w);
        vkCmdPushConstants(cb, push_pipe_layouts_[shader], VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(pc), &pc);
    } else {
        const auto key = std::make_tuple(shader, src, slots_[size_t(src)].gen, dst, slots_[size_t(dst)].gen);
        auto it = sets_.find(key);
        if (it == sets_.end()) {
            VkDescriptorSetAllocateInfo ai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
            ai.descriptorPool = dpool_;
            ai.descriptorSetCount = 1;
            ai.pSetLayouts = &pipes_[shader].set_layout;
            VkDescriptorSet set;
            VK_CHECK(vkAllocateDescriptorSets(ctx_.device, &ai, &set));
            vkapp::write_storage_buffers(ctx_, set, {slots_[size_t(src)].buf.buffer, slots_[size_t(dst)].buf.buffer});
            it = sets_.emplace(key, set).first;
        }
        vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipes_[shader].pipeline);
        vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipes_[shader].layout, 0, 1, &it->second, 0,
                                nullptr);
        vkCmdPushConstants(cb, pipes_[shader].layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(pc), &pc);
    }
    vkCmdDispatch(cb, groups, 1, 1);
    note_access(q, src, kCompute, false);
    note_access(q, dst, kCompute, true);
    static const char* names[3] = {"mix", "accum", "atomic"};
    log("  dispatch %s slot %d -> slot %d, n %u, %u group(s), %s", names[shader], src, dst, n, groups,
        push ? "push descriptors" : "descriptor set");
}

void Runner::do_copy(int q) {
    const int src = pick_slot();
    const int dst = pick_slot();
    if (src < 0 || dst < 0 || src == dst) return;
    const uint32_t sw = slots_[size_t(src)].spec.words, dw = slots_[size_t(dst)].spec.words;
    const uint32_t regions = 1 + rng_.below(3);
    const uint32_t stripe = dw / regions;  // destination regions never overlap
    std::vector<VkBufferCopy> r;
    for (uint32_t i = 0; i < regions; ++i) {
        const uint32_t words = 1 + rng_.below(std::min(stripe, sw));
        const uint32_t so = rng_.below(sw - words + 1);
        const uint32_t doff = i * stripe + rng_.below(stripe - words + 1);
        r.push_back({VkDeviceSize(so) * 4, VkDeviceSize(doff) * 4, VkDeviceSize(words) * 4});
    }
    gpu_command(q, {{src, kTransfer, false}, {dst, kTransfer, true}});
    vkCmdCopyBuffer(open_cb(q).rec(), slots_[size_t(src)].buf.buffer, slots_[size_t(dst)].buf.buffer,
                    uint32_t(r.size()), r.data());
    note_access(q, src, kTransfer, false);
    note_access(q, dst, kTransfer, true);
    log("  copy slot %d -> slot %d, %u region(s)", src, dst, regions);
}

void Runner::do_fill(int q) {
    const int s = pick_slot();
    if (s < 0) return;
    const uint32_t w = slots_[size_t(s)].spec.words;
    const uint32_t off = rng_.below(w);
    const bool whole = rng_.chance(30);
    const uint32_t words = 1 + rng_.below(w - off);
    const uint32_t value = uint32_t(rng_.next());
    gpu_command(q, {{s, kTransfer, true}});
    vkCmdFillBuffer(open_cb(q).rec(), slots_[size_t(s)].buf.buffer, VkDeviceSize(off) * 4,
                    whole ? VK_WHOLE_SIZE : VkDeviceSize(words) * 4, value);
    note_access(q, s, kTransfer, true);
    log("  fill slot %d from word %u, %s words, 0x%08x", s, off, whole ? "all" : std::to_string(words).c_str(), value);
}

void Runner::do_update(int q, int s, bool whole) {
    const uint32_t w = slots_[size_t(s)].spec.words;
    const uint32_t off = whole ? 0 : rng_.below(w);
    const uint32_t words = whole ? w : 1 + rng_.below(std::min<uint32_t>(w - off, 1024));
    std::vector<uint32_t> data(words);
    for (uint32_t& x : data) x = uint32_t(rng_.next());
    gpu_command(q, {{s, kTransfer, true}});
    vkCmdUpdateBuffer(open_cb(q).rec(), slots_[size_t(s)].buf.buffer, VkDeviceSize(off) * 4,
                      VkDeviceSize(words) * 4, data.data());
    note_access(q, s, kTransfer, true);
    log("  update slot %d from word %u, %u words", s, off, words);
}

void Runner::do_timestamp(int q) {
    if (!timestamps_ || query_pairs_used_ * 2 + 2 > query_capacity_) return;
    const uint32_t pair = query_pairs_used_++;
    pair_submitted_.push_back(false);
    Cb& c = open_cb(q);
    VkCommandBuffer cb = c.rec();
    const bool v2 = sync2_ && rng_.chance(50);
    vkCmdResetQueryPool(cb, query_pool_, 2 * pair, 2);
    if (v2) {
        vkCmdWriteTimestamp2(cb, VK_PIPELINE_STAGE_2_BOTTOM_OF_PIPE_BIT, query_pool_, 2 * pair);
    } else {
        vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, query_pool_, 2 * pair);
    }
    record_full_barrier(cb, v2);
    model_->barrier(q, true, {}, kAllStages);
    Item it{Item::barrier};
    it.global = true;
    it.src = kAllStages;
    c.items.push_back(it);
    if (v2) {
        vkCmdWriteTimestamp2(cb, VK_PIPELINE_STAGE_2_BOTTOM_OF_PIPE_BIT, query_pool_, 2 * pair + 1);
    } else {
        vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, query_pool_, 2 * pair + 1);
    }
    c.query_pairs.push_back(pair);
    log("  timestamps, pair %u (reset, write, full barrier, write)", pair);
}

void Runner::do_host_read(int s, const char* what) {
    make_host_safe(s, false);
    Slot& sl = slots_[size_t(s)];
    if (!sl.buf.mapped) VK_CHECK(vkMapMemory(ctx_.device, sl.buf.memory, 0, VK_WHOLE_SIZE, 0, &sl.buf.mapped));
    const bool coherent = ctx_.memory_properties.memoryTypes[sl.buf.memory_type].propertyFlags &
                          VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    if (!coherent || rng_.chance(20)) {
        VkMappedMemoryRange r{VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE};
        r.memory = sl.buf.memory;
        r.size = VK_WHOLE_SIZE;
        VK_CHECK(vkInvalidateMappedMemoryRanges(ctx_.device, 1, &r));
    }
    digest_bytes(what, s, sl.buf.mapped, size_t(sl.spec.words) * 4);
}

void Runner::do_host_write(int s, bool whole) {
    make_host_safe(s, true);
    Slot& sl = slots_[size_t(s)];
    if (!sl.buf.mapped) VK_CHECK(vkMapMemory(ctx_.device, sl.buf.memory, 0, VK_WHOLE_SIZE, 0, &sl.buf.mapped));
    const uint32_t w = sl.spec.words;
    const uint32_t off = whole || rng_.chance(50) ? 0 : rng_.below(w);
    const uint32_t words = whole || (off == 0 && rng_.chance(50)) ? w : 1 + rng_.below(w - off);
    auto* p = static_cast<uint32_t*>(sl.buf.mapped);
    for (uint32_t i = 0; i < words; ++i) p[off + i] = uint32_t(rng_.next());
    const bool coherent = ctx_.memory_properties.memoryTypes[sl.buf.memory_type].propertyFlags &
                          VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    if (!coherent) {
        VkMappedMemoryRange r{VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE};
        r.memory = sl.buf.memory;
        r.size = VK_WHOLE_SIZE;
        VK_CHECK(vkFlushMappedMemoryRanges(ctx_.device, 1, &r));
    }
    log("  host writes slot %d from word %u, %u words", s, off, words);
}

void Runner::do_read_back(int s) {
    const int q = cur_queue_;
    SlotSpec spec{true, rng_.chance(50), slots_[size_t(s)].spec.words};
    const int t = new_slot(spec, true);
    alloc_slot(t, q);
    gpu_command(q, {{s, kTransfer, false}, {t, kTransfer, true}});
    VkBufferCopy r{0, 0, VkDeviceSize(spec.words) * 4};
    vkCmdCopyBuffer(open_cb(q).rec(), slots_[size_t(s)].buf.buffer, slots_[size_t(t)].buf.buffer, 1, &r);
    note_access(q, s, kTransfer, false);
    note_access(q, t, kTransfer, true);
    log("  copy slot %d -> read-back slot %d", s, t);
    do_host_read(t, "read-back");
    free_slot(t);
}

int Runner::pick_resubmittable() {
    std::vector<int> c;
    for (size_t i = 0; i < cbs_.size(); ++i) {
        const Cb& cb = cbs_[i];
        if (!cb.reusable || cb.state != Cb::submitted) continue;
        bool valid = true;
        for (auto& [slot, gen] : cb.uses)
            valid &= slots_[size_t(slot)].alive && slots_[size_t(slot)].gen == gen;
        if (valid) c.push_back(int(i));
    }
    return c.empty() ? -1 : c[rng_.below(uint32_t(c.size()))];
}

// --repeat-resubmits: a command buffer of 1-3 dispatches alone, recorded and submitted now on
// queue q, to be submitted again (the work of a runtime that repeats one kernel); its id.
int Runner::record_kernel(int q) {
    if (queues_[size_t(q)].open >= 0 || !queues_[size_t(q)].ended.empty()) submit(q, true, SignalKind::none, nullptr);
    force_reusable_ = true;
    const uint32_t n = 1 + rng_.below(3);
    for (uint32_t i = 0; i < n; ++i) do_dispatch(q);
    force_reusable_ = false;
    const int id = queues_[size_t(q)].open;
    submit(q, true, SignalKind::none, nullptr);
    return id;
}

void Runner::do_resubmit() {
    const bool fresh = opt_.repeat_resubmits && rng_.chance(50);
    const int q0 = fresh ? int(rng_.below(uint32_t(queues_.size()))) : 0;
    const int id = fresh ? record_kernel(q0) : pick_resubmittable();
    if (id < 0) return;
    const int q = fresh ? q0 : int(rng_.below(uint32_t(queues_.size())));
    // --repeat-resubmits: a runtime that waits for every operation, repeating one.
    const uint32_t times = opt_.repeat_resubmits ? 1 + rng_.below(5) : 1;
    for (uint32_t i = 0; i < times; ++i) {
        if (i > 0) {
            host_wait(q, cbs_[size_t(id)].end_pos, true);
            if (rng_.chance(30)) {  // new input between two, as such runtimes write it
                const int s = pick_slot(true);
                if (s >= 0) do_host_write(s, false);
            }
        }
        resubmit(id, q);
    }
}

void Runner::resubmit(int id, int q) {
    {
        const Sub& last = subs_[size_t(cbs_[size_t(id)].last_sub)];
        host_wait(last.queue, last.end_pos, opt_.repeat_resubmits);  // no resubmission while pending
    }
    Cb& cb = cbs_[size_t(id)];
    for (VkEvent e : cb.events) VK_CHECK(vkResetEvent(ctx_.device, e));
    // Everything q recorded goes first, so that the stream order is the recording order.
    if (queues_[size_t(q)].open >= 0 || !queues_[size_t(q)].ended.empty())
        submit(q, true, SignalKind::none, nullptr);
    log("  resubmit command buffer %d on queue %d", id, q);
    for (const Item& it : cb.items) {
        switch (it.type) {
            case Item::access:
                need_cross(q, it.slot, it.write);
                if (model_->conflict_stages(q, it.slot, it.write)) {
                    std::fprintf(stderr, "random_program: internal error: command buffer %d has a hazard at "
                                         "resubmission (model)\n", id);
                    std::exit(4);
                }
                model_->access(q, it.slot, it.stage, it.write);
                break;
            case Item::barrier: model_->barrier(q, it.global, it.slots, it.src); break;
            case Item::host_barrier: model_->host_barrier(q); break;
        }
    }
    cb.end_pos = model_->mark(q);
    queues_[size_t(q)].ended.push_back(id);
    // (--repeat-resubmits: with a fence, as a runtime that waits for each operation.)
    submit(q, false, SignalKind::none, nullptr, opt_.repeat_resubmits);
}

void Runner::lower(const Action& a, uint32_t index) {
    rng_ = Rng(a.seed);
    char buf[64];
    std::snprintf(buf, sizeof(buf), "[%u %s]", index, kind_name(a.kind));
    step_ = buf;
    const int q = cur_queue_;
    switch (a.kind) {
        case Kind::dispatch: do_dispatch(q); break;
        case Kind::copy: do_copy(q); break;
        case Kind::fill: do_fill(q); break;
        case Kind::update: {
            const int s = pick_slot();
            if (s >= 0) do_update(q, s, false);
            break;
        }
        case Kind::barrier: emit_barrier(q, {}, false); break;
        case Kind::timestamp: do_timestamp(q); break;
        case Kind::end_cb: end_cb(q); break;
        case Kind::submit: {
            QueueState& qs = queues_[size_t(q)];
            const bool end_open = rng_.chance(70);
            if ((end_open && qs.open >= 0) || !qs.ended.empty() || rng_.chance(10))
                submit(q, end_open, SignalKind::none, nullptr);
            break;
        }
        case Kind::queue:
            cur_queue_ = int(rng_.below(uint32_t(queues_.size())));
            log("current queue %d", cur_queue_);
            break;
        case Kind::host_read: {
            const int s = pick_slot(true);
            if (s >= 0) do_host_read(s, "buffer");
            break;
        }
        case Kind::host_write: {
            const int s = pick_slot(true);
            if (s >= 0) do_host_write(s, false);
            break;
        }
        case Kind::read_back: {
            const int s = pick_slot();
            if (s >= 0) do_read_back(s);
            break;
        }
        case Kind::wait: {
            const int p = int(rng_.below(uint32_t(queues_.size())));
            const uint64_t pos = queues_[size_t(p)].submitted_pos;
            if (pos) host_wait(p, rng_.chance(70) ? pos : 1 + rng_.below(uint32_t(pos)));
            break;
        }
        case Kind::realloc: {
            const int s = pick_slot();
            if (s < 0) break;
            free_slot(s);
            if (rng_.chance(50)) slots_[size_t(s)].spec.words = random_words(rng_);
            alloc_slot(s, q);
            break;
        }
        case Kind::resubmit: do_resubmit(); break;
    }
}

// Reads every buffer back, waits for the device, and digests the timestamps' validity.
void Runner::finale() {
    for (size_t s = 0; s < program_.slots.size(); ++s) {
        char buf[64];
        std::snprintf(buf, sizeof(buf), "[final %zu]", s);
        step_ = buf;
        rng_ = Rng(opt_.seed * 31 + s + 0x5eed);
        if (slots_[s].spec.host_visible) {
            do_host_read(int(s), "final");
        } else {
            do_read_back(int(s));
        }
    }
    step_ = "[final]";
    for (int q = 0; q < int(queues_.size()); ++q)
        if (queues_[size_t(q)].open >= 0 || !queues_[size_t(q)].ended.empty()) submit(q, true, SignalKind::none, nullptr);
    VK_CHECK(vkDeviceWaitIdle(ctx_.device));
    // Timestamps: only whether each submitted pair is available and in order, never the values.
    const uint64_t mask = ctx_.queue_family_properties.timestampValidBits >= 64
                              ? ~0ull
                              : (1ull << ctx_.queue_family_properties.timestampValidBits) - 1;
    std::vector<uint8_t> verdicts;
    for (uint32_t pair = 0; pair < query_pairs_used_; ++pair) {
        if (!pair_submitted_[pair]) continue;
        uint64_t v[4] = {};
        const VkResult r = vkGetQueryPoolResults(ctx_.device, query_pool_, 2 * pair, 2, sizeof(v), v,
                                                 2 * sizeof(uint64_t),
                                                 VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WITH_AVAILABILITY_BIT);
        if (r != VK_SUCCESS && r != VK_NOT_READY) VK_CHECK(r);
        const uint8_t available = uint8_t((v[1] != 0) + (v[3] != 0));
        const uint8_t ordered = (v[2] & mask) >= (v[0] & mask);
        verdicts.push_back(available);
        verdicts.push_back(ordered);
        if (available != 2 || !ordered)
            std::printf("random_program: timestamp pair %u: %u available, %s\n", pair, available,
                        ordered ? "in order" : "OUT OF ORDER");
    }
    if (!verdicts.empty()) digest_bytes("timestamp verdicts", -1, verdicts.data(), verdicts.size());
}

// In a batch (run_batch) the next program's timelines may be these very semaphores, kept and
// handed out again by a layer's object pool; a signal the validation layer still holds
// (QueueState::held_value) would then be paired with the next program's first wait on it, and
// what that wait orders misread. One device wait for each such signal releases it.
void Runner::release_held_signals() {
    for (QueueState& qs : queues_) {
        if (!qs.held_value) continue;
        VkSemaphoreSubmitInfo wait{VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO};
        wait.semaphore = qs.timeline;
        wait.value = qs.held_value;
        wait.stageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT;
        VkSubmitInfo2 si{VK_STRUCTURE_TYPE_SUBMIT_INFO_2};
        si.waitSemaphoreInfoCount = 1;
        si.pWaitSemaphoreInfos = &wait;
        VK_CHECK(vkQueueSubmit2(qs.queue, 1, &si, VK_NULL_HANDLE));
        qs.held_value = 0;
        log("release the held signal %llu of queue %zu's timeline (the program is over)",
            static_cast<unsigned long long>(wait.value), size_t(&qs - queues_.data()));
    }
    VK_CHECK(vkDeviceWaitIdle(ctx_.device));
}

int Runner::run() {
    create_device();
    create_pipelines();
    HazardModel model(int(queues_.size()));
    model_ = &model;
    if (!opt_.dump.empty()) {
        dump_ = std::fopen(opt_.dump.c_str(), "wb");
        if (!dump_) {
            std::fprintf(stderr, "random_program: cannot write %s\n", opt_.dump.c_str());
            return 2;
        }
    }
    step_ = "[setup]";
    rng_ = Rng(opt_.seed ^ 0x5e7095u);
    for (const SlotSpec& s : program_.slots) new_slot(s, false);
    for (size_t s = 0; s < program_.slots.size(); ++s) alloc_slot(int(s), 0);
    for (uint32_t i = 0; i < program_.actions.size(); ++i)
        if (!opt_.drop.count(i)) lower(program_.actions[i], i);
    finale();
    std::printf("random_program: %u host reads, %zu submissions, %zu command buffers\n", reads_, subs_.size(),
                cbs_.size());
    if (dump_) std::fclose(dump_);
    if (shared_) release_held_signals();
    // Tear-down (the device is idle).
    for (Slot& s : slots_)
        if (s.alive) vkapp::destroy_buffer(ctx_, s.buf);
    for (Cb& c : cbs_)
        for (VkEvent e : c.events) vkDestroyEvent(ctx_.device, e, nullptr);
    for (VkFence f : all_fences_)
        if (f) vkDestroyFence(ctx_.device, f, nullptr);
    for (VkSemaphore s : binaries_) vkDestroySemaphore(ctx_.device, s, nullptr);
    for (QueueState& q : queues_) vkDestroySemaphore(ctx_.device, q.timeline, nullptr);
    vkDestroyCommandPool(ctx_.device, cmd_pool_, nullptr);
    vkDestroyDescriptorPool(ctx_.device, dpool_, nullptr);
    if (query_pool_) vkDestroyQueryPool(ctx_.device, query_pool_, nullptr);
    for (int i = 0; i < 3; ++i) {
        vkapp::destroy_compute_pipeline(ctx_, pipes_[i]);
        if (push_pipes_[i]) vkDestroyPipeline(ctx_.device, push_pipes_[i], nullptr);
        if (push_pipe_layouts_[i]) vkDestroyPipelineLayout(ctx_.device, push_pipe_layouts_[i], nullptr);
        if (push_layouts_[i]) vkDestroyDescriptorSetLayout(ctx_.device, push_layouts_[i], nullptr);
    }
    if (shared_) return 0;
    return vkapp::finish(ctx_, digest_);
}

}  // namespace

int run(const Program& program, const RunOptions& options) {
    Runner r(program, options);
    return r.run();
}

int run_batch(uint64_t first_seed, uint32_t count, uint32_t ops, const RunOptions& options) {
    vkapp::Context ctx = open_context(options);
    uint64_t all = 1469598103934665603ull;
    for (uint32_t i = 0; i < count; ++i) {
        RunOptions o = options;
        o.seed = first_seed + i;
        const Program program = generate(o.seed, ops);
        const int before = vkapp::g_validation_messages.load();
        // On stderr too, where the validation messages go: they are told apart by seed.
        std::fflush(stdout);
        std::fprintf(stderr, "batch: seed %llu begins\n", static_cast<unsigned long long>(o.seed));
        std::fflush(stderr);
        Runner r(program, o, &ctx);
        if (const int status = r.run(); status != 0) {
            std::fflush(stdout);
            std::fprintf(stderr, "random_program: seed %llu stopped the batch (exit status %d)\n",
                         static_cast<unsigned long long>(o.seed), status);
            return status;
        }
        // The device is idle after each program's finale: nothing of it runs into the next.
        VK_CHECK(vkDeviceWaitIdle(ctx.device));
        std::printf("batch: seed %llu checksum %016llx messages %d\n", static_cast<unsigned long long>(o.seed),
                    static_cast<unsigned long long>(r.digest()), vkapp::g_validation_messages.load() - before);
        std::fflush(stdout);
        all = (all ^ r.digest()) * 1099511628211ull;
    }
    return vkapp::finish(ctx, all);
}

}  // namespace rnd
