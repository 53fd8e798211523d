// Spin-then-block waiting: poll for up to a budget before falling back to the driver's
// blocking wait, which costs a scheduler wake-up (~30 µs) on top of the GPU work.
//
// AdaptiveSpinBudget learns how long waits at one site (a device's fence waits, its semaphore
// waits, its idle waits) really take, and stops spinning where they are usually much longer
// than the budget, so long GPU jobs do not burn a core. It still spins on every 16th such
// wait, to notice when waits get short again.
#pragma once

#include "core/clock.h"
#include "core/cpu_relax.h"

#include <vulkan/vulkan.h>

#include <atomic>
#include <cstdint>

namespace slipstream {

class AdaptiveSpinBudget {
public:
    // Spinning stops paying when waits usually last this many budgets or more.
    static constexpr uint64_t kSkipFactor = 4;
    static constexpr uint32_t kProbeInterval = 16;

    // How long to spin before blocking for a wait with `timeout_ns` (0: do not spin).
    uint64_t budget_ns(uint64_t configured_ns, uint64_t timeout_ns, bool adaptive);
    // What the wait cost in the end: total time from its start until it returned success.
    void record(uint64_t waited_ns);
    uint64_t typical_wait_ns() const { return typical_ns_.load(std::memory_order_relaxed); }

private:
    std::atomic<uint64_t> typical_ns_{0};  // moving average of recent waits; 0 = none seen
    std::atomic<uint32_t> skipped_{0};
};

// Polls `poll` (VK_SUCCESS: done, VK_NOT_READY: not yet, anything else: an error to return)
// until it is done or `budget_ns` has passed. Returns the last poll result; `spun_ns` gets the
// time spent, `polls` (if given) how many polls it took.
template <typename Poll>
VkResult spin_until(Poll&& poll, uint64_t budget_ns, uint64_t* spun_ns, uint32_t* polls = nullptr) {
    const uint64_t start = now_ns();
    VkResult r;
    uint32_t n = 0;
    for (;;) {
        r = poll();
        ++n;
        if (r != VK_NOT_READY) break;
        if (now_ns() - start >= budget_ns) break;
        for (int i = 0; i < 8; ++i) cpu_relax();
    }
    *spun_ns = now_ns() - start;
    if (polls) *polls = n;
    return r;
}

// The timeout left after `elapsed_ns` of a wait that allowed `timeout_ns` (UINT64_MAX stays
// infinite).
inline uint64_t remaining_timeout(uint64_t timeout_ns, uint64_t elapsed_ns) {
    if (timeout_ns == UINT64_MAX) return UINT64_MAX;
    return elapsed_ns >= timeout_ns ? 0 : timeout_ns - elapsed_ns;
}

}  // namespace slipstream
