#include "traffic.h"

#include "stress_step_comp.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <deque>
#include <thread>

namespace stress {

namespace {

constexpr uint32_t kRing = 16;   // command buffers, fences and marker slots per submitter
constexpr uint32_t kWords = 64;  // one workgroup's data
constexpr VkDeviceSize kDataBytes = kWords * 4;
constexpr VkDeviceSize kMarkerBytes = kRing * 4;

struct Params {
    uint32_t mul, add, slot, tag;
};

uint64_t mix(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

// Step `seq` of stream `stream` (a submitter, or 1000 + a relay).
Params step_params(uint64_t stream, uint64_t seq) {
    const uint64_t h = mix(stream * 0x9e3779b97f4a7c15ull + seq * 0xd1b54a32d192ed03ull + 1);
    return {uint32_t(h) | 1u, uint32_t(h >> 32), uint32_t(seq % kRing), uint32_t(seq + 1)};
}

void cpu_step(uint32_t* d, const Params& p) {
    for (uint32_t i = 0; i < kWords; ++i) {
        const uint32_t v = d[i] * p.mul + (p.add ^ i);
        d[i] = (v << 7) | (v >> 25);
    }
}

uint32_t initial_word(uint64_t stream, uint32_t i) { return uint32_t(mix(stream * 131 + i + 7)); }

// The GPU writes it; no host sync orders our loads after it, so read it as the device left it.
uint32_t read_word(const void* mapped, uint32_t index) {
    return __atomic_load_n(static_cast<const uint32_t*>(mapped) + index, __ATOMIC_ACQUIRE);
}

void advance_to(std::atomic<uint64_t>& a, uint64_t value) {
    uint64_t seen = a.load();
    while (seen < value && !a.compare_exchange_weak(seen, value)) {
    }
}

// Test-side randomness (which wait, which timeout): not part of the results.
struct Dice {
    uint64_t state;
    uint32_t roll(uint32_t n) { return uint32_t(mix(state += 0x9e3779b97f4a7c15ull) % n); }
};

// The first problem seen (wrong results and unexpected VkResults), for the report.
class Problems {
public:
    void wrong(const std::string& what) { note(what, true); }
    void failed(const std::string& what) { note(what, false); }
    bool any() const { return count_.load() != 0; }
    bool wrong_result() const { return wrong_.load(); }
    std::string first() {
        std::lock_guard lock(mutex_);
        return count_ > 1 ? first_ + " (and " + std::to_string(count_ - 1) + " more)" : first_;
    }

private:
    void note(const std::string& what, bool wrong) {
        std::lock_guard lock(mutex_);
        if (count_++ < 8) std::fprintf(stderr, "stress: %s\n", what.c_str());
        if (first_.empty()) first_ = what;
        if (wrong) wrong_ = true;
    }
    std::mutex mutex_;
    std::string first_;
    std::atomic<uint64_t> count_{0};
    std::atomic<bool> wrong_{false};
};

// Quiet phases (quiet_probes): a submitter that probes the deadline flush keeps every waiting
// thread's Vulkan calls (waits, status queries, idle waits: all of them can flush what a layer
// holds) out for the time of its probe.
class QuietGate {
public:
    // A waiting thread's Vulkan calls, for as long as it lives: never during a probe.
    class Calls {
    public:
        explicit Calls(QuietGate& g) : g_(g) {
            for (;;) {
                while (g_.quiet_.load()) std::this_thread::yield();
                g_.busy_.fetch_add(1);
                if (!g_.quiet_.load()) return;
                g_.busy_.fetch_sub(1);
            }
        }
        ~Calls() { g_.busy_.fetch_sub(1); }
        Calls(const Calls&) = delete;
        Calls& operator=(const Calls&) = delete;

    private:
        QuietGate& g_;
    };
    // The prober, holding no queue lock: from now on no waiting thread calls (the calls running
    // end first).
    void hush() {
        lock_.lock();
        quiet_.store(true);
        while (busy_.load()) std::this_thread::yield();
    }
    void release() {
        quiet_.store(false);
        lock_.unlock();
    }

private:
    std::mutex lock_;  // one probe at a time
    std::atomic<bool> quiet_{false};
    std::atomic<int> busy_{0};
};

struct Submitter;

// A submission others watch: which submitter, which of its slots, and its sequence number
// (and for a semaphore watch, the timeline value it signals).
struct Watch {
    Submitter* s;
    uint32_t slot;
    uint64_t seq;
    uint64_t value;
};

// A thread-safe list of watches: watchers take from the front and put back what is not done.
class Board {
public:
    void post(const Watch& w) {
        std::lock_guard lock(mutex_);
        list_.push_back(w);
    }
    // Takes up to `n` watches; false when none is there.
    bool take(uint32_t n, std::vector<Watch>& out) {
        out.clear();
        std::lock_guard lock(mutex_);
        while (n-- && !list_.empty()) {
            out.push_back(list_.front());
            list_.pop_front();
        }
        return !out.empty();
    }
    void put_back(const Watch& w) { post(w); }

private:
    std::mutex mutex_;
    std::deque<Watch> list_;
};

struct Slot {
    VkCommandBuffer cb = VK_NULL_HANDLE;
    VkFence fence = VK_NULL_HANDLE;
    bool fence_used = false;                 // submitted with it since its last reset
    std::atomic<uint32_t> watchers{0};       // watches of its current submission not yet done
    std::atomic<bool> seen_in_memory{false};  // the memory poller saw its marker
};

struct Submitter {
    uint32_t index = 0;
    AppQueue* queue = nullptr;
    VkCommandPool pool = VK_NULL_HANDLE;
    Slot slots[kRing];
    vkapp::Buffer data, markers;
    VkDescriptorPool descriptor_pool = VK_NULL_HANDLE;
    VkDescriptorSet set = VK_NULL_HANDLE;
    VkSemaphore timeline = VK_NULL_HANDLE;  // signalled by some of its submissions
    VkSemaphore gate = VK_NULL_HANDLE;      // waited on by some, signalled by the host
    uint64_t timeline_value = 0, gate_value = 0;
    uint64_t planned = 0;
    std::atomic<uint64_t> made{0};
    std::atomic<uint64_t> completed{0};  // every submission below this number is complete
    uint64_t submitted_under_lock = 0;   // submissions made, read and written under queue->lock

    uint32_t tag_in(uint32_t slot) const { return read_word(markers.mapped, slot); }
};

struct Relay {
    uint32_t index = 0;
    vkapp::Buffer data, markers;
    VkDescriptorPool descriptor_pool = VK_NULL_HANDLE;
    VkDescriptorSet set = VK_NULL_HANDLE;
    VkSemaphore timeline = VK_NULL_HANDLE;  // stage k waits for k and signals k + 1
    std::atomic<uint64_t> next_stage{0};    // stages submitted
    std::atomic<uint64_t> end{0};           // stages it will have (lowered when time is up)
};

class Traffic {
public:
    Traffic(vkapp::Context& ctx, std::vector<AppQueue*>& queues, const TrafficConfig& c, Progress& p)
        : ctx_(ctx), queues_(queues), c_(c), p_(p) {}
    TrafficResult run();

private:
    void set_up();
    void tear_down();
    void submitter_thread(Submitter& s);
    void record(Submitter& s, uint32_t slot, uint64_t seq);
    void wait_reusable(Submitter& s, uint32_t slot, uint64_t seq);
    void fence_waiter_thread(uint32_t index);
    void semaphore_waiter_thread();
    void signaller_thread();
    void memory_poller_thread();
    void idle_waiter_thread();
    void relay_thread(Relay& r, uint32_t part);
    // A watched submission is done: check its marker, note how far its submitter is complete.
    void done(const Watch& w, bool completes, const char* how);
    bool watchers_may_stop() const { return submitters_done_.load() == subs_.size(); }
    bool time_up() const { return c_.stop_at_s > 0 && elapsed_s() >= c_.stop_at_s; }
    void check(VkResult r, const char* what, bool timeout_ok = false);
    VkCommandPool create_pool(uint32_t family);
    void lock_all();
    void unlock_all();

    vkapp::Context& ctx_;
    std::vector<AppQueue*>& queues_;
    const TrafficConfig c_;
    Progress& p_;
    vkapp::ComputePipeline pipe_;
    std::vector<std::unique_ptr<Submitter>> subs_;
    std::vector<std::unique_ptr<Relay>> relays_;
    std::vector<uint32_t> families_;  // the distinct families of queues_
    Board fence_board_, semaphore_board_, gate_board_, memory_board_;
    std::atomic<size_t> submitters_done_{0};
    std::atomic<bool> relays_done_{false};
    Problems problems_;
    QuietGate quiet_;
};

void Traffic::check(VkResult r, const char* what, bool timeout_ok) {
    if (r == VK_SUCCESS || (timeout_ok && (r == VK_TIMEOUT || r == VK_NOT_READY))) return;
    problems_.failed(std::string(what) + " returned VkResult " + std::to_string(int(r)));
}

VkCommandPool Traffic::create_pool(uint32_t family) {
    VkCommandPoolCreateInfo ci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    ci.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    ci.queueFamilyIndex = family;
    VkCommandPool pool;
    VK_CHECK(vkCreateCommandPool(ctx_.device, &ci, nullptr, &pool));
    return pool;
}

void Traffic::lock_all() {
    for (AppQueue* q : queues_) q->lock.lock();  // always in this order
}

void Traffic::unlock_all() {
    for (AppQueue* q : queues_) q->lock.unlock();
}

void Traffic::set_up() {
    pipe_ = vkapp::create_compute_pipeline(ctx_, stress_step_comp, sizeof(stress_step_comp), 2, sizeof(Params));
    for (AppQueue* q : queues_)
        if (std::find(families_.begin(), families_.end(), q->family) == families_.end()) families_.push_back(q->family);
    const VkBufferUsageFlags usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT;
    auto make_set = [&](vkapp::Buffer& data, vkapp::Buffer& markers, VkDescriptorPool& pool, VkDescriptorSet& set,
                        uint64_t stream, const std::vector<uint32_t>& families) {
        data = vkapp::create_buffer(ctx_, kDataBytes, usage, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                                                 VK_MEMORY_PROPERTY_HOST_COHERENT_BIT, families);
        markers = vkapp::create_buffer(ctx_, kMarkerBytes, usage,
                                       VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
                                       families);
        for (uint32_t i = 0; i < kWords; ++i) static_cast<uint32_t*>(data.mapped)[i] = initial_word(stream, i);
        std::memset(markers.mapped, 0, kMarkerBytes);
        VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 2};
        VkDescriptorPoolCreateInfo ci{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
        ci.maxSets = 1;
        ci.poolSizeCount = 1;
        ci.pPoolSizes = &size;
        VK_CHECK(vkCreateDescriptorPool(ctx_.device, &ci, nullptr, &pool));
        VkDescriptorSetAllocateInfo ai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
        ai.descriptorPool = pool;
        ai.descriptorSetCount = 1;
        ai.pSetLayouts = &pipe_.set_layout;
        VK_CHECK(vkAllocateDescriptorSets(ctx_.device, &ai, &set));
        vkapp::write_storage_buffers(ctx_, set, {data.buffer, markers.buffer});
    };
    auto timeline = [&] {
        VkSemaphoreTypeCreateInfo ti{VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO};
        ti.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
        VkSemaphoreCreateInfo ci{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, &ti};
        VkSemaphore s;
        VK_CHECK(vkCreateSemaphore(ctx_.device, &ci, nullptr, &s));
        return s;
    };
    for (uint32_t t = 0; t < c_.submitters; ++t) {
        auto s = std::make_unique<Submitter>();
        s->index = t;
        s->queue = queues_[t % queues_.size()];
        s->planned = c_.submissions / c_.submitters + (t < c_.submissions % c_.submitters ? 1 : 0);
        make_set(s->data, s->markers, s->descriptor_pool, s->set, t, {});
        s->pool = create_pool(s->queue->family);
        VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
        ai.commandPool = s->pool;
        ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
        ai.commandBufferCount = 1;
        for (Slot& slot : s->slots) {
            VK_CHECK(vkAllocateCommandBuffers(ctx_.device, &ai, &slot.cb));
            VkFenceCreateInfo fi{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
            VK_CHECK(vkCreateFence(ctx_.device, &fi, nullptr, &slot.fence));
        }
        if (c_.timelines) {
            s->timeline = timeline();
            s->gate = timeline();
        }
        subs_.push_back(std::move(s));
    }
    for (uint32_t r = 0; r < c_.relays; ++r) {
        auto relay = std::make_unique<Relay>();
        relay->index = r;
        relay->end = c_.relay_stages;
        make_set(relay->data, relay->markers, relay->descriptor_pool, relay->set, 1000 + r,
                 families_.size() > 1 ? families_ : std::vector<uint32_t>{});
        relay->timeline = timeline();
        relays_.push_back(std::move(relay));
    }
}

void Traffic::tear_down() {
    for (auto& s : subs_) {
        for (Slot& slot : s->slots) vkDestroyFence(ctx_.device, slot.fence, nullptr);
        vkDestroyCommandPool(ctx_.device, s->pool, nullptr);
        vkDestroyDescriptorPool(ctx_.device, s->descriptor_pool, nullptr);
        if (s->timeline) vkDestroySemaphore(ctx_.device, s->timeline, nullptr);
        if (s->gate) vkDestroySemaphore(ctx_.device, s->gate, nullptr);
        vkapp::destroy_buffer(ctx_, s->data);
        vkapp::destroy_buffer(ctx_, s->markers);
    }
    for (auto& r : relays_) {
        vkDestroyDescriptorPool(ctx_.device, r->descriptor_pool, nullptr);
        vkDestroySemaphore(ctx_.device, r->timeline, nullptr);
        vkapp::destroy_buffer(ctx_, r->data);
        vkapp::destroy_buffer(ctx_, r->markers);
    }
    vkapp::destroy_compute_pipeline(ctx_, pipe_);
}

// A step: after the stream's previous one (a barrier whose first scope is all earlier work on
// the queue), then made visible to the host for the watchers and the final check.
void record_step(VkCommandBuffer cb, const vkapp::ComputePipeline& pipe, VkDescriptorSet set, const Params& p) {
    vkapp::barrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                   VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
    vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipe.pipeline);
    vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipe.layout, 0, 1, &set, 0, nullptr);
    vkCmdPushConstants(cb, pipe.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(p), &p);
    vkCmdDispatch(cb, 1, 1, 1);
    vkapp::barrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT,
                   VK_ACCESS_HOST_READ_BIT);
}

void Traffic::record(Submitter& s, uint32_t slot, uint64_t seq) {
    VkCommandBuffer cb = s.slots[slot].cb;
    // Reset three ways: explicitly, implicitly by vkBeginCommandBuffer, and (wait_reusable)
    // with the whole pool.
    if (seq % 5 == 1) check(vkResetCommandBuffer(cb, 0), "vkResetCommandBuffer");
    VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    check(vkBeginCommandBuffer(cb, &bi), "vkBeginCommandBuffer");
    record_step(cb, pipe_, s.set, step_params(s.index, seq));
    check(vkEndCommandBuffer(cb), "vkEndCommandBuffer");
}

// Until submission seq - kRing (the slot's last) is complete and unwatched; every 8 rounds of
// the ring, until all are, and then resets the whole pool.
void Traffic::wait_reusable(Submitter& s, uint32_t slot, uint64_t seq) {
    const bool pool_reset = seq > 0 && seq % (8 * kRing) == 0;
    auto ready = [&] {
        const uint64_t need = pool_reset ? seq : seq + 1 > kRing ? seq + 1 - kRing : 0;
        if (s.completed.load() < need) return false;
        if (pool_reset) {
            for (const Slot& x : s.slots)
                if (x.watchers.load()) return false;
            return true;
        }
        return s.slots[slot].watchers.load() == 0;
    };
    while (!ready()) std::this_thread::yield();
    if (pool_reset) check(vkResetCommandPool(ctx_.device, s.pool, 0), "vkResetCommandPool");
    Slot& x = s.slots[slot];
    if (x.fence_used) {
        check(vkResetFences(ctx_.device, 1, &x.fence), "vkResetFences");
        x.fence_used = false;
    }
}

void Traffic::submitter_thread(Submitter& s) {
    auto more = [&](uint64_t seq) {
        return seq < s.planned || (c_.while_running && c_.while_running->load());
    };
    for (uint64_t seq = 0; more(seq) && !time_up(); ++seq) {
        const uint32_t slot = uint32_t(seq % kRing);
        const bool last = seq + 1 == s.planned;
        wait_reusable(s, slot, seq);
        record(s, slot, seq);

        const bool fenced = last || seq % c_.fence_every == c_.fence_every - 1;
        const bool signals = c_.timelines && seq % 16 == 5;
        const bool gated = c_.timelines && c_.gates && seq % 32 == 17;
        const bool polled = c_.poll_memory && !fenced;
        const bool probe = polled && seq % 8 == 2;  // waited for through memory before going on
        const bool quiet = polled && c_.quiet_probes && seq % 64 == 58;  // ... with nobody else calling
        if (quiet) quiet_.hush();
        Slot& x = s.slots[slot];
        x.watchers.store(uint32_t(fenced) + uint32_t(signals) + uint32_t(polled));
        x.fence_used = fenced;
        x.seen_in_memory.store(false);

        VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
        si.commandBufferCount = 1;
        si.pCommandBuffers = &x.cb;
        VkTimelineSemaphoreSubmitInfo values{VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO};
        const VkPipelineStageFlags wait_stage = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT;
        uint64_t wait_value = 0, signal_value = 0;
        if (gated) {
            wait_value = ++s.gate_value;
            si.waitSemaphoreCount = 1;
            si.pWaitSemaphores = &s.gate;
            si.pWaitDstStageMask = &wait_stage;
            values.waitSemaphoreValueCount = 1;
            values.pWaitSemaphoreValues = &wait_value;
        }
        if (signals) {
            signal_value = ++s.timeline_value;
            si.signalSemaphoreCount = 1;
            si.pSignalSemaphores = &s.timeline;
            values.signalSemaphoreValueCount = 1;
            values.pSignalSemaphoreValues = &signal_value;
        }
        if (gated || signals) si.pNext = &values;
        {
            std::lock_guard lock(s.queue->lock);
            check(vkQueueSubmit(s.queue->queue, 1, &si, fenced ? x.fence : VK_NULL_HANDLE), "vkQueueSubmit");
            s.submitted_under_lock = seq + 1;
        }
        s.made.store(seq + 1);
        p_.submissions.fetch_add(1);
        // Watched from now on (the watchers may see it done at once).
        if (fenced) fence_board_.post({&s, slot, seq, 0});
        if (signals) semaphore_board_.post({&s, slot, seq, signal_value});
        if (gated) gate_board_.post({&s, slot, seq, wait_value});
        if (polled) memory_board_.post({&s, slot, seq, 0});
        if (probe || quiet)
            while (!x.seen_in_memory.load()) std::this_thread::yield();
        if (quiet) quiet_.release();
    }
    submitters_done_.fetch_add(1);
}

void Traffic::done(const Watch& w, bool completes, const char* how) {
    const uint32_t tag = w.s->tag_in(w.slot);
    if (tag != uint32_t(w.seq + 1)) {
        char what[256];
        std::snprintf(what, sizeof what,
                      "wrong result: submitter %u's submission %llu was reported done by %s, but its marker "
                      "holds tag %u (expected %u): the wait returned before the work was done",
                      w.s->index, static_cast<unsigned long long>(w.seq), how, tag, uint32_t(w.seq + 1));
        problems_.wrong(what);
    }
    if (completes) advance_to(w.s->completed, w.seq + 1);
    w.s->slots[w.slot].watchers.fetch_sub(1);
}

void Traffic::fence_waiter_thread(uint32_t index) {
    Dice dice{0xfe0ce000ull + index};
    std::vector<Watch> ws;
    std::vector<VkFence> fences;
    for (;;) {
        // Done when the submitters are and nothing is left to watch (they post before they end).
        const bool last_round = watchers_may_stop();
        if (!fence_board_.take(1 + dice.roll(3), ws)) {
            if (last_round) return;
            std::this_thread::yield();
            continue;
        }
        const QuietGate::Calls calls(quiet_);
        fences.clear();
        for (const Watch& w : ws) fences.push_back(w.s->slots[w.slot].fence);
        const uint32_t n = uint32_t(fences.size());
        static constexpr uint64_t kTimeouts[] = {0, 1000, 20000, 2000000, UINT64_MAX};
        const uint32_t mode = dice.roll(7);
        std::vector<bool> finished(n, false);
        if (mode == 0) {
            // Status polls.
            for (uint32_t i = 0; i < n; ++i) {
                const VkResult r = vkGetFenceStatus(ctx_.device, fences[i]);
                p_.waits.fetch_add(1);
                check(r, "vkGetFenceStatus", true);
                finished[i] = r == VK_SUCCESS;
            }
        } else if (mode <= 4 || n == 1) {
            // One fence at a time, each with its own timeout (0 included).
            for (uint32_t i = 0; i < n; ++i) {
                const VkResult r = vkWaitForFences(ctx_.device, 1, &fences[i], VK_TRUE, kTimeouts[dice.roll(5)]);
                p_.waits.fetch_add(1);
                check(r, "vkWaitForFences", true);
                finished[i] = r == VK_SUCCESS;
            }
        } else {
            // All of them at once, or any of them (then the status says which).
            const bool all = mode == 5;
            const VkResult r =
                vkWaitForFences(ctx_.device, n, fences.data(), all ? VK_TRUE : VK_FALSE, kTimeouts[dice.roll(5)]);
            p_.waits.fetch_add(1);
            check(r, "vkWaitForFences (several)", true);
            for (uint32_t i = 0; i < n && r == VK_SUCCESS; ++i) {
                if (all) {
                    finished[i] = true;
                    continue;
                }
                const VkResult s = vkGetFenceStatus(ctx_.device, fences[i]);
                p_.waits.fetch_add(1);
                check(s, "vkGetFenceStatus", true);
                finished[i] = s == VK_SUCCESS;
            }
        }
        for (uint32_t i = 0; i < n; ++i) {
            if (finished[i]) done(ws[i], true, "a fence");
            else fence_board_.put_back(ws[i]);
        }
        if (std::find(finished.begin(), finished.end(), true) == finished.end()) std::this_thread::yield();
    }
}

void Traffic::semaphore_waiter_thread() {
    Dice dice{0x5e3a0000ull};
    std::vector<Watch> ws;
    for (;;) {
        const bool last_round = watchers_may_stop();
        if (!semaphore_board_.take(1 + dice.roll(2), ws)) {
            if (last_round) return;
            std::this_thread::yield();
            continue;
        }
        const QuietGate::Calls calls(quiet_);
        // One value per semaphore in a wait: a second watch of the same one waits its turn.
        if (ws.size() == 2 && ws[0].s == ws[1].s) {
            semaphore_board_.put_back(ws[1]);
            ws.pop_back();
        }
        const uint32_t n = uint32_t(ws.size());
        std::vector<VkSemaphore> sems;
        std::vector<uint64_t> values;
        for (const Watch& w : ws) {
            sems.push_back(w.s->timeline);
            values.push_back(w.value);
        }
        std::vector<bool> finished(n, false);
        const uint32_t mode = dice.roll(4);
        static constexpr uint64_t kTimeouts[] = {0, 50000, UINT64_MAX};
        if (mode == 0) {
            for (uint32_t i = 0; i < n; ++i) {
                uint64_t v = 0;
                check(vkGetSemaphoreCounterValue(ctx_.device, sems[i], &v), "vkGetSemaphoreCounterValue");
                p_.waits.fetch_add(1);
                finished[i] = v >= values[i];
            }
        } else {
            VkSemaphoreWaitInfo wi{VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO};
            wi.flags = mode == 3 ? VK_SEMAPHORE_WAIT_ANY_BIT : 0;
            wi.semaphoreCount = n;
            wi.pSemaphores = sems.data();
            wi.pValues = values.data();
            const VkResult r = vkWaitSemaphores(ctx_.device, &wi, kTimeouts[dice.roll(3)]);
            p_.waits.fetch_add(1);
            check(r, "vkWaitSemaphores", true);
            for (uint32_t i = 0; i < n && r == VK_SUCCESS; ++i) {
                uint64_t v = 0;
                check(vkGetSemaphoreCounterValue(ctx_.device, sems[i], &v), "vkGetSemaphoreCounterValue");
                finished[i] = v >= values[i];
                if (mode != 3 && !finished[i])
                    problems_.wrong("wrong result: vkWaitSemaphores (all) returned VK_SUCCESS before a value was reached");
            }
        }
        for (uint32_t i = 0; i < n; ++i) {
            if (finished[i]) done(ws[i], true, "a timeline semaphore");
            else semaphore_board_.put_back(ws[i]);
        }
        if (std::find(finished.begin(), finished.end(), true) == finished.end()) std::this_thread::yield();
    }
}

void Traffic::signaller_thread() {
    Dice dice{0x5167a1ull};
    std::vector<Watch> ws;
    for (;;) {
        const bool last_round = watchers_may_stop();
        if (!gate_board_.take(1, ws)) {
            if (last_round) return;
            std::this_thread::yield();
            continue;
        }
        // A little late now and then: the queue waits for the host meanwhile.
        if (dice.roll(4) == 0) std::this_thread::sleep_for(std::chrono::microseconds(dice.roll(200)));
        VkSemaphoreSignalInfo si{VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO};
        si.semaphore = ws[0].s->gate;
        si.value = ws[0].value;
        check(vkSignalSemaphore(ctx_.device, &si), "vkSignalSemaphore");
    }
}

void Traffic::memory_poller_thread() {
    std::vector<Watch> ws;
    uint32_t idle_rounds = 0;
    for (;;) {
        const bool last_round = watchers_may_stop();
        if (!memory_board_.take(8, ws)) {
            if (last_round) return;
            std::this_thread::yield();
            continue;
        }
        bool any = false;
        for (const Watch& w : ws) {
            // Only the marker: no Vulkan call that could make a layer submit what it holds.
            if (w.s->tag_in(w.slot) == uint32_t(w.seq + 1)) {
                w.s->slots[w.slot].seen_in_memory.store(true);
                done(w, false, "its marker");
                any = true;
            } else {
                memory_board_.put_back(w);
            }
        }
        if (any) idle_rounds = 0;
        else if (++idle_rounds > 64) std::this_thread::sleep_for(std::chrono::microseconds(20));
        else std::this_thread::yield();
    }
}

void Traffic::idle_waiter_thread() {
    Dice dice{0x1d1e00ull};
    uint32_t round = 0;
    while (!watchers_may_stop() || !relays_done_.load()) {
        std::this_thread::sleep_for(std::chrono::microseconds(100 + dice.roll(400)));
        const bool device = ++round % 4 == 0;
        const uint32_t qi = dice.roll(uint32_t(queues_.size()));
        const QuietGate::Calls calls(quiet_);  // before the locks: a prober needs one
        if (device) lock_all();
        else queues_[qi]->lock.lock();
        // What was submitted before the wait; the queue locks keep it from changing.
        std::vector<std::pair<Submitter*, uint64_t>> before;
        for (auto& s : subs_)
            if (device || s->queue == queues_[qi]) before.emplace_back(s.get(), s->submitted_under_lock);
        const VkResult r = device ? vkDeviceWaitIdle(ctx_.device) : vkQueueWaitIdle(queues_[qi]->queue);
        p_.waits.fetch_add(1);
        check(r, device ? "vkDeviceWaitIdle" : "vkQueueWaitIdle");
        for (auto& [s, n] : before) {
            if (n == 0 || r != VK_SUCCESS) continue;
            // Its latest submission cannot have been followed by another: its marker is its own.
            const uint32_t tag = s->tag_in(uint32_t((n - 1) % kRing));
            if (tag != uint32_t(n)) {
                char what[200];
                std::snprintf(what, sizeof what,
                              "wrong result: %s returned, but submitter %u's submission %llu has not run (tag %u)",
                              device ? "vkDeviceWaitIdle" : "vkQueueWaitIdle", s->index,
                              static_cast<unsigned long long>(n - 1), tag);
                problems_.wrong(what);
            }
            advance_to(s->completed, n);
        }
        if (device) unlock_all();
        else queues_[qi]->lock.unlock();
    }
}

void Traffic::relay_thread(Relay& r, uint32_t part) {
    Dice dice{0x7e1a0000ull + r.index * 2 + part};
    // Command buffers per family, each with the stage that last used it.
    struct Ring {
        VkCommandPool pool = VK_NULL_HANDLE;
        std::vector<VkCommandBuffer> cbs;
        std::vector<uint64_t> last_stage;
        uint32_t next = 0;
    };
    std::vector<Ring> rings(families_.size());
    for (size_t f = 0; f < families_.size(); ++f) {
        rings[f].pool = create_pool(families_[f]);
        VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
        ai.commandPool = rings[f].pool;
        ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
        ai.commandBufferCount = 8;
        rings[f].cbs.resize(8);
        rings[f].last_stage.assign(8, UINT64_MAX);
        VK_CHECK(vkAllocateCommandBuffers(ctx_.device, &ai, rings[f].cbs.data()));
    }
    for (uint64_t k = part;; k += 2) {
        // Our turn: the stage before was submitted (never a wait before its signal is submitted:
        // on one queue that would wait forever).
        while (r.next_stage.load() != k && k < r.end.load()) std::this_thread::yield();
        if (k >= r.end.load()) break;
        if (time_up()) {
            r.end.store(k);
            break;
        }
        AppQueue* q = queues_[(r.index * 3 + k) % queues_.size()];
        Ring& ring = rings[size_t(std::find(families_.begin(), families_.end(), q->family) - families_.begin())];
        const uint32_t i = ring.next++ % 8;
        if (ring.last_stage[i] != UINT64_MAX) {
            // Reusable once its stage completed: wait on the relay's timeline, timeouts varied.
            VkSemaphoreWaitInfo wi{VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO};
            const uint64_t value = ring.last_stage[i] + 1;
            wi.semaphoreCount = 1;
            wi.pSemaphores = &r.timeline;
            wi.pValues = &value;
            static constexpr uint64_t kTimeouts[] = {0, 10000, UINT64_MAX};
            for (;;) {
                const VkResult res = vkWaitSemaphores(ctx_.device, &wi, kTimeouts[dice.roll(3)]);
                p_.waits.fetch_add(1);
                check(res, "vkWaitSemaphores (relay)", true);
                if (res != VK_TIMEOUT) break;
            }
            // Stage last_stage's marker, unless a later stage of the same slot overwrote it.
            const uint32_t tag = read_word(r.markers.mapped, uint32_t(ring.last_stage[i] % kRing));
            if (tag < uint32_t(ring.last_stage[i] + 1)) problems_.wrong("wrong result: a relay stage had not run "
                                                                        "when its timeline value was reached");
        }
        ring.last_stage[i] = k;
        VkCommandBuffer cb = ring.cbs[i];
        VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
        bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
        check(vkBeginCommandBuffer(cb, &bi), "vkBeginCommandBuffer (relay)");
        record_step(cb, pipe_, r.set, step_params(1000 + r.index, k));
        check(vkEndCommandBuffer(cb), "vkEndCommandBuffer (relay)");
        const uint64_t wait_value = k, signal_value = k + 1;
        const VkPipelineStageFlags stage = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT;
        VkTimelineSemaphoreSubmitInfo values{VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO};
        values.waitSemaphoreValueCount = k > 0 ? 1 : 0;
        values.pWaitSemaphoreValues = &wait_value;
        values.signalSemaphoreValueCount = 1;
        values.pSignalSemaphoreValues = &signal_value;
        VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO, &values};
        si.waitSemaphoreCount = k > 0 ? 1 : 0;
        si.pWaitSemaphores = &r.timeline;
        si.pWaitDstStageMask = &stage;
        si.commandBufferCount = 1;
        si.pCommandBuffers = &cb;
        si.signalSemaphoreCount = 1;
        si.pSignalSemaphores = &r.timeline;
        {
            std::lock_guard lock(q->lock);
            check(vkQueueSubmit(q->queue, 1, &si, VK_NULL_HANDLE), "vkQueueSubmit (relay)");
        }
        p_.submissions.fetch_add(1);
        r.next_stage.store(k + 1);
    }
    // Our command buffers go with their pools once the relay's last stage is done.
    VkSemaphoreWaitInfo wi{VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO};
    const uint64_t value = r.end.load();
    wi.semaphoreCount = 1;
    wi.pSemaphores = &r.timeline;
    wi.pValues = &value;
    check(vkWaitSemaphores(ctx_.device, &wi, UINT64_MAX), "vkWaitSemaphores (relay end)");
    p_.waits.fetch_add(1);
    for (Ring& ring : rings) vkDestroyCommandPool(ctx_.device, ring.pool, nullptr);
}

TrafficResult Traffic::run() {
    // A pool reset needs submission 8 * kRing - 1 fenced (wait_reusable).
    if (c_.fence_every == 0 || (8 * kRing) % c_.fence_every != 0) {
        std::fprintf(stderr, "stress: fence_every must divide %u\n", 8 * kRing);
        std::abort();
    }
    set_up();
    std::vector<std::thread> threads;
    for (auto& s : subs_) threads.emplace_back([this, s = s.get()] { submitter_thread(*s); });
    for (uint32_t i = 0; i < c_.fence_waiters; ++i) threads.emplace_back([this, i] { fence_waiter_thread(i); });
    if (c_.timelines) {
        threads.emplace_back([this] { semaphore_waiter_thread(); });
        threads.emplace_back([this] { signaller_thread(); });
    }
    if (c_.poll_memory) threads.emplace_back([this] { memory_poller_thread(); });
    std::vector<std::thread> relay_threads;
    for (auto& r : relays_)
        for (uint32_t part = 0; part < 2; ++part)
            relay_threads.emplace_back([this, r = r.get(), part] { relay_thread(*r, part); });
    if (c_.idle_waits) threads.emplace_back([this] { idle_waiter_thread(); });
    p_.threads.fetch_add(uint32_t(threads.size() + relay_threads.size()));
    for (auto& t : relay_threads) t.join();
    relays_done_.store(true);
    for (auto& t : threads) t.join();

    lock_all();
    check(vkDeviceWaitIdle(ctx_.device), "vkDeviceWaitIdle (end)");
    unlock_all();

    TrafficResult result;
    uint64_t checksum = vkapp::fnv1a(nullptr, 0);
    auto compare = [&](const char* what, uint32_t index, const vkapp::Buffer& data, uint64_t stream, uint64_t steps) {
        uint32_t want[kWords];
        for (uint32_t i = 0; i < kWords; ++i) want[i] = initial_word(stream, i);
        for (uint64_t k = 0; k < steps; ++k) cpu_step(want, step_params(stream, k));
        uint32_t got[kWords];
        for (uint32_t i = 0; i < kWords; ++i) got[i] = read_word(data.mapped, i);
        if (std::memcmp(got, want, sizeof got) != 0) {
            char text[160];
            std::snprintf(text, sizeof text, "wrong result: %s %u's data after %llu steps differ from the CPU's", what,
                          index, static_cast<unsigned long long>(steps));
            problems_.wrong(text);
        }
        checksum = vkapp::fnv1a(got, sizeof got, checksum);
    };
    for (auto& s : subs_) {
        compare("submitter", s->index, s->data, s->index, s->made.load());
        result.submissions += s->made.load();
    }
    for (auto& r : relays_) {
        compare("relay", r->index, r->data, 1000 + r->index, r->end.load());
        result.submissions += r->end.load();
    }
    tear_down();
    result.checksum = checksum;
    result.ok = !problems_.any();
    result.wrong_result = problems_.wrong_result();
    if (!result.ok) result.detail = problems_.first();
    return result;
}

}  // namespace

TrafficResult run_traffic(vkapp::Context& ctx, std::vector<AppQueue*>& queues, const TrafficConfig& config,
                          Progress& progress) {
    Traffic t(ctx, queues, config, progress);
    return t.run();
}

CaseOutcome outcome_of(const TrafficResult& r, const Progress& progress) {
    CaseOutcome out;
    out.result.passed = r.ok;
    out.result.wrong_result = r.wrong_result;
    out.result.detail = r.detail;
    out.result.threads = progress.threads.load();
    out.result.submissions = r.submissions;
    out.result.waits = progress.waits.load();
    out.checksum = r.checksum;
    return out;
}

bool single_step(vkapp::Context& ctx, uint64_t stream, std::string* problem) {
    vkapp::ComputePipeline pipe =
        vkapp::create_compute_pipeline(ctx, stress_step_comp, sizeof(stress_step_comp), 2, sizeof(Params));
    const VkMemoryPropertyFlags host = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    vkapp::Buffer data = vkapp::create_buffer(ctx, kDataBytes, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, host);
    vkapp::Buffer markers = vkapp::create_buffer(ctx, kMarkerBytes, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, host);
    uint32_t want[kWords];
    for (uint32_t i = 0; i < kWords; ++i) want[i] = static_cast<uint32_t*>(data.mapped)[i] = initial_word(stream, i);
    vkapp::StorageSet set = vkapp::create_storage_set(ctx, pipe, {data.buffer, markers.buffer});
    VkCommandPool pool = vkapp::create_command_pool(ctx);
    const Params p = step_params(stream, 0);
    vkapp::one_shot(ctx, pool, [&](VkCommandBuffer cb) { record_step(cb, pipe, set.set, p); });
    cpu_step(want, p);
    bool ok = true;
    for (uint32_t i = 0; i < kWords; ++i) ok = ok && read_word(data.mapped, i) == want[i];
    if (!ok) *problem = "wrong result: a short-lived device's step differs from the CPU's";
    vkDestroyCommandPool(ctx.device, pool, nullptr);
    vkapp::destroy_storage_set(ctx, set);
    vkapp::destroy_buffer(ctx, markers);
    vkapp::destroy_buffer(ctx, data);
    vkapp::destroy_compute_pipeline(ctx, pipe);
    return ok;
}

std::vector<AppQueue*> app_queues(vkapp::Context& ctx, std::vector<std::unique_ptr<AppQueue>>& storage) {
    std::vector<AppQueue*> out;
    for (size_t i = 0; i < ctx.queues.size(); ++i) {
        auto q = std::make_unique<AppQueue>();
        q->queue = ctx.queues[i];
        q->family = ctx.queue_families[i];
        out.push_back(q.get());
        storage.push_back(std::move(q));
    }
    return out;
}

}  // namespace stress
