// Recent averages of what calls cost, and the counts that sample which calls to time: what the
// allocation cache (alloc_cache.h) and the object pools (pool_cost.h) learn their costs with.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>

namespace slipstream::objects {

// Recent samples weigh most; one slow call (a page fault) weighs little (an eighth). Racing
// updates may lose a sample, which an average can spare.
inline void running_average(std::atomic<uint64_t>& avg, uint64_t sample) {
    const uint64_t old = avg.load(std::memory_order_relaxed);
    avg.store(old ? (old * 7 + sample) / 8 : sample, std::memory_order_relaxed);
}

// What a timed call teaches: the smaller of its `sample` and the one timed before it at the same
// site (`last`, which it replaces). What disturbs a timing (a preemption, a page fault, a first
// call into cold code) only adds to it, so one disturbed sample moves no average, where an eighth
// of a preempted millisecond would outweigh a sub-microsecond cost for many samples; a real
// change shows in two samples in a row.
inline uint64_t undisturbed(std::atomic<uint64_t>& last, uint64_t sample) {
    const uint64_t before = last.exchange(sample, std::memory_order_relaxed);
    return before ? std::min(before, sample) : sample;
}

// A count that may lose an increment to a racing thread (no locked instruction): for sampling.
template <typename T>
T loose_increment(std::atomic<T>& count) {
    const T n = count.load(std::memory_order_relaxed);
    count.store(n + 1, std::memory_order_relaxed);
    return n;
}

}  // namespace slipstream::objects
