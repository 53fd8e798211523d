// armed_resubmit: what "armed launches" (VK_SLIPSTREAM_ARM) must tell apart from a plain
// re-submission. An armed layer keeps, on a queue that submits one command buffer and waits for
// it each time, a replay of the last one already submitted and waiting on a host signal, and
// only releases it when the same work comes again; everything below that is not the same work
// must be submitted as the application asked. One queue; the kernel adds factor * (add + src[i])
// to out[i] for each element its dispatch reaches; every submission is waited for and both
// outputs compared with a CPU model at once, so skipped, doubled, stale or misdirected work
// shows at the submission that went wrong. Unless said otherwise, the wait is vkWaitForFences on
// one kept fence, reset before each submission, and a recording is not one-time-submit.
//   a  resubmit      one recording submitted 50 times: every element ends at 50;
//   b  rerecord      a one-time-submit command buffer recorded identically 50 times;
//   c  changed       re-recorded with another dispatch size or push constant every 1 to 4
//                    submissions (the elements reached and their values say which ran);
//   d  host_input    the kernel's input written through its persistent (coherent) mapping before
//                    each submission but every fifth: each result adds the value written last;
//   e  descriptors   vkUpdateDescriptorSets before each submission, the output alternating
//                    between two buffers (the update invalidates the command buffer: it is
//                    recorded again, with identical commands);
//   f  new_output    the output buffer destroyed, its memory freed, a new one (other contents)
//                    created, bound and written into the set, recorded again identically;
//   g  new_pipeline  the pipeline destroyed and created again with another specialization
//                    factor (the same layout, perhaps the same handle), recorded identically;
//   h  idle_waits    vkQueueWaitIdle (fence submitted, never waited on) and vkDeviceWaitIdle (no
//                    fence) in place of the fence wait, each every third submission;
//   i  pauses        a 5 ms sleep between a wait and the next submission, six times;
//   j  interleaved   another command buffer (a fill of a third buffer) submitted and waited for
//                    between two submissions, or submitted fence-less just before one;
//   k  polled        the fence polled with vkGetFenceStatus, and fence-less submissions waited
//                    for with vkQueueWaitIdle;
//   l  pool_reset    vkResetCommandPool (with and without releasing resources), then recorded
//                    again identically;
//   m  teardown      the device destroyed right after the last submission was waited for: no
//                    idle wait, only the destruction of its objects that vkDestroyDevice needs.
// Prints nothing but failures (and the device with --print-device); the checksum covers every
// result read.
#include "suite_util.h"
#include "vk_app.h"

#include "armed_add_comp.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <thread>
#include <vector>

namespace {

constexpr uint32_t kN = 256;  // elements of every buffer
constexpr uint32_t kMaxGroups = kN / 64;
constexpr VkDeviceSize kBytes = kN * 4;

struct Push {
    uint32_t n, add;
};

enum class Wait { fence, poll, queue_idle, queue_idle_no_fence, device_idle_no_fence };

// What the command buffer was last recorded with (the model's side of a submission).
struct Recorded {
    uint32_t groups = 0, add = 0, factor = 0;
};

VkPipeline create_pipeline(vkapp::Context& ctx, VkPipelineLayout layout, uint32_t factor) {
    VkShaderModule module = vkapp::create_shader_module(ctx, armed_add_comp, sizeof armed_add_comp);
    const VkSpecializationMapEntry entry{0, 0, sizeof(uint32_t)};
    const VkSpecializationInfo spec{1, &entry, sizeof factor, &factor};
    VkComputePipelineCreateInfo ci{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
    ci.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
    ci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    ci.stage.module = module;
    ci.stage.pName = "main";
    ci.stage.pSpecializationInfo = &spec;
    ci.layout = layout;
    VkPipeline pipeline;
    VK_CHECK(vkCreateComputePipelines(ctx.device, VK_NULL_HANDLE, 1, &ci, nullptr, &pipeline));
    vkDestroyShaderModule(ctx.device, module, nullptr);
    return pipeline;
}

vkapp::Buffer create_storage(vkapp::Context& ctx) {
    return vkapp::create_buffer(ctx, kBytes, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, suite::kHostMemory);
}

struct Rig {
    vkapp::Context& ctx;
    vkapp::ComputePipeline pipe;  // its pipeline: specialization factor `factor`
    vkapp::StorageSet set;        // binding 0: src, binding 1: out[bound]
    vkapp::Buffer src, out[2], third;
    std::vector<uint32_t> src_host = std::vector<uint32_t>(kN, 0);
    std::vector<uint32_t> want[2];
    uint32_t bound = 0, factor = 1;
    uint32_t groups = kMaxGroups, add = 1;  // what the next recording dispatches
    Recorded rec;
    VkCommandPool pool = VK_NULL_HANDLE;
    VkCommandBuffer cb = VK_NULL_HANDLE, fill_cb = VK_NULL_HANDLE;
    VkFence fence = VK_NULL_HANDLE;
    uint64_t checksum = 1469598103934665603ull;
    bool ok = true;

    explicit Rig(vkapp::Context& c) : ctx(c) {
        pipe = vkapp::create_compute_pipeline(ctx, armed_add_comp, sizeof armed_add_comp, 2, sizeof(Push));
        src = create_storage(ctx);
        for (vkapp::Buffer& o : out) o = create_storage(ctx);
        third = vkapp::create_buffer(ctx, kBytes, VK_BUFFER_USAGE_TRANSFER_DST_BIT, suite::kHostMemory);
        set = vkapp::create_storage_set(ctx, pipe, {src.buffer, out[0].buffer});
        pool = vkapp::create_command_pool(ctx, VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT);
        std::vector<VkCommandBuffer> cbs = suite::allocate_command_buffers(ctx, pool, 2);
        cb = cbs[0];
        fill_cb = cbs[1];
        fence = suite::create_fence(ctx);
    }
    // Not a destructor: the teardown scenario decides when (right before vkDestroyDevice).
    void destroy() {
        vkDestroyCommandPool(ctx.device, pool, nullptr);
        vkDestroyFence(ctx.device, fence, nullptr);
        vkapp::destroy_storage_set(ctx, set);
        vkapp::destroy_compute_pipeline(ctx, pipe);
        for (vkapp::Buffer* b : {&src, &out[0], &out[1], &third}) vkapp::destroy_buffer(ctx, *b);
    }
};

void fail(Rig& r, const char* what, uint32_t k, const char* detail) {
    std::fprintf(stderr, "armed_resubmit: %s, submission %u: %s\n", what, k, detail);
    r.ok = false;
}

void set_src(Rig& r, const std::function<uint32_t(uint32_t)>& value) {
    for (uint32_t i = 0; i < kN; ++i) r.src_host[i] = value(i);
    std::memcpy(r.src.mapped, r.src_host.data(), kBytes);
}

// A scenario's start (everything before it waited for): input and outputs zero on the host,
// binding 1 on out[0], the full dispatch adding 1.
void start(Rig& r) {
    set_src(r, [](uint32_t) { return 0u; });
    for (uint32_t o = 0; o < 2; ++o) {
        r.want[o].assign(kN, 0);
        std::memset(r.out[o].mapped, 0, kBytes);
    }
    r.bound = 0;
    vkapp::write_storage_buffer(r.ctx, r.set.set, 1, r.out[0].buffer);
    r.groups = kMaxGroups;
    r.add = 1;
}

void record(Rig& r, VkCommandBufferUsageFlags flags) {
    suite::begin(r.cb, flags);
    // The submission before (same output) done first, whatever the host waited with.
    vkapp::barrier(r.cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                   VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
    vkCmdBindPipeline(r.cb, VK_PIPELINE_BIND_POINT_COMPUTE, r.pipe.pipeline);
    vkCmdBindDescriptorSets(r.cb, VK_PIPELINE_BIND_POINT_COMPUTE, r.pipe.layout, 0, 1, &r.set.set, 0, nullptr);
    const Push p{kN, r.add};
    vkCmdPushConstants(r.cb, r.pipe.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof p, &p);
    vkCmdDispatch(r.cb, r.groups, 1, 1);
    vkapp::barrier(r.cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT,
                   VK_ACCESS_HOST_READ_BIT);
    VK_CHECK(vkEndCommandBuffer(r.cb));
    r.rec = Recorded{r.groups, r.add, r.factor};
}

void poll(Rig& r) {
    const auto begun = std::chrono::steady_clock::now();
    for (;;) {
        const VkResult res = vkGetFenceStatus(r.ctx.device, r.fence);
        if (res == VK_SUCCESS) return;
        if (res != VK_NOT_READY || std::chrono::steady_clock::now() - begun > std::chrono::seconds(10)) {
            std::fprintf(stderr, "armed_resubmit: vkGetFenceStatus failed or never signaled (10 s)\n");
            std::exit(1);
        }
    }
}

void submit_wait(Rig& r, Wait how) {
    const bool fenced = how == Wait::fence || how == Wait::poll || how == Wait::queue_idle;
    if (fenced) VK_CHECK(vkResetFences(r.ctx.device, 1, &r.fence));
    suite::submit(r.ctx.queue, r.cb, fenced ? r.fence : VK_NULL_HANDLE);
    switch (how) {
    case Wait::fence: suite::wait_fence(r.ctx, r.fence); break;
    case Wait::poll: poll(r); break;
    case Wait::queue_idle:
    case Wait::queue_idle_no_fence: VK_CHECK(vkQueueWaitIdle(r.ctx.queue)); break;
    case Wait::device_idle_no_fence: VK_CHECK(vkDeviceWaitIdle(r.ctx.device)); break;
    }
}

// Both outputs against the model (the one not bound must not change), into the checksum.
void check(Rig& r, const char* what, uint32_t k) {
    for (uint32_t o = 0; o < 2; ++o) {
        const uint32_t* got = static_cast<const uint32_t*>(r.out[o].mapped);
        char label[96];
        std::snprintf(label, sizeof label, "armed_resubmit: %s, submission %u, output %u", what, k, o);
        const bool same = r.ok ? suite::compare_words(label, got, r.want[o].data(), kN)
                               : std::memcmp(got, r.want[o].data(), kBytes) == 0;  // reported already
        r.ok = r.ok && same;
        r.checksum = vkapp::fnv1a(got, kBytes, r.checksum);
    }
}

// One submission of the current recording: the model, the submission and its wait, the check.
void step(Rig& r, const char* what, uint32_t k, Wait how = Wait::fence) {
    const uint32_t reach = std::min(r.rec.groups * 64, kN);
    for (uint32_t i = 0; i < reach; ++i) r.want[r.bound][i] += r.rec.factor * (r.rec.add + r.src_host[i]);
    submit_wait(r, how);
    check(r, what, k);
}

void a_resubmit(Rig& r) {
    start(r);
    record(r, 0);
    for (uint32_t k = 0; k < 50; ++k) step(r, "a resubmit", k);
    for (uint32_t v : r.want[0])
        if (v != 50) fail(r, "a resubmit", 50, "the model does not say 50");
}

void b_rerecord(Rig& r) {
    start(r);
    set_src(r, [](uint32_t i) { return i % 5; });
    r.add = 2;
    for (uint32_t k = 0; k < 50; ++k) {
        record(r, VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT);
        step(r, "b rerecord", k);
    }
}

void c_changed(Rig& r) {
    start(r);
    set_src(r, [](uint32_t i) { return i % 3; });
    // (groups, add): neighbours differ in one of the two, the table wraps to a change of both.
    static const uint32_t kTable[8][2] = {{4, 1}, {2, 1}, {2, 7}, {4, 7}, {1, 7}, {1, 3}, {3, 3}, {3, 1}};
    uint32_t k = 0;
    for (uint32_t phase = 0; phase < 12; ++phase) {
        r.groups = kTable[phase % 8][0];
        r.add = kTable[phase % 8][1];
        record(r, 0);
        for (uint32_t j = 0; j < 1 + (phase * 3) % 4; ++j) step(r, "c changed", k++);
    }
}

void d_host_input(Rig& r) {
    start(r);
    r.add = 0;
    record(r, 0);
    for (uint32_t k = 0; k < 40; ++k) {
        if (k % 5 != 4) set_src(r, [k](uint32_t i) { return (k * 7919u + i * 31u) & 0xffffu; });
        step(r, "d host_input", k);
    }
}

void e_descriptors(Rig& r) {
    start(r);
    set_src(r, [](uint32_t i) { return i % 11; });
    for (uint32_t k = 0; k < 40; ++k) {
        r.bound = k % 2;
        vkapp::write_storage_buffer(r.ctx, r.set.set, 1, r.out[r.bound].buffer);
        record(r, 0);
        step(r, "e descriptors", k);
    }
}

void f_new_output(Rig& r) {
    start(r);
    r.add = 3;
    record(r, 0);
    step(r, "f new_output", 0);
    for (uint32_t k = 1; k < 20; ++k) {
        vkapp::destroy_buffer(r.ctx, r.out[0]);
        r.out[0] = create_storage(r.ctx);
        for (uint32_t i = 0; i < kN; ++i) r.want[0][i] = k * 1000 + i;
        std::memcpy(r.out[0].mapped, r.want[0].data(), kBytes);
        vkapp::write_storage_buffer(r.ctx, r.set.set, 1, r.out[0].buffer);
        record(r, 0);
        step(r, "f new_output", k);
    }
}

void g_new_pipeline(Rig& r) {
    start(r);
    set_src(r, [](uint32_t i) { return i % 4; });
    for (uint32_t k = 0; k < 12; ++k) {
        vkDestroyPipeline(r.ctx.device, r.pipe.pipeline, nullptr);
        r.factor = 1 + (k + 1) % 3;  // 2, 3, 1, ...: the last one 1 again
        r.pipe.pipeline = create_pipeline(r.ctx, r.pipe.layout, r.factor);
        record(r, 0);
        step(r, "g new_pipeline", k);
    }
}

void h_idle_waits(Rig& r) {
    start(r);
    set_src(r, [](uint32_t i) { return i % 2; });
    record(r, 0);
    for (uint32_t k = 0; k < 30; ++k)
        step(r, "h idle_waits", k, k % 3 == 0 ? Wait::fence : k % 3 == 1 ? Wait::queue_idle : Wait::device_idle_no_fence);
}

void i_pauses(Rig& r) {
    start(r);
    r.add = 4;
    record(r, 0);
    for (uint32_t k = 0; k < 12; ++k) {
        step(r, "i pauses", k);
        if (k % 2) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
}

void record_fill(Rig& r, uint32_t value) {
    suite::begin(r.fill_cb);
    vkCmdFillBuffer(r.fill_cb, r.third.buffer, 0, VK_WHOLE_SIZE, value);
    vkapp::barrier(r.fill_cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT,
                   VK_ACCESS_HOST_READ_BIT);
    VK_CHECK(vkEndCommandBuffer(r.fill_cb));
}

void check_third(Rig& r, uint32_t k, uint32_t value) {
    const std::vector<uint32_t> want(kN, value);
    const uint32_t* got = static_cast<const uint32_t*>(r.third.mapped);
    if (!suite::compare_words("armed_resubmit: j interleaved, the third buffer", got, want.data(), kN))
        fail(r, "j interleaved", k, "the fill between submissions is wrong");
    r.checksum = vkapp::fnv1a(got, kBytes, r.checksum);
}

// Every third submission follows a fill that was waited for; every third but one has a fill
// submitted (fence-less) right before it, which its fence covers.
void j_interleaved(Rig& r) {
    start(r);
    set_src(r, [](uint32_t i) { return i % 6; });
    record(r, 0);
    for (uint32_t k = 0; k < 30; ++k) {
        const uint32_t value = 0xf000u + k;
        if (k % 3 != 0) record_fill(r, value);
        if (k % 3 == 1) {
            VK_CHECK(vkResetFences(r.ctx.device, 1, &r.fence));
            suite::submit(r.ctx.queue, r.fill_cb, r.fence);
            suite::wait_fence(r.ctx, r.fence);
            check_third(r, k, value);
        } else if (k % 3 == 2) {
            suite::submit(r.ctx.queue, r.fill_cb);
        }
        step(r, "j interleaved", k);
        if (k % 3 == 2) check_third(r, k, value);
    }
}

void k_polled(Rig& r) {
    start(r);
    set_src(r, [](uint32_t i) { return i % 13; });
    record(r, 0);
    for (uint32_t k = 0; k < 30; ++k) step(r, "k polled", k, k % 2 ? Wait::queue_idle_no_fence : Wait::poll);
}

void l_pool_reset(Rig& r) {
    start(r);
    set_src(r, [](uint32_t i) { return i % 8; });
    for (uint32_t k = 0; k < 20; ++k) {
        VK_CHECK(vkResetCommandPool(r.ctx.device, r.pool, k % 2 ? VK_COMMAND_POOL_RESET_RELEASE_RESOURCES_BIT : 0));
        record(r, k % 4 < 2 ? 0 : VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT);
        step(r, "l pool_reset", k);
    }
}

// A submission that waits for the host (a timeline value signaled later) in front of the
// kernel's: a replay armed behind them would wait for the host too, and the destroy of an
// unrelated buffer before the host signals (valid: nothing pending uses it) must not wait for
// it. Without the rule that arms only after work with nothing of the layer's in flight, that
// destroy would wait forever.
void n_host_gate(Rig& r) {
    start(r);
    set_src(r, [](uint32_t i) { return i % 7; });
    record(r, 0);
    const VkSemaphore gate = vkapp::create_timeline_semaphore(r.ctx);
    for (uint32_t k = 0; k < 8; ++k) {
        const uint64_t value = k + 1;
        VkTimelineSemaphoreSubmitInfo values{VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO};
        values.waitSemaphoreValueCount = 1;
        values.pWaitSemaphoreValues = &value;
        const VkPipelineStageFlags stage = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
        VkSubmitInfo wait{VK_STRUCTURE_TYPE_SUBMIT_INFO, &values};
        wait.waitSemaphoreCount = 1;
        wait.pWaitSemaphores = &gate;
        wait.pWaitDstStageMask = &stage;
        VK_CHECK(vkQueueSubmit(r.ctx.queue, 1, &wait, VK_NULL_HANDLE));
        vkapp::Buffer unrelated = create_storage(r.ctx);
        const uint32_t reach = std::min(r.rec.groups * 64, kN);
        for (uint32_t i = 0; i < reach; ++i) r.want[r.bound][i] += r.rec.factor * (r.rec.add + r.src_host[i]);
        VK_CHECK(vkResetFences(r.ctx.device, 1, &r.fence));
        suite::submit(r.ctx.queue, r.cb, r.fence);
        vkapp::destroy_buffer(r.ctx, unrelated);
        VkSemaphoreSignalInfo signal{VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO};
        signal.semaphore = gate;
        signal.value = value;
        VK_CHECK(vkSignalSemaphore(r.ctx.device, &signal));
        suite::wait_fence(r.ctx, r.fence);
        check(r, "n host_gate", k);
    }
    vkDestroySemaphore(r.ctx.device, gate, nullptr);
}

// The last submissions; the caller destroys the device right after.
void m_teardown(Rig& r) {
    start(r);
    set_src(r, [](uint32_t i) { return i % 9; });
    r.add = 5;
    record(r, 0);
    for (uint32_t k = 0; k < 6; ++k) step(r, "m teardown", k);
}

}  // namespace

int main(int argc, char** argv) {
    const uint32_t scale = suite::parse_scale(argc, argv);
    vkapp::ContextOptions options;
    options.timeline_semaphores = true;  // n_host_gate
    vkapp::Context ctx = vkapp::create_context("armed_resubmit", options);
    suite::print_device(argc, argv, ctx);
    Rig rig(ctx);
    for (uint32_t s = 0; s < scale && rig.ok; ++s) {
        for (auto* scenario : {a_resubmit, b_rerecord, c_changed, d_host_input, e_descriptors, f_new_output,
                               g_new_pipeline, h_idle_waits, i_pauses, j_interleaved, k_polled, l_pool_reset,
                               n_host_gate}) {
            scenario(rig);
            if (!rig.ok) break;
        }
    }
    // Every program of the suite waits for its device on a queue the layer knows is idle once.
    VK_CHECK(vkDeviceWaitIdle(ctx.device));
    if (rig.ok) m_teardown(rig);
    // m: nothing between the last fence wait and vkDestroyDevice but the destruction of the
    // device's objects (which vkDestroyDevice requires); no idle wait (vkapp::destroy_context
    // would add one).
    rig.destroy();
    vkDestroyDevice(ctx.device, nullptr);
    ctx.device = VK_NULL_HANDLE;
    return vkapp::finish_checked(ctx, rig.ok, rig.checksum);
}
