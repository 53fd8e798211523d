// Spin, then block: the shape of every wait of the layer's (fence, semaphore and idle waits).
#pragma once

#include "core/clock.h"
#include "idle/spin_wait.h"
#include "state/object_state.h"

namespace slipstream {

// Polls `poll` for up to the site's budget, then calls `block(remaining timeout)`.
// `poll` returns VK_SUCCESS (done), VK_NOT_READY (keep polling), another positive code (stop
// polling and block), or an error (returned as is).
// Promise: VK_TIMEOUT only once the whole timeout has passed since the call. Drivers may
// return it a little early (NVIDIA 580: 1 us before a 50 us timeout); then the rest is
// waited for again.
template <typename Poll, typename Block>
VkResult spin_then_block(DeviceState& d, AdaptiveSpinBudget& site, uint64_t timeout, Poll&& poll, Block&& block) {
    const uint64_t start = now_ns();
    const uint64_t budget = site.budget_ns(uint64_t(d.settings.spin_us) * 1000, timeout, d.settings.spin_adaptive);
    if (budget > 0) {
        uint64_t spun = 0;
        uint32_t polls = 0;
        VkResult r = spin_until(poll, budget, &spun, &polls);
        d.stats.add(Counter::SpinWaits);
        d.stats.add(Counter::SpinNs, spun);
        if (r == VK_SUCCESS) {
            d.stats.add(Counter::SpinWins);
            // Done at the first look: no wait at all. Its wall time is only whatever preempted
            // the thread meanwhile, which must not teach the site that its waits are long.
            site.record(polls == 1 ? 0 : now_ns() - start);
            return r;
        }
        if (r < 0) return r;
        d.stats.add(Counter::SpinBlocked);
    } else if (timeout != 0 && d.settings.spin_us != 0) {
        d.stats.add(Counter::SpinSkipped);
    }
    VkResult r;
    for (;;) {
        const uint64_t elapsed = now_ns() - start;
        r = block(remaining_timeout(timeout, elapsed));
        if (r != VK_TIMEOUT || timeout == UINT64_MAX || now_ns() - start >= timeout) break;
        d.stats.add(Counter::EarlyTimeouts);
    }
    if (r == VK_SUCCESS) site.record(now_ns() - start);
    return r;
}

}  // namespace slipstream
