#include "idle/spin_wait.h"

#include <algorithm>

namespace slipstream {

uint64_t AdaptiveSpinBudget::budget_ns(uint64_t configured_ns, uint64_t timeout_ns, bool adaptive) {
    if (timeout_ns == 0 || configured_ns == 0) return 0;
    uint64_t budget = std::min(configured_ns, timeout_ns);
    if (!adaptive) return budget;
    const uint64_t typical = typical_ns_.load(std::memory_order_relaxed);
    if (typical < kSkipFactor * configured_ns) return budget;
    // Waits here are long: block at once, except for an occasional probe.
    if (skipped_.fetch_add(1, std::memory_order_relaxed) % kProbeInterval == kProbeInterval - 1) return budget;
    return 0;
}

void AdaptiveSpinBudget::record(uint64_t waited_ns) {
    // Exponential moving average with weight 1/4: a few long waits are enough to stop
    // spinning, a few short ones to start again. Races between threads lose an update at
    // worst, which only delays the adaptation by one wait.
    const uint64_t old = typical_ns_.load(std::memory_order_relaxed);
    const uint64_t next = old == 0 ? waited_ns : old - old / 4 + waited_ns / 4;
    typical_ns_.store(next, std::memory_order_relaxed);
}

}  // namespace slipstream
