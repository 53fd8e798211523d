#include "objects/pool_cost.h"

#include "core/log.h"

namespace slipstream::objects {

void PoolCost::record(CostSite site, uint64_t ns) {
    const int i = int(site);
    ns = ns ? ns : 1;
    const uint64_t filtered = undisturbed(last_[i], ns);
    const uint64_t old = avg_[i].load(std::memory_order_relaxed);
    if (loose_increment(seen_[i]) < kWarmUp) avg_[i].store(old ? std::min(old, ns) : ns, std::memory_order_relaxed);
    else running_average(avg_[i], filtered);
    const bool pays = worth_pooling(warm(CostSite::DriverCreate), warm(CostSite::DriverDestroy),
                                    warm(CostSite::PoolCreate), warm(CostSite::PoolDestroy), use_per_handout());
    if (pays_.exchange(pays, std::memory_order_relaxed) != pays && log_enabled(LogLevel::Debug))
        log(LogLevel::Debug,
            "%s: pooling %s (driver: create %llu + destroy %llu ns; pool: create %llu + destroy %llu + use %llu ns)",
            kind_, pays ? "pays again" : "does not pay", (unsigned long long)average(CostSite::DriverCreate),
            (unsigned long long)average(CostSite::DriverDestroy), (unsigned long long)average(CostSite::PoolCreate),
            (unsigned long long)average(CostSite::PoolDestroy), (unsigned long long)use_per_handout());
}

bool PoolCost::probe(CostSite site) {
    if (always_) return false;
    const uint64_t pool_create = average(CostSite::PoolCreate), pool_destroy = average(CostSite::PoolDestroy);
    const uint64_t pool = pool_create && pool_destroy ? pool_create + pool_destroy + use_per_handout() : 0;
    const uint64_t interval =
        probe_interval(average(site), pool, seen_[int(site)].load(std::memory_order_relaxed) < kWarmUp);
    if (!interval || loose_increment(since_probe_[int(site)]) + 1 < interval) return false;
    since_probe_[int(site)].store(0, std::memory_order_relaxed);
    return true;
}

uint64_t PoolCost::use_per_handout() const {
    const uint64_t handouts = handouts_.load(std::memory_order_relaxed);
    if (!handouts) return 0;
    const double calls = double(calls_[int(CostSite::PoolUse)].load(std::memory_order_relaxed));
    return uint64_t(double(average(CostSite::PoolUse)) * calls / double(handouts));
}

}  // namespace slipstream::objects
