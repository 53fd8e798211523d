#include "core/handle_map.h"

#include <gtest/gtest.h>

#include <atomic>
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
