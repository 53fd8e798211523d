// The chain_step.comp kernel's parameters and its CPU reference: one step of a chain of
// dependent dispatches (chain_dispatch, fusion_rules).
#pragma once

#include <cstdint>
#include <vector>

namespace chain {

struct Params {
    uint32_t n, step, rounds, stride;
};

// Work per step varies: 1..7 inner rounds, strides 1, 3, 5, 7.
inline Params params_for(uint32_t step, uint32_t n) { return {n, step, 1 + (step * 5) % 7, 1 + 2 * (step % 4)}; }

inline void cpu_step(const std::vector<uint32_t>& src, std::vector<uint32_t>& dst, const Params& p) {
    for (uint32_t j = 0; j < p.n; ++j) {
        uint32_t x = src[j];
        uint32_t y = src[(j * p.stride + p.step) % p.n];
        for (uint32_t r = 0; r < p.rounds; ++r) {
            x = x * 1664525u + (y ^ (p.step + r));
            x ^= x >> 13;
        }
        dst[j] = x;
    }
}

}  // namespace chain
