// Whether pooling pays (issue 22, item 4): the object pools (fence_pool.h, timeline_pool.h) save
// the driver's create and destroy, ~500 µs a fence pair on NVIDIA 580, but lavapipe charges
// ~0.07 µs, less than the pool's own path (its lock, its map of live objects, a status or
// counter read at each destroy): there pooling made the layer slower than with the pool off.
//
// Each pool learns, per device, recent averages of what the driver's create and destroy take
// (timed on the creates and destroys that reach the driver; a destroy only where its create
// was timed, so that both are of the same kind of object) and what its own path takes (timed
// at the creates it serves and the destroys it keeps), and for timeline semaphores what using
// a pooled one costs later (translating its values), per hand-out. Pooling pays while the
// pool's pair costs less than the driver's (worth_pooling). Until all four costs are measured
// and warmed up (below) it pools (misses, hits, keeps and probes measure them): no decision
// against pooling rests on first, cold calls, the pool's least of all (once pooling stops,
// nothing times the pool again).
//
// Where pooling does not pay, creates go to the driver without the pool's lock and the pool
// follows nothing. Timing costs two clock reads (~30 ns each on the machine lavapipe was
// measured on, about what its driver's whole pair costs). A site is timed for its first
// kWarmUp calls, whose fastest is its average (the first calls into cold code cost several
// times the later ones: lavapipe's first fence creates in a suite program took 0.2 to 0.8 µs,
// later ones 0.06 to 0.1), then once in kSampleEvery calls, a quarter of a nanosecond a call,
// each sample moving the average an eighth of the way towards the smaller of it and the
// site's sample before: what disturbs a timing only adds to it, so one disturbed timing
// changes no decision, and a driver that turns dear is noticed at its second sample (a driver
// at hundreds of µs then outweighs any pool at once). While pooling pays, the driver's create
// and destroy are timed on the pool's misses and on probes: creates and destroys that go to
// the driver although the pool could serve them (probe_interval), so that the driver's costs
// are known, and a driver misjudged dear found out, even where the pool serves everything.
//
// A wrong decision costs what one of the simpler configurations costs: pooling everything
// (`always`) or nothing (`off`). (While pooling does not pay, no pool path runs to be timed
// again: a pool whose warmed-up cost was misjudged dear stays so.)
//
// `always` (VK_SLIPSTREAM_OBJECT_POOL=always): pools whatever the costs, and times nothing.
//
// Thread safety: every member is an atomic read and written without a lock; racing updates
// may lose a sample or a count, which averages and sampling can spare.
#pragma once

#include "core/clock.h"
#include "objects/cost_average.h"

#include <vulkan/vulkan.h>

#include <algorithm>
#include <atomic>
#include <cstdint>

namespace slipstream::objects {

enum class CostSite : int {
    DriverCreate,   // the driver's vkCreateFence / vkCreateSemaphore
    DriverDestroy,  // the driver's vkDestroyFence / vkDestroySemaphore
    PoolCreate,     // a create the pool served, from its look to the handle handed out
    PoolDestroy,    // a destroy the pool kept, from its look to the keep
    PoolUse,        // a call that translates values of pooled objects (timeline semaphores)
    Count
};

class PoolCost {
public:
    static constexpr uint64_t kSampleEvery = 256;
    // Calls timed at each site before sampling starts; their average is the fastest of them.
    static constexpr uint64_t kWarmUp = 8;

    // Whether pooling pays: the pool's pair (its create and destroy, and what using a pooled
    // object costs more, per hand-out) below the driver's. 0: not measured: pool (a miss, a
    // hit, a keep or a probe measures it).
    static bool worth_pooling(uint64_t driver_create_ns, uint64_t driver_destroy_ns, uint64_t pool_create_ns,
                              uint64_t pool_destroy_ns, uint64_t pool_use_ns = 0) {
        if (!driver_create_ns || !driver_destroy_ns || !pool_create_ns || !pool_destroy_ns) return true;
        return pool_create_ns + pool_destroy_ns + pool_use_ns < driver_create_ns + driver_destroy_ns;
    }
    // While pooling pays, calls the pool could serve between two that go to the driver to time
    // it (0: none). A probe costs about what the driver's call costs more than the pool's pair:
    // one in driver / pool calls costs about what pooling itself does while the driver's site
    // is `warming` up, one in kSampleEvery times as many 1/kSampleEvery of it later. A driver
    // not timed yet is probed at once, a pool not timed yet is not (it is timed first).
    static uint64_t probe_interval(uint64_t driver_ns, uint64_t pool_pair_ns, bool warming) {
        if (!driver_ns) return 1;
        if (!pool_pair_ns) return 0;
        return (warming ? 1 : kSampleEvery) * std::max<uint64_t>(1, driver_ns / pool_pair_ns);
    }

    // `kind`: what is pooled, for the debug log of decisions (a string that outlives it).
    explicit PoolCost(bool always = false, const char* kind = "object pool") : always_(always), kind_(kind) {}
    PoolCost(const PoolCost&) = delete;
    PoolCost& operator=(const PoolCost&) = delete;

    // Whether pooling pays with what this pool has learnt (always with `always`): one load,
    // decided anew at each sample.
    bool pays() const { return always_ || pays_.load(std::memory_order_relaxed); }
    // A call at `site` is about to run: whether to time it (fewer than kWarmUp samples so far,
    // or one call in kSampleEvery; never with `always`). Counts the call.
    bool timed(CostSite site) {
        if (always_) return false;
        const uint64_t n = loose_increment(calls_[int(site)]);
        return n % kSampleEvery == 0 || seen_[int(site)].load(std::memory_order_relaxed) < kWarmUp;
    }
    // A timed call. The site's average is the fastest of its first kWarmUp samples, then moves
    // an eighth of the way towards the smaller of each sample and the one before: what
    // disturbs a timing (a preemption, a page fault, a first call into cold code) only adds to
    // it, so one slow sample moves nothing, and a real change shows in two samples in a row.
    void record(CostSite site, uint64_t ns);
    // While pooling pays, at a create (`site` DriverCreate) or destroy (DriverDestroy) the pool
    // could serve: whether it goes to the driver instead, timed (one in probe_interval), so
    // that the driver's costs are known, and stay known, where the pool serves everything.
    bool probe(CostSite site);
    // The pool handed an object out (PoolUse is charged per hand-out).
    void handed_out() { loose_increment(handouts_); }

    uint64_t average(CostSite site) const { return avg_[int(site)].load(std::memory_order_relaxed); }
    // The site's average once it has kWarmUp samples, else 0 (unknown).
    uint64_t warm(CostSite site) const {
        return seen_[int(site)].load(std::memory_order_relaxed) < kWarmUp ? 0 : average(site);
    }
    // What translating values costs per hand-out: the average translating call times the
    // calls per hand-out so far.
    uint64_t use_per_handout() const;
    // The driver's create of `handle` was timed: its destroy is timed too, if it reaches the
    // driver (vkDestroySemaphore cannot tell a timeline semaphore from a binary one without a
    // lock, and the driver's destroy of a binary one says nothing of a timeline one).
    void watch(uint64_t handle) { watched_.store(handle, std::memory_order_relaxed); }
    // At a destroy that reaches the driver: whether it is of the watched handle (then it is
    // timed, and watched no more).
    bool watched(uint64_t handle) {
        return handle && watched_.load(std::memory_order_relaxed) == handle &&
               watched_.exchange(0, std::memory_order_relaxed) == handle;
    }
    bool always() const { return always_; }

private:
    static constexpr int kSites = int(CostSite::Count);
    const bool always_;
    const char* const kind_;
    std::atomic<uint64_t> avg_[kSites] = {};
    std::atomic<uint64_t> last_[kSites] = {};         // the last sample of each site
    std::atomic<uint64_t> seen_[kSites] = {};         // samples of each site
    std::atomic<uint64_t> calls_[kSites] = {};        // calls of each site (timed or not)
    std::atomic<uint64_t> since_probe_[kSites] = {};  // DriverCreate, DriverDestroy: calls since a probe
    std::atomic<uint64_t> handouts_{0};
    std::atomic<uint64_t> watched_{0};
    std::atomic<bool> pays_{true};  // nothing measured yet: pool
};

// How a create goes: not plain (or no pool), to the driver because pooling does not pay,
// through the pool, or to the driver as a probe while pooling pays (followed like a miss).
enum class Pooling { None, NotWorth, Pool, Probe };
inline Pooling pooling(PoolCost* cost) {
    if (!cost) return Pooling::None;
    if (!cost->pays()) return Pooling::NotWorth;
    return cost->probe(CostSite::DriverCreate) ? Pooling::Probe : Pooling::Pool;
}
// Whether the pool follows what the driver creates for a request that went `how`.
inline bool follows(Pooling how) { return how == Pooling::Pool || how == Pooling::Probe; }

template <typename Handle>
uint64_t handle_bits(Handle handle) {
    return uint64_t(reinterpret_cast<uintptr_t>(handle));
}

// Times one call at `site` where `cost` asks for it (PoolCost::timed); stop() records it,
// cancel() drops it (a pool path that found nothing, a call that failed), going out of scope
// stops it.
class CostTimer {
public:
    CostTimer(PoolCost* cost, CostSite site) : CostTimer(cost, site, cost && cost->timed(site)) {}
    // Timed as the caller decided.
    CostTimer(PoolCost* cost, CostSite site, bool timed)
        : cost_(timed ? cost : nullptr), site_(site), start_(cost_ ? now_ns() : 0) {}
    ~CostTimer() { stop(); }
    CostTimer(const CostTimer&) = delete;
    CostTimer& operator=(const CostTimer&) = delete;
    // Whether it was timed.
    bool stop() {
        if (!cost_) return false;
        cost_->record(site_, now_ns() - start_);
        cost_ = nullptr;
        return true;
    }
    void cancel() { cost_ = nullptr; }

private:
    PoolCost* cost_;
    CostSite site_;
    uint64_t start_;
};

// The driver's `create` (of `*handle`) for a request that went `how`: timed where `cost` asks
// or as a probe, and then the handle watched so that its destroy is timed too.
template <typename Handle, typename Create>
VkResult driver_create(PoolCost* cost, Pooling how, Handle* handle, Create create) {
    CostTimer timer(cost, CostSite::DriverCreate,
                    how == Pooling::Probe || (cost && cost->timed(CostSite::DriverCreate)));
    const VkResult r = create();
    if (r != VK_SUCCESS) {
        timer.cancel();
        return r;
    }
    if (timer.stop()) cost->watch(handle_bits(*handle));
    return r;
}

}  // namespace slipstream::objects
