// Deterministic pseudo-random numbers (splitmix64), identical on every platform: the suite's
// programs and the random-program tester draw from it, so that a seed means the same program
// on every machine.
#pragma once

#include <cstdint>

namespace vkapp {

struct Rng {
    uint64_t state;
    explicit Rng(uint64_t seed) : state(seed) {}
    uint64_t next() {
        uint64_t z = (state += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
    }
    uint32_t next32() { return uint32_t(next() >> 32); }
    // Uniform in [0, n) (n > 0).
    uint32_t below(uint32_t n) { return uint32_t(next() % n); }
    // True with probability percent / 100.
    bool chance(uint32_t percent) { return below(100) < percent; }
};

}  // namespace vkapp
