// Recent averages of what calls cost, and the counts that sample which calls to time: what the
// allocation cache (alloc_cache.h) and the object pools (pool_cost.h) learn their costs with.
#pragma once

#include <atomic>
#include <cstdint>

namespace slipstream::objects {

// Recent samples weigh most; one slow call (a page fault) weighs little (an eighth). Racing
// updates may lose a sample, which an average can spare.
inline void running_average(std::atomic<uint64_t>& avg, uint64_t sample) {
    const uint64_t old = avg.load(std::memory_order_relaxed);
    avg.store(old ? (old * 7 + sample) / 8 : sample, std::memory_order_relaxed);
}

// A count that may lose an increment to a racing thread (no locked instruction): for sampling.
template <typename T>
T loose_increment(std::atomic<T>& count) {
    const T n = count.load(std::memory_order_relaxed);
    count.store(n + 1, std::memory_order_relaxed);
    return n;
}

}  // namespace slipstream::objects
