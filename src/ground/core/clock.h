// The layer's one clock: steady, in nanoseconds. Fusion's deadlines, the flusher's wake-ups and
// the waits' spin budgets all read it, so it sits below every floor that does.
#pragma once

#include <chrono>
#include <cstdint>

namespace slipstream {

inline uint64_t now_ns() {
    return uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(
                        std::chrono::steady_clock::now().time_since_epoch())
                        .count());
}

}  // namespace slipstream
