#include "objects/alloc_cache.h"

#include <gtest/gtest.h>

#include <cstdint>

using slipstream::objects::AllocCache;
using slipstream::objects::AllocCacheLimits;

namespace {

VkDeviceMemory mem(uintptr_t n) { return reinterpret_cast<VkDeviceMemory>(n); }

constexpr VkDeviceSize KiB = 1024, MiB = 1024 * KiB;

// Type 0: device-local only (heap 0); type 1: host-visible coherent (heap 1); type 2: host-visible
// non-coherent (heap 1); type 3: lazily allocated; type 4: protected.
AllocCacheLimits limits(uint64_t bound = 8 * MiB, bool host_invisible = false, uint32_t max_allocations = 4096) {
    AllocCacheLimits l;
    l.memory.memoryHeapCount = 2;
    l.memory.memoryHeaps[0] = {uint64_t(8) << 30, VK_MEMORY_HEAP_DEVICE_LOCAL_BIT};
    l.memory.memoryHeaps[1] = {uint64_t(4) << 30, 0};
    l.memory.memoryTypeCount = 5;
    l.memory.memoryTypes[0] = {VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0};
    l.memory.memoryTypes[1] = {VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT, 1};
    l.memory.memoryTypes[2] = {VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_CACHED_BIT, 1};
    l.memory.memoryTypes[3] = {VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT | VK_MEMORY_PROPERTY_LAZILY_ALLOCATED_BIT, 0};
    l.memory.memoryTypes[4] = {VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT | VK_MEMORY_PROPERTY_PROTECTED_BIT, 0};
    l.non_coherent_atom = 64;
    l.max_allocations = max_allocations;
    l.heap_bound[0] = l.heap_bound[1] = bound;
    l.host_invisible_types = host_invisible;
    return l;
}

// Allocates (as the driver would) and frees `m` through the cache; true if kept.
bool free_one(AllocCache& c, VkDeviceMemory m, std::vector<VkDeviceMemory>* evicted = nullptr) {
    bool mapped = false;
    uint32_t type = 0;
    if (!c.wants(m, &mapped, &type)) return false;
    std::vector<VkDeviceMemory> ev;
    const bool kept = c.keep(m, &ev);
    if (evicted) *evicted = ev;
    return kept;
}

}  // namespace

TEST(AllocCache, DefaultBoundIsSmallerOf256MiBAnd5Percent) {
    EXPECT_EQ(AllocCache::heap_bound(uint64_t(80) << 30, 0), 256 * MiB);  // an H200's 80+ GiB heap
    EXPECT_EQ(AllocCache::heap_bound(uint64_t(1) << 30, 0), (uint64_t(1) << 30) / 20);
    EXPECT_EQ(AllocCache::heap_bound(uint64_t(1) << 30, 3), 3 * MiB);
}

// Budget queries: every millisecond while they are cheap; spaced to at most 1% of the time when
// a query is dear; never more than 100 ms apart.
TEST(AllocCache, BudgetQueriesFollowTheirCost) {
    EXPECT_EQ(AllocCache::budget_interval_ns(0), 1'000'000);
    EXPECT_EQ(AllocCache::budget_interval_ns(2'000), 1'000'000);       // 2 us: 0.2% at 1 ms
    EXPECT_EQ(AllocCache::budget_interval_ns(10'000), 1'000'000);      // 10 us: exactly 1%
    EXPECT_EQ(AllocCache::budget_interval_ns(150'000), 15'000'000);    // 150 us (a kernel call)
    EXPECT_EQ(AllocCache::budget_interval_ns(5'000'000), 100'000'000);  // capped
}

// Keeping memory the host zeroes pays only while zeroing costs less than the driver charged.
TEST(AllocCache, KeepsOnlyWhatZeroingBeats) {
    EXPECT_TRUE(AllocCache::worth_keeping(64 << 10, 0, 100));        // zeroing not measured yet
    EXPECT_TRUE(AllocCache::worth_keeping(64 << 10, 14, 0));         // driver not timed
    EXPECT_FALSE(AllocCache::worth_keeping(64 << 10, 14, 120));      // lavapipe: 0.9 us to zero, 0.12 to allocate
    EXPECT_TRUE(AllocCache::worth_keeping(64 << 10, 100, 300'000));  // a driver charging 300 us
    EXPECT_FALSE(AllocCache::worth_keeping(VkDeviceSize(64) << 20, 100, 1'000'000));  // 6.5 ms to zero 64 MiB
}

// A host-zeroed type learns what zeroing and the driver's allocations cost; while zeroing
// costs more, frees go back to the driver; device-local memory (zeroed by the GPU, or not at
// all) is kept whatever zeroing costs; a driver that turns dear makes keeping pay again.
TEST(AllocCache, FreesWhatTheDriverMakesCheaply) {
    AllocCacheLimits l = limits(64 * MiB, true);
    l.zero = true;
    AllocCache c(l);
    EXPECT_TRUE(c.host_zeroed(1));
    EXPECT_FALSE(c.host_zeroed(0));
    c.allocated(mem(1), true, 1, 0, 64 * KiB, 120);  // cheap to make
    c.allocated(mem(3), true, 0, 0, 64 * KiB, 120);  // device-local
    EXPECT_TRUE(free_one(c, mem(1)));  // zeroing not measured yet: kept
    ASSERT_EQ(c.take(1, 0, 64 * KiB).memory, mem(1));
    c.zeroed(1, 64 * KiB, 900);  // ~14 ns per KiB
    bool mapped = false, not_worth = false;
    uint32_t type = 0;
    EXPECT_FALSE(c.wants(mem(1), &mapped, &type, nullptr, &not_worth));  // 0.9 us to zero, 0.12 to make
    EXPECT_TRUE(not_worth);
    EXPECT_TRUE(free_one(c, mem(3)));
    EXPECT_EQ(c.kept(), 1u);
    EXPECT_EQ(c.live(), 0u);
    // One slow allocation barely moves the average; a driver that stays dear does.
    c.allocated(mem(2), true, 1, 0, 64 * KiB, 5'000);
    EXPECT_FALSE(free_one(c, mem(2)));
    for (int i = 0; i < 16; ++i) c.allocated(mem(10 + i), true, 1, 0, 64 * KiB, 500'000);
    EXPECT_TRUE(free_one(c, mem(10)));
}

// A zeroing disturbed once (the thread preempted for a millisecond in the middle of a 4 KiB
// memset) changes no decision; zeroing that stays slow does. Without the filter an eighth of
// that sample made 1 MiB look 30 ms to zero, and frees went back to a driver charging 200 us.
TEST(AllocCache, OneDisturbedZeroingChangesNoDecision) {
    AllocCacheLimits l = limits(64 * MiB, true);
    l.zero = true;
    AllocCache c(l);
    c.allocated(mem(1), true, 1, 0, MiB, 200'000);  // a dear driver
    c.zeroed(1, 64 * KiB, 6'400);                     // 100 ns per KiB: 1 MiB in ~0.1 ms
    EXPECT_TRUE(c.pays(1, MiB));
    c.zeroed(1, 4 * KiB, 1'000'000);
    EXPECT_TRUE(c.pays(1, MiB));
    c.zeroed(1, 64 * KiB, 6'400);
    EXPECT_TRUE(c.pays(1, MiB));
    for (int i = 0; i < 16; ++i) c.zeroed(1, 64 * KiB, 64'000);  // 1 us per KiB from now on
    EXPECT_FALSE(c.pays(1, MiB));
}

TEST(AllocCache, PlainRequests) {
    VkMemoryAllocateInfo info{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    info.allocationSize = 4096;
    EXPECT_EQ(AllocCache::plain(info, nullptr), VkMemoryAllocateFlags(0));
    VkAllocationCallbacks callbacks{};
    EXPECT_FALSE(AllocCache::plain(info, &callbacks));
    VkMemoryAllocateFlagsInfo flags{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO};
    info.pNext = &flags;
    EXPECT_EQ(AllocCache::plain(info, nullptr), VkMemoryAllocateFlags(0));
    flags.flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT;
    EXPECT_EQ(AllocCache::plain(info, nullptr), VkMemoryAllocateFlags(VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT));
    flags.flags |= VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_CAPTURE_REPLAY_BIT;
    EXPECT_FALSE(AllocCache::plain(info, nullptr));
    flags.flags = VK_MEMORY_ALLOCATE_DEVICE_MASK_BIT;
    flags.deviceMask = 1;
    EXPECT_FALSE(AllocCache::plain(info, nullptr));
    VkMemoryDedicatedAllocateInfo dedicated{VK_STRUCTURE_TYPE_MEMORY_DEDICATED_ALLOCATE_INFO};
    info.pNext = &dedicated;
    EXPECT_FALSE(AllocCache::plain(info, nullptr));
    VkExportMemoryAllocateInfo exported{VK_STRUCTURE_TYPE_EXPORT_MEMORY_ALLOCATE_INFO};
    info.pNext = &exported;
    EXPECT_FALSE(AllocCache::plain(info, nullptr));
}

TEST(AllocCache, WhichTypesAndSizesQualify) {
    AllocCache zeroing(limits());
    EXPECT_FALSE(zeroing.qualifies(0, 4096));  // device-local only: zeroing needs the GPU
    EXPECT_TRUE(zeroing.qualifies(1, 4096));
    EXPECT_TRUE(zeroing.qualifies(2, 4096));
    EXPECT_FALSE(zeroing.qualifies(3, 4096));  // lazily allocated
    EXPECT_FALSE(zeroing.qualifies(4, 4096));  // protected
    EXPECT_FALSE(zeroing.qualifies(5, 4096));  // no such type
    EXPECT_FALSE(zeroing.qualifies(1, 0));
    EXPECT_FALSE(zeroing.qualifies(1, 9 * MiB));  // above the heap's bound
    AllocCache not_zeroing(limits(1024 * MiB, true));
    EXPECT_TRUE(not_zeroing.qualifies(0, 4096));
    EXPECT_TRUE(not_zeroing.qualifies(0, AllocCache::kSizeCap));
    EXPECT_FALSE(not_zeroing.qualifies(0, AllocCache::kSizeCap + 1));
    EXPECT_FALSE(not_zeroing.qualifies(3, 4096));
}

TEST(AllocCache, RecyclesWithinAnEighthAbove) {
    AllocCache c(limits(64 * MiB, true));
    c.allocated(mem(1), true, 0, 0, 64 * KiB);
    c.allocated(mem(2), true, 0, 0, 72 * KiB);
    EXPECT_TRUE(free_one(c, mem(1)));
    EXPECT_TRUE(free_one(c, mem(2)));
    EXPECT_EQ(c.held(0), 136 * KiB);
    EXPECT_EQ(c.kept(), 2u);
    // 65 KiB: 72 KiB is within an eighth, 64 KiB too small.
    AllocCache::Taken t = c.take(0, 0, 65 * KiB);
    EXPECT_EQ(t.memory, mem(2));
    EXPECT_EQ(t.size, 72 * KiB);
    // 56 KiB may not take 64 KiB (more than an eighth above), 57 KiB may.
    EXPECT_EQ(c.take(0, 0, 56 * KiB).memory, VK_NULL_HANDLE);
    EXPECT_EQ(c.take(0, 0, 57 * KiB).memory, mem(1));
    EXPECT_EQ(c.kept(), 0u);
    EXPECT_EQ(c.held(0), 0u);
    EXPECT_EQ(c.live(), 2u);
}

TEST(AllocCache, TypeAndFlagsMustMatch) {
    AllocCache c(limits(64 * MiB, true));
    c.allocated(mem(1), true, 1, VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT, 4 * KiB);
    EXPECT_TRUE(free_one(c, mem(1)));
    EXPECT_EQ(c.take(1, 0, 4 * KiB).memory, VK_NULL_HANDLE);
    EXPECT_EQ(c.take(0, VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT, 4 * KiB).memory, VK_NULL_HANDLE);
    EXPECT_EQ(c.take(1, VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT, 4 * KiB).memory, mem(1));
}

TEST(AllocCache, HostVisibleSizesOffTheAtomTakeOnlyTheirOwnSize) {
    AllocCache c(limits());
    c.allocated(mem(1), true, 1, 0, 4096);
    EXPECT_TRUE(free_one(c, mem(1)));
    EXPECT_EQ(c.take(1, 0, 4000).memory, VK_NULL_HANDLE);  // not a multiple of 64
    EXPECT_EQ(c.take(1, 0, 4032).memory, mem(1));          // a multiple: may take more
    c.allocated(mem(2), true, 1, 0, 4000);
    EXPECT_TRUE(free_one(c, mem(2)));
    EXPECT_EQ(c.take(1, 0, 4000).memory, mem(2));
}

TEST(AllocCache, UnfollowedAllocationsAreNotKept) {
    AllocCache c(limits());
    c.allocated(mem(1), false);
    EXPECT_EQ(c.live(), 1u);
    bool mapped = false;
    uint32_t type = 0;
    EXPECT_FALSE(c.wants(mem(1), &mapped, &type));
    EXPECT_EQ(c.live(), 0u);
    EXPECT_EQ(c.kept(), 0u);
}

TEST(AllocCache, MappedStateComesBackAtFree) {
    AllocCache c(limits());
    c.allocated(mem(1), true, 1, 0, 4096);
    c.mapped(mem(1), true);
    bool mapped = false;
    uint32_t type = 9;
    ASSERT_TRUE(c.wants(mem(1), &mapped, &type));
    EXPECT_TRUE(mapped);
    EXPECT_EQ(type, 1u);
    std::vector<VkDeviceMemory> evicted;
    EXPECT_TRUE(c.keep(mem(1), &evicted));
    // Handed out again: unmapped.
    EXPECT_EQ(c.take(1, 0, 4096).memory, mem(1));
    ASSERT_TRUE(c.wants(mem(1), &mapped, &type));
    EXPECT_FALSE(mapped);
}

TEST(AllocCache, HeldNeverExceedsTheBoundOldestGoFirst) {
    const uint64_t bound = 1 * MiB;
    AllocCache c(limits(bound));
    uintptr_t next = 1;
    std::vector<VkDeviceMemory> all_evicted;
    // Frees of varied sizes, far more than the bound holds.
    const VkDeviceSize sizes[] = {4 * KiB, 64 * KiB, 256 * KiB, 512 * KiB, 1 * MiB, 192 * KiB};
    for (int round = 0; round < 50; ++round) {
        for (VkDeviceSize s : sizes) {
            VkDeviceMemory m = mem(next++);
            c.allocated(m, true, 1, 0, s);
            std::vector<VkDeviceMemory> evicted;
            free_one(c, m, &evicted);
            all_evicted.insert(all_evicted.end(), evicted.begin(), evicted.end());
            EXPECT_LE(c.held(1), bound);
        }
    }
    EXPECT_FALSE(all_evicted.empty());
    // The oldest went first: the newest (192 KiB) is kept.
    EXPECT_EQ(c.take(1, 0, 192 * KiB).memory, mem(next - 1));
    // Larger than the bound: never kept.
    AllocCache small(limits(64 * KiB));
    small.allocated(mem(1), true, 1, 0, 128 * KiB);
    EXPECT_FALSE(free_one(small, mem(1)));
    EXPECT_EQ(small.held(1), 0u);
}

TEST(AllocCache, HeapsAreBoundedApart) {
    AllocCache c(limits(128 * KiB, true));
    c.allocated(mem(1), true, 0, 0, 128 * KiB);
    c.allocated(mem(2), true, 1, 0, 128 * KiB);
    EXPECT_TRUE(free_one(c, mem(1)));
    std::vector<VkDeviceMemory> evicted;
    EXPECT_TRUE(free_one(c, mem(2), &evicted));
    EXPECT_TRUE(evicted.empty());  // another heap: nothing of heap 0 goes
    EXPECT_EQ(c.held(0), 128 * KiB);
    EXPECT_EQ(c.held(1), 128 * KiB);
    EXPECT_EQ(c.trim_heap(0), std::vector<VkDeviceMemory>{mem(1)});
    EXPECT_EQ(c.held(0), 0u);
    EXPECT_EQ(c.held_total(), 128 * KiB);
    EXPECT_EQ(c.drain(), std::vector<VkDeviceMemory>{mem(2)});
    EXPECT_EQ(c.held_total(), 0u);
    EXPECT_EQ(c.kept(), 0u);
}

TEST(AllocCache, LiveAndKeptStayWithinTheAllocationCount) {
    AllocCache c(limits(64 * MiB, false, 4));
    for (uintptr_t i = 1; i <= 4; ++i) c.allocated(mem(i), true, 1, 0, 4 * KiB);
    for (uintptr_t i = 1; i <= 3; ++i) EXPECT_TRUE(free_one(c, mem(i)));
    // One live, three kept: a new driver allocation needs one of the kept freed first.
    EXPECT_TRUE(c.make_room().empty() == false);
    EXPECT_EQ(c.kept(), 2u);
    c.allocated(mem(5), true, 1, 0, 8 * KiB);
    EXPECT_EQ(c.live() + c.kept(), 4u);
    EXPECT_EQ(c.make_room().size(), 1u);
    EXPECT_TRUE(c.make_room().empty());  // room for one now
}

TEST(AllocCache, TrimAllEmptiesEveryHeap) {
    AllocCache c(limits(64 * MiB, true));
    c.allocated(mem(1), true, 0, 0, 4 * KiB);
    c.allocated(mem(2), true, 1, 0, 4 * KiB);
    free_one(c, mem(1));
    free_one(c, mem(2));
    EXPECT_EQ(c.trim_all().size(), 2u);
    EXPECT_EQ(c.held_total(), 0u);
    EXPECT_EQ(c.take(0, 0, 4 * KiB).memory, VK_NULL_HANDLE);
}

TEST(AllocCache, Pressure) {
    EXPECT_FALSE(AllocCache::under_pressure(80, 100));
    EXPECT_FALSE(AllocCache::under_pressure(90, 100));
    EXPECT_TRUE(AllocCache::under_pressure(91, 100));
    EXPECT_TRUE(AllocCache::under_pressure(200, 100));
}
