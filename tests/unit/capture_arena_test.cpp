// The capture arena: alignment, growth in blocks, dedicated blocks, the limit, reset and
// release.
#include "capture/capture_arena.h"

#include <gtest/gtest.h>

#include <cstring>
#include <set>
#include <vector>

using slipstream::capture::CaptureArena;

TEST(CaptureArena, AlignsEveryAllocation) {
    CaptureArena a;
    for (size_t align : {1, 2, 4, 8, 16}) {
        for (size_t size : {1, 3, 7, 24, 100}) {
            a.allocate(1, 1);  // knock the cursor off alignment
            void* p = a.allocate(size, align);
            ASSERT_NE(p, nullptr);
            EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % align, 0u) << "size " << size << " align " << align;
        }
    }
    auto* d = a.allocate_array<double>(3);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(d) % alignof(double), 0u);
}

TEST(CaptureArena, AllocationsDoNotOverlap) {
    CaptureArena a;
    std::vector<std::pair<unsigned char*, size_t>> spans;
    for (size_t i = 0; i < 2000; ++i) {
        size_t size = 1 + (i * 37) % 300;
        auto* p = static_cast<unsigned char*>(a.allocate(size, 8));
        ASSERT_NE(p, nullptr);
        std::memset(p, int(i & 0xff), size);
        spans.push_back({p, size});
    }
    for (size_t i = 0; i < spans.size(); ++i)
        for (size_t j = 0; j < spans[i].second; ++j) ASSERT_EQ(spans[i].first[j], i & 0xff) << i;
}

TEST(CaptureArena, GrowsInDoublingBlocksUpToTheMaximum) {
    CaptureArena a;
    EXPECT_EQ(a.blocks(), 0u);
    EXPECT_EQ(a.reserved(), 0u);
    a.allocate(16, 8);
    EXPECT_EQ(a.blocks(), 1u);
    EXPECT_EQ(a.reserved(), CaptureArena::kFirstBlock);
    // Fill well past several blocks with small allocations.
    size_t total = 0;
    while (total < 4 * CaptureArena::kMaxBlock) {
        ASSERT_NE(a.allocate(1000, 8), nullptr);
        total += 1000;
    }
    // 4 + 8 + ... + 256 KiB, then 256 KiB blocks: far fewer blocks than allocations.
    EXPECT_GE(a.blocks(), 7u);
    EXPECT_LE(a.blocks(), 12u);
    EXPECT_GE(a.reserved(), a.used());
    EXPECT_LE(a.reserved(), a.used() + 2 * CaptureArena::kMaxBlock);
}

TEST(CaptureArena, LargeAllocationsGetABlockOfTheirOwnAndKeepTheCurrentOne) {
    CaptureArena a;
    void* small1 = a.allocate(64, 8);
    size_t before = a.reserved();
    void* big = a.allocate(CaptureArena::kMaxBlock, 8);
    ASSERT_NE(big, nullptr);
    EXPECT_EQ(a.reserved(), before + CaptureArena::kMaxBlock + 16);
    // The next small allocation still goes into the first block, right after the first.
    auto* small2 = static_cast<char*>(a.allocate(64, 8));
    EXPECT_EQ(small2, static_cast<char*>(small1) + 64);
}

TEST(CaptureArena, ResetKeepsOneBlockAndReusesIt) {
    CaptureArena a;
    void* first = a.allocate(100, 8);
    for (int i = 0; i < 100; ++i) a.allocate(1000, 8);
    a.allocate(CaptureArena::kMaxBlock * 2, 8);  // a dedicated block: never kept
    EXPECT_GT(a.blocks(), 2u);
    a.reset();
    EXPECT_EQ(a.blocks(), 1u);
    EXPECT_EQ(a.used(), 0u);
    EXPECT_LE(a.reserved(), CaptureArena::kMaxBlock);
    // The kept block is the largest ordinary one, and the next allocation starts it over.
    void* again = a.allocate(100, 8);
    ASSERT_NE(again, nullptr);
    EXPECT_NE(again, first);  // the 4 KiB block was not the one kept
    size_t kept = a.reserved();
    a.reset();
    EXPECT_EQ(a.allocate(100, 8), again);
    EXPECT_EQ(a.reserved(), kept);
}

TEST(CaptureArena, ReleaseFreesEverything) {
    CaptureArena a;
    for (int i = 0; i < 50; ++i) a.allocate(1000, 8);
    a.release();
    EXPECT_EQ(a.blocks(), 0u);
    EXPECT_EQ(a.reserved(), 0u);
    EXPECT_EQ(a.used(), 0u);
    EXPECT_NE(a.allocate(8, 8), nullptr);  // usable again
}

TEST(CaptureArena, StopsAtItsLimitUntilReset) {
    CaptureArena a(64 * 1024);
    size_t handed = 0;
    while (a.allocate(1000, 8)) handed += 1000;
    EXPECT_TRUE(a.exhausted());
    EXPECT_LE(a.reserved(), 64u * 1024);
    EXPECT_GT(handed, 32u * 1024);
    EXPECT_EQ(a.allocate(1, 1), nullptr);  // stays exhausted, even for what would fit
    EXPECT_EQ(a.allocate_array<uint64_t>(uint64_t(1) << 62), nullptr);
    a.reset();
    EXPECT_FALSE(a.exhausted());
    EXPECT_NE(a.allocate(1000, 8), nullptr);
}

TEST(CaptureArena, RefusesOverflowingCounts) {
    CaptureArena a;
    EXPECT_EQ(a.allocate_array<uint64_t>(~uint64_t(0) / 4), nullptr);
    EXPECT_TRUE(a.exhausted());
}
