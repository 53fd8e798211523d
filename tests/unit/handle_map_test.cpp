#include "core/handle_map.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

using slipstream::HandleMap;

TEST(HandleMap, InsertFindErase) {
    HandleMap<void*, int> map;
    int a, b;
    EXPECT_EQ(map.find(&a), nullptr);
    map.insert(&a, std::make_unique<int>(1));
    map.insert(&b, std::make_unique<int>(2));
    ASSERT_NE(map.find(&a), nullptr);
    EXPECT_EQ(*map.find(&a), 1);
    EXPECT_EQ(*map.find(&b), 2);
    auto out = map.erase(&a);
    ASSERT_TRUE(out);
    EXPECT_EQ(*out, 1);
    EXPECT_EQ(map.find(&a), nullptr);
    EXPECT_EQ(map.erase(&a), nullptr);
    EXPECT_EQ(map.size(), 1u);
}

// Every shard takes handles, for pointer-like (aligned) keys and for small driver cookies.
template <unsigned kShards>
void expect_every_shard_used() {
    std::vector<int> hits(kShards, 0);
    for (uint64_t i = 1; i <= 64 * kShards; ++i) {
        ++hits[HandleMap<uint64_t, int, kShards>::shard_index(0x7f0000000000ull + i * 64)];
        ++hits[HandleMap<uint64_t, int, kShards>::shard_index(i)];
    }
    for (unsigned s = 0; s < kShards; ++s) EXPECT_GT(hits[s], 0) << "shard " << s << " of " << kShards;
}

TEST(HandleMap, EveryShardIsUsed) {
    expect_every_shard_used<16>();
    expect_every_shard_used<64>();
}

TEST(HandleMap, EraseIfAndForEach) {
    HandleMap<uint64_t, int> map;
    for (uint64_t i = 1; i <= 100; ++i) map.insert(i * 64, std::make_unique<int>(int(i)));
    map.erase_if([](const int& v) { return v % 2 == 0; });
    int sum = 0;
    map.for_each([&](uint64_t, const int& v) { sum += v; });
    EXPECT_EQ(sum, 2500);  // 1 + 3 + ... + 99
    EXPECT_EQ(map.size(), 50u);
}

// Readers on every thread while writers insert and erase other keys: run under
// ThreadSanitizer (SLIPSTREAM_SANITIZE=thread) this proves the locking.
TEST(HandleMap, ConcurrentReadersAndWriters) {
    HandleMap<uint64_t, uint64_t> map;
    for (uint64_t i = 0; i < 256; ++i) map.insert(i, std::make_unique<uint64_t>(i));
    std::atomic<bool> stop{false};
    std::atomic<uint64_t> found{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 3; ++t)
        threads.emplace_back([&] {
            while (!stop.load()) {
                for (uint64_t i = 0; i < 256; ++i) {
                    uint64_t* v = map.find(i);
                    ASSERT_NE(v, nullptr);
                    EXPECT_EQ(*v, i);
                    found.fetch_add(1);
                }
            }
        });
    // Keep writing until the readers have really run alongside (threads may start late).
    for (uint64_t round = 0; round < 2000 || found.load() < 10000; ++round) {
        uint64_t key = 1000 + round % 64;
        map.insert(key, std::make_unique<uint64_t>(key));
        map.erase(key);
    }
    stop = true;
    for (auto& t : threads) t.join();
    EXPECT_GT(found.load(), 0u);
    EXPECT_EQ(map.size(), 256u);
}

namespace {
const void* key_of(uint64_t n) { return reinterpret_cast<const void*>(uintptr_t(n * 64 + 64)); }
}  // namespace

TEST(HandleCache, RememberFindEraseClear) {
    slipstream::HandleCache<uint64_t, 16> cache;
    uint64_t a = 1, b = 2;
    EXPECT_EQ(cache.find(key_of(1)), nullptr);
    cache.remember(key_of(1), &a);
    EXPECT_EQ(cache.find(key_of(1)), &a);
    // A key that shares the slot replaces it; the first then misses (the map answers it).
    uint64_t other = 2;
    while (cache.find(key_of(1)) == &a && other < 10000) cache.remember(key_of(other++), &b);
    EXPECT_EQ(cache.find(key_of(1)), nullptr);
    EXPECT_EQ(cache.find(key_of(other - 1)), &b);
    // Erasing another key of the slot leaves it; erasing its own clears it.
    cache.erase(key_of(1));
    EXPECT_EQ(cache.find(key_of(other - 1)), &b);
    cache.erase(key_of(other - 1));
    EXPECT_EQ(cache.find(key_of(other - 1)), nullptr);
    cache.remember(key_of(3), &a);
    cache.clear();
    EXPECT_EQ(cache.find(key_of(3)), nullptr);
}

// Readers of their own keys while other threads remember and erase keys that share slots with
// them: a reader sees its own value or a miss, never another key's (run under ThreadSanitizer).
TEST(HandleCache, ConcurrentRememberFindErase) {
    slipstream::HandleCache<uint64_t, 128> cache;  // readers' keys mostly apart, writers' among them
    constexpr uint64_t kKeys = 64;
    std::vector<uint64_t> values(kKeys * 2);
    for (uint64_t i = 0; i < values.size(); ++i) values[i] = i;
    std::atomic<bool> stop{false};
    std::atomic<uint64_t> hits{0};
    std::atomic<int> started{0};
    std::vector<std::thread> threads;
    for (uint64_t t = 0; t < 3; ++t)
        threads.emplace_back([&, t] {
            started.fetch_add(1);
            while (!stop.load()) {
                for (uint64_t i = t; i < kKeys; i += 3) {
                    if (uint64_t* v = cache.find(key_of(i))) {
                        EXPECT_EQ(*v, i);
                        hits.fetch_add(1);
                    } else {
                        cache.remember(key_of(i), &values[i]);
                    }
                }
            }
        });
    // The writer starts once the readers run (sanitizers start threads late), then goes on
    // until they have hit 1,000 times, for 2 s at most (ThreadSanitizer runs threads unevenly).
    while (started.load() < 3) std::this_thread::yield();
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    for (uint64_t round = 0; round < 2000 || (hits.load() < 1000 && std::chrono::steady_clock::now() < until);
         ++round) {
        const uint64_t k = kKeys + round % kKeys;
        cache.remember(key_of(k), &values[k]);
        cache.erase(key_of(k));
    }
    stop = true;
    for (auto& t : threads) t.join();
    EXPECT_GT(hits.load(), 0u);
}
