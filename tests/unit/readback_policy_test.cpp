// Table-driven tests of the readback memory policy over layouts of real devices
// (memory_layouts.h), plus a few synthetic layouts for the corners no device shows.
#include "memory/readback_policy.h"

#include "memory_layouts.h"

#include <gtest/gtest.h>

#include <optional>
#include <ostream>
#include <set>
#include <stdexcept>
#include <string>

namespace slipstream {
namespace {

using test::find_memory_layout;
using test::memory_layouts;
using test::MemoryLayout;
using namespace test::layout_detail;  // DL, HV, HC, HCACHED, LAZY, AMD_DC_DU, kMiB, kGiB, make

constexpr uint32_t kAll = ~0u;
constexpr VkMemoryPropertyFlags PROTECTED = VK_MEMORY_PROPERTY_PROTECTED_BIT;
constexpr VkMemoryPropertyFlags RDMA = VK_MEMORY_PROPERTY_RDMA_CAPABLE_BIT_NV;

const VkPhysicalDeviceMemoryProperties& layout(const char* name) {
    const MemoryLayout* l = find_memory_layout(name);
    if (!l) throw std::runtime_error(std::string("no memory layout ") + name);
    return l->props;
}

// --- the layouts themselves -----------------------------------------------------------------

TEST(MemoryLayouts, AreWellFormed) {
    std::set<std::string> names;
    for (const MemoryLayout& l : memory_layouts()) {
        SCOPED_TRACE(l.name);
        EXPECT_TRUE(names.insert(l.name).second) << "duplicate name";
        ASSERT_GT(l.props.memoryTypeCount, 0u);
        ASSERT_LE(l.props.memoryTypeCount, uint32_t(VK_MAX_MEMORY_TYPES));
        ASSERT_LE(l.props.memoryHeapCount, uint32_t(VK_MAX_MEMORY_HEAPS));
        bool coherent = false;
        for (uint32_t t = 0; t < l.props.memoryTypeCount; ++t) {
            const VkMemoryType& type = l.props.memoryTypes[t];
            EXPECT_LT(type.heapIndex, l.props.memoryHeapCount) << "type " << t;
            if ((type.propertyFlags & (HV | HC)) == (HV | HC)) coherent = true;
            // The spec: DEVICE_LOCAL types live on DEVICE_LOCAL heaps.
            if (type.propertyFlags & DL) {
                EXPECT_TRUE(l.props.memoryHeaps[type.heapIndex].flags & HEAP_DL) << "type " << t;
            }
        }
        EXPECT_TRUE(coherent) << "the spec guarantees a HOST_VISIBLE|HOST_COHERENT type";
    }
    EXPECT_EQ(find_memory_layout("no-such-layout"), nullptr);
    EXPECT_EQ(find_memory_layout(nullptr), nullptr);
    EXPECT_NE(test::memory_layout_names().find("nvidia-bar, nvidia-rebar"), std::string::npos);
}

TEST(MemoryLayouts, NvidiaBarMatchesBackground) {
    // BACKGROUND.md part 2: type 3 = system RAM cached, type 4 = 246 MiB BAR window.
    const auto& p = layout("nvidia-bar");
    EXPECT_EQ(p.memoryTypes[3].propertyFlags, HV | HC | HCACHED);
    EXPECT_EQ(p.memoryTypes[4].propertyFlags, DL | HV | HC);
    EXPECT_EQ(p.memoryHeaps[p.memoryTypes[4].heapIndex].size, 246 * kMiB);
}

// --- choose_readback_memory_type on real layouts --------------------------------------------

struct RedirectCase {
    const char* layout;
    uint32_t app_type;
    uint32_t allowed_bits;
    uint64_t size;
    std::optional<uint32_t> expected;
    ReadbackVerdict verdict;
    const char* why;
};

std::ostream& operator<<(std::ostream& os, const RedirectCase& c) {
    return os << c.layout << " type " << c.app_type << " bits 0x" << std::hex << c.allowed_bits
              << std::dec << " size " << c.size << ": " << c.why;
}

constexpr auto R = ReadbackVerdict::kRedirect;
constexpr auto kNotHV = ReadbackVerdict::kNotHostVisible;
constexpr auto kCached = ReadbackVerdict::kAlreadyCached;
constexpr auto kAmd = ReadbackVerdict::kExplicitDeviceMemory;
constexpr auto kNone = ReadbackVerdict::kNoCandidate;
constexpr auto kSmall = ReadbackVerdict::kHeapTooSmall;
constexpr auto kInvalid = ReadbackVerdict::kInvalidType;
constexpr uint64_t k48MiB = 48 * kMiB;

const RedirectCase kRedirectCases[] = {
    // NVIDIA, BAR off: the bug of BACKGROUND.md part 2, both its halves.
    {"nvidia-bar", 4, kAll, k48MiB, 3, R, "BAR window -> cached system RAM"},
    {"nvidia-bar", 2, kAll, k48MiB, 3, R, "uncached system RAM (the old fallback) -> cached"},
    {"nvidia-bar", 3, kAll, k48MiB, std::nullopt, kCached, "explicit cached choice kept"},
    {"nvidia-bar", 1, kAll, k48MiB, std::nullopt, kNotHV, "VRAM is not readback memory"},
    {"nvidia-bar", 0, kAll, k48MiB, std::nullopt, kNotHV, "flagless type"},
    {"nvidia-bar", 4, 0b10110, k48MiB, std::nullopt, kNone, "resource does not allow type 3"},
    {"nvidia-bar", 4, 0b11110, k48MiB, 3, R, "bits of a buffer that allows all but type 0"},
    {"nvidia-bar", 4, kAll, 40 * kGiB, std::nullopt, kSmall, "bigger than the 32 GiB RAM heap"},
    {"nvidia-bar", 4, kAll, 32 * kGiB, 3, R, "exactly the heap size still fits"},
    {"nvidia-bar", 5, kAll, k48MiB, std::nullopt, kInvalid, "no type 5"},
    {"nvidia-bar", 31, kAll, k48MiB, std::nullopt, kInvalid, "no type 31"},
    {"nvidia-bar", 4000, kAll, k48MiB, std::nullopt, kInvalid, "garbage index"},
    // NVIDIA, resizable BAR on, and the H200: all of VRAM host-visible, same answer.
    {"nvidia-rebar", 4, kAll, k48MiB, 3, R, "rebar VRAM -> cached system RAM"},
    {"nvidia-rebar", 2, kAll, k48MiB, 3, R, "uncached system RAM -> cached"},
    {"nvidia-rebar", 3, kAll, k48MiB, std::nullopt, kCached, "explicit cached choice kept"},
    {"nvidia-h200", 4, kAll, k48MiB, 3, R, "H200: VRAM -> cached system RAM"},
    {"nvidia-h200", 4, 0b10111, k48MiB, std::nullopt, kNone, "H200: type 3 not allowed"},
    // AMD (RADV): the device-coherent twins are never targets nor overridden.
    {"amd", 2, kAll, k48MiB, 3, R, "CPU-visible VRAM -> GTT cached"},
    {"amd", 1, kAll, k48MiB, 3, R, "GTT write-combined -> GTT cached"},
    {"amd", 3, kAll, k48MiB, std::nullopt, kCached, "explicit cached choice kept"},
    {"amd", 0, kAll, k48MiB, std::nullopt, kNotHV, "VRAM"},
    {"amd", 4, kAll, k48MiB, std::nullopt, kNotHV, "device-coherent VRAM"},
    {"amd", 5, kAll, k48MiB, std::nullopt, kAmd, "explicit device-coherent GTT kept"},
    {"amd", 6, kAll, k48MiB, std::nullopt, kAmd, "explicit device-coherent visible VRAM kept"},
    {"amd", 7, kAll, k48MiB, std::nullopt, kAmd, "device-coherent cached GTT kept"},
    {"amd", 2, 0b11110111, k48MiB, std::nullopt, kNone, "type 3 disallowed; 7 is no target"},
    {"amd", 2, kAll, 25 * kGiB, std::nullopt, kSmall, "bigger than the 24 GiB GTT heap"},
    // Intel integrated: one heap, DEVICE_LOCAL everywhere; DEVICE_LOCAL on the target is fine.
    {"intel", 1, kAll, k48MiB, 2, R, "write-combined -> cached"},
    {"intel", 2, kAll, k48MiB, std::nullopt, kCached, "explicit cached choice kept"},
    {"intel", 0, kAll, k48MiB, std::nullopt, kNotHV, "not host-visible"},
    {"intel", 1, 0b011, k48MiB, std::nullopt, kNone, "cached type not allowed"},
    // Arm SoC: the only cached type is non-coherent; a coherent app never gets it.
    {"arm", 1, kAll, k48MiB, std::nullopt, kNone, "coherent app: non-coherent cached refused"},
    {"arm", 2, kAll, k48MiB, std::nullopt, kCached, "app chose cached non-coherent: kept"},
    {"arm", 3, kAll, k48MiB, std::nullopt, kNotHV, "lazily allocated"},
    // Adreno: the cached coherent type comes after the cached non-coherent one.
    {"adreno", 1, kAll, k48MiB, 3, R, "coherent app -> cached AND coherent, not type 2"},
    {"adreno", 1, 0b0111, k48MiB, std::nullopt, kNone, "type 3 disallowed: never type 2"},
    {"adreno", 2, kAll, k48MiB, std::nullopt, kCached, "explicit non-coherent cached kept"},
    // lavapipe: its one type is cached already.
    {"lavapipe", 0, kAll, k48MiB, std::nullopt, kCached, "single cached type"},
    // No cached type at all: nothing to do.
    {"no-cached", 1, kAll, k48MiB, std::nullopt, kNone, "no cached type (system RAM)"},
    {"no-cached", 2, kAll, k48MiB, std::nullopt, kNone, "no cached type (BAR)"},
};

class RedirectOnLayout : public ::testing::TestWithParam<RedirectCase> {};

TEST_P(RedirectOnLayout, PicksExpectedType) {
    const RedirectCase& c = GetParam();
    const auto& props = layout(c.layout);
    const ReadbackChoice choice =
        evaluate_readback_memory_type(props, c.allowed_bits, c.app_type, c.size);
    EXPECT_EQ(choice.verdict, c.verdict) << to_string(choice.verdict);
    EXPECT_EQ(choose_readback_memory_type(props, c.allowed_bits, c.app_type, c.size), c.expected);
    EXPECT_EQ(choice.redirect(), c.expected.has_value());
    if (c.expected) {
        EXPECT_EQ(choice.memory_type, *c.expected);
    }
}

INSTANTIATE_TEST_SUITE_P(RealLayouts, RedirectOnLayout, ::testing::ValuesIn(kRedirectCases));

// --- synthetic layouts: corners no device above shows ---------------------------------------

TEST(ReadbackSynthetic, NonCoherentAppMayGetNonCoherentCachedButPrefersCoherent) {
    // 1: uncached non-coherent (the app flushes and invalidates), 2: cached non-coherent,
    // 3: cached coherent on a smaller heap.
    const auto p = make({{8 * kGiB, HEAP_DL}, {16 * kGiB, 0}, {1 * kGiB, 0}},
                        {{DL, 0}, {HV, 1}, {HV | HCACHED, 1}, {HV | HC | HCACHED, 2}});
    EXPECT_EQ(choose_readback_memory_type(p, kAll, 1, k48MiB), 3u) << "coherent before heap size";
    EXPECT_EQ(choose_readback_memory_type(p, 0b0111, 1, k48MiB), 2u) << "non-coherent acceptable";
    EXPECT_EQ(choose_readback_memory_type(p, kAll, 1, 2 * kGiB), 2u)
        << "coherent heap too small: the other candidate";
    EXPECT_EQ(evaluate_readback_memory_type(p, kAll, 1, 20 * kGiB).verdict, kSmall);
}

TEST(ReadbackSynthetic, LargestHeapThenLowestIndex) {
    const auto p = make({{1 * kGiB, 0}, {8 * kGiB, 0}, {2 * kGiB, HEAP_DL}},
                        {{HV | HC, 2},
                         {HV | HC | HCACHED, 0},
                         {HV | HC | HCACHED, 1},
                         {HV | HC | HCACHED, 1},
                         {DL | HV | HC | HCACHED, 2}});
    EXPECT_EQ(choose_readback_memory_type(p, kAll, 0, k48MiB), 2u) << "largest heap, lowest index";
    EXPECT_EQ(choose_readback_memory_type(p, 0b11011, 0, k48MiB), 3u) << "same heap, next index";
    EXPECT_EQ(choose_readback_memory_type(p, 0b10011, 0, k48MiB), 4u) << "2 GiB beats 1 GiB";
    EXPECT_EQ(choose_readback_memory_type(p, 0b00011, 0, k48MiB), 1u) << "the only one left";
    EXPECT_EQ(choose_readback_memory_type(p, 0b00001, 0, k48MiB), std::nullopt);
}

TEST(ReadbackSynthetic, NeverATargetThatChangesSemantics) {
    // Each candidate carries one bit the app's type (1: HV|HC) lacks.
    const VkMemoryPropertyFlags kUnknownBit = 0x1000;
    for (VkMemoryPropertyFlags extra : {PROTECTED, LAZY, AMD_DC_DU, kUnknownBit}) {
        const auto p = make({{4 * kGiB, HEAP_DL}, {8 * kGiB, 0}},
                            {{DL, 0}, {HV | HC, 1}, {HV | HC | HCACHED | extra, 1}});
        EXPECT_EQ(evaluate_readback_memory_type(p, kAll, 1, k48MiB).verdict, kNone)
            << describe_memory_property_flags(extra);
    }
    // RDMA_CAPABLE only adds a capability.
    const auto rdma = make({{4 * kGiB, HEAP_DL}, {8 * kGiB, 0}},
                           {{DL, 0}, {HV | HC, 1}, {HV | HC | HCACHED | RDMA, 1}});
    EXPECT_EQ(choose_readback_memory_type(rdma, kAll, 1, k48MiB), 2u);
}

TEST(ReadbackSynthetic, KeepsEveryGuaranteeButDeviceLocal) {
    // The app's type is RDMA-capable: a target without RDMA would break its external use.
    const auto p = make({{4 * kGiB, HEAP_DL}, {8 * kGiB, 0}},
                        {{DL | HV | HC | RDMA, 0}, {HV | HC | HCACHED, 1}, {HV | HC | HCACHED | RDMA, 1}});
    EXPECT_EQ(choose_readback_memory_type(p, kAll, 0, k48MiB), 2u);
    EXPECT_EQ(choose_readback_memory_type(p, 0b011, 0, k48MiB), std::nullopt);
}

TEST(ReadbackSynthetic, MalformedPropertiesAreNotTrusted) {
    auto p = layout("nvidia-bar");
    p.memoryTypes[4].heapIndex = 7;  // beyond memoryHeapCount
    EXPECT_EQ(evaluate_readback_memory_type(p, kAll, 4, k48MiB).verdict, kInvalid);
    p = layout("nvidia-bar");
    p.memoryTypes[3].heapIndex = 9;  // the only target is broken
    EXPECT_EQ(choose_readback_memory_type(p, kAll, 4, k48MiB), std::nullopt);
}

// --- properties over every layout, every type, every subset of allowed bits -----------------

TEST(ReadbackProperties, NeverNonCoherentNeverDisallowedNeverWorse) {
    for (const MemoryLayout& l : memory_layouts()) {
        const auto& p = l.props;
        const uint32_t all = (1u << p.memoryTypeCount) - 1;
        for (uint32_t app = 0; app < p.memoryTypeCount; ++app) {
            const VkMemoryPropertyFlags af = p.memoryTypes[app].propertyFlags;
            for (uint32_t bits = 0; bits <= all; ++bits) {
                const auto choice = choose_readback_memory_type(p, bits, app, k48MiB);
                if (!choice) continue;
                SCOPED_TRACE(std::string(l.name) + " app " + std::to_string(app) + " bits " +
                             std::to_string(bits));
                const VkMemoryPropertyFlags f = p.memoryTypes[*choice].propertyFlags;
                EXPECT_NE(*choice, app);
                EXPECT_TRUE(bits & (1u << *choice)) << "not allowed";
                EXPECT_TRUE((af & HV) && !(af & HCACHED) && !(af & AMD_DC_DU));
                EXPECT_EQ(f & (HV | HCACHED), HV | HCACHED);
                if (af & HC) {
                    EXPECT_TRUE(f & HC) << "non-coherent for a coherent app";
                }
                EXPECT_EQ(f & (PROTECTED | LAZY | AMD_DC_DU), 0u);
            }
        }
    }
}

// --- steer_readback_type_bits ----------------------------------------------------------------

struct SteerCase {
    const char* layout;
    uint32_t bits;
    uint32_t expected;
    const char* why;
};

std::ostream& operator<<(std::ostream& os, const SteerCase& c) {
    return os << c.layout << " 0x" << std::hex << c.bits << ": " << c.why;
}

const SteerCase kSteerCases[] = {
    {"nvidia-bar", 0x1f, 0x0b, "hide 2 (uncached RAM) and 4 (BAR)"},
    {"nvidia-bar", 0x1e, 0x0a, "type 0 not allowed: same"},
    {"nvidia-bar", 0x18, 0x08, "BAR hidden behind cached"},
    {"nvidia-bar", 0x10, 0x10, "only the BAR type: never 0"},
    {"nvidia-bar", 0x16, 0x16, "no cached type allowed: unchanged"},
    {"nvidia-bar", 0x06, 0x06, "the only coherent type stays"},
    {"nvidia-bar", 0xffffffffu, 0xffffffebu, "bits beyond the type count untouched"},
    {"nvidia-rebar", 0x1f, 0x0b, "same as BAR off"},
    {"nvidia-h200", 0x1f, 0x0b, "same on the H200"},
    {"amd", 0xff, 0xff, "device-coherent host types allowed: no telling what the app wants, unchanged"},
    {"amd", 0x7f, 0x7f, "without 7: still unchanged"},
    {"amd", 0x0f, 0x09, "without the twins: hide 1 and 2"},
    {"amd", 0xf7, 0xf7, "only the device-coherent cached type: no steering"},
    {"amd", 0x60, 0x60, "only device-coherent host types: unchanged"},
    {"intel", 0x7, 0x5, "hide the write-combined type"},
    {"intel", 0x3, 0x3, "cached not allowed"},
    {"arm", 0xf, 0xf, "no cached coherent type: unchanged"},
    {"adreno", 0xf, 0x9, "hide 1 and the non-coherent cached 2: 'first host-visible' must be coherent"},
    {"adreno", 0x7, 0x7, "no cached coherent type: unchanged"},
    {"lavapipe", 0x1, 0x1, "one type"},
    {"no-cached", 0x7, 0x7, "no cached type"},
    {"nvidia-bar", 0x0, 0x0, "nothing in, nothing out"},
};

class SteerOnLayout : public ::testing::TestWithParam<SteerCase> {};

TEST_P(SteerOnLayout, SteersExactly) {
    const SteerCase& c = GetParam();
    EXPECT_EQ(steer_readback_type_bits(layout(c.layout), c.bits), c.expected);
}

INSTANTIATE_TEST_SUITE_P(RealLayouts, SteerOnLayout, ::testing::ValuesIn(kSteerCases));

TEST(SteerProperties, NeverZeroNeverWithoutCoherentOnlyUncachedRemoved) {
    for (const MemoryLayout& l : memory_layouts()) {
        const auto& p = l.props;
        const uint32_t all = (1u << p.memoryTypeCount) - 1;
        for (uint32_t bits = 1; bits <= all; ++bits) {
            SCOPED_TRACE(std::string(l.name) + " bits " + std::to_string(bits));
            const uint32_t steered = steer_readback_type_bits(p, bits);
            EXPECT_NE(steered, 0u);
            EXPECT_EQ(steered & ~bits, 0u) << "added a type";
            bool coherent_before = false, coherent_after = false;
            for (uint32_t t = 0; t < p.memoryTypeCount; ++t) {
                const VkMemoryPropertyFlags f = p.memoryTypes[t].propertyFlags;
                const bool coherent = (f & (HV | HC)) == (HV | HC);
                if ((bits >> t) & 1) coherent_before |= coherent;
                if ((steered >> t) & 1) coherent_after |= coherent;
                if (((bits & ~steered) >> t) & 1) {
                    EXPECT_TRUE((f & HV) && (f & (HC | HCACHED)) != (HC | HCACHED)) << "removed type " << t;
                    EXPECT_EQ(f & (AMD_DC_DU | PROTECTED | LAZY), 0u) << "removed type " << t;
                }
                // Once steered, a "first host-visible type" choice can only be cached coherent.
                if (steered != bits && ((steered >> t) & 1) && (f & HV)) {
                    EXPECT_EQ(f & (HC | HCACHED), HC | HCACHED) << "left host-visible type " << t;
                }
            }
            EXPECT_EQ(coherent_before, coherent_after);
        }
    }
}

// --- describe_memory_property_flags / is_readback_buffer_usage / to_string -------------------

TEST(DescribeFlags, ReadsLikeTheSpec) {
    EXPECT_EQ(describe_memory_property_flags(DL | HV | HC), "DEVICE_LOCAL | HOST_VISIBLE | HOST_COHERENT");
    EXPECT_EQ(describe_memory_property_flags(HV | HC | HCACHED), "HOST_VISIBLE | HOST_COHERENT | HOST_CACHED");
    EXPECT_EQ(describe_memory_property_flags(0), "none");
    EXPECT_EQ(describe_memory_property_flags(DL | LAZY), "DEVICE_LOCAL | LAZILY_ALLOCATED");
    EXPECT_EQ(describe_memory_property_flags(HV | HC | AMD_DC_DU),
              "HOST_VISIBLE | HOST_COHERENT | DEVICE_COHERENT_AMD | DEVICE_UNCACHED_AMD");
    EXPECT_EQ(describe_memory_property_flags(PROTECTED | RDMA), "PROTECTED | RDMA_CAPABLE_NV");
    EXPECT_EQ(describe_memory_property_flags(HV | 0x3000), "HOST_VISIBLE | 0x3000");
    EXPECT_EQ(describe_memory_property_flags(0x80000000u), "0x80000000");
}

TEST(ReadbackUsage, TransferDstOptionallySrcNothingElse) {
    EXPECT_TRUE(is_readback_buffer_usage(VK_BUFFER_USAGE_TRANSFER_DST_BIT));
    EXPECT_TRUE(is_readback_buffer_usage(VK_BUFFER_USAGE_TRANSFER_DST_BIT |
                                         VK_BUFFER_USAGE_TRANSFER_SRC_BIT));
    EXPECT_FALSE(is_readback_buffer_usage(0));
    EXPECT_FALSE(is_readback_buffer_usage(VK_BUFFER_USAGE_TRANSFER_SRC_BIT));
    EXPECT_FALSE(is_readback_buffer_usage(VK_BUFFER_USAGE_TRANSFER_DST_BIT |
                                          VK_BUFFER_USAGE_STORAGE_BUFFER_BIT));
    EXPECT_FALSE(is_readback_buffer_usage(VK_BUFFER_USAGE_TRANSFER_DST_BIT |
                                          VK_BUFFER_USAGE_UNIFORM_TEXEL_BUFFER_BIT));
    EXPECT_FALSE(is_readback_buffer_usage(VK_BUFFER_USAGE_TRANSFER_DST_BIT |
                                          VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT));
}

// --- the requirements hint's size bound ------------------------------------------------------

TEST(ReadbackHint, CoversTheBufferAndLittleElse) {
    constexpr VkDeviceSize kKiB = 1024;
    auto reqs = [](VkDeviceSize size, VkDeviceSize alignment) {
        VkMemoryRequirements r{};
        r.size = size;
        r.alignment = alignment;
        r.memoryTypeBits = kAll;
        return r;
    };
    // Exactly the requirement, or rounded up to a page, an alignment or a size class: covered.
    EXPECT_TRUE(readback_hint_covers(200 * kKiB, reqs(200 * kKiB, 256)));
    EXPECT_TRUE(readback_hint_covers(256 * kKiB, reqs(200 * kKiB, 256))) << "one 64 KiB page";
    EXPECT_TRUE(readback_hint_covers(64 * kKiB, reqs(4 * kKiB, 256))) << "a small buffer's page";
    EXPECT_TRUE(readback_hint_covers(52 * kMiB, reqs(48 * kMiB, 256))) << "an eighth more";
    EXPECT_TRUE(readback_hint_covers(54 * kMiB, reqs(48 * kMiB, 256))) << "an eighth more, at most";
    EXPECT_TRUE(readback_hint_covers(4 * kMiB, reqs(kMiB, 4 * kMiB))) << "a large alignment";
    // Too small to hold the buffer, or a block with room for much else: not the buffer's.
    EXPECT_FALSE(readback_hint_covers(200 * kKiB - 4, reqs(200 * kKiB, 256)));
    EXPECT_FALSE(readback_hint_covers(54 * kMiB + 1, reqs(48 * kMiB, 256)));
    EXPECT_FALSE(readback_hint_covers(16 * kMiB, reqs(2 * kMiB, 256))) << "readback_app's hint-then-block";
    EXPECT_FALSE(readback_hint_covers(256 * kMiB, reqs(64 * kKiB, 256))) << "a sub-allocator's block";
    EXPECT_FALSE(readback_hint_covers(256 * kMiB, reqs(200 * kMiB, 256)));
    EXPECT_FALSE(readback_hint_covers(68 * kKiB + 4, reqs(4 * kKiB, 256)));
    // Sizes near the top of the range: the bound never overflows.
    const VkDeviceSize huge = VkDeviceSize(1) << 63;
    EXPECT_TRUE(readback_hint_covers(huge + (huge >> 4), reqs(huge, 256)));
    EXPECT_FALSE(readback_hint_covers(~VkDeviceSize(0), reqs(huge, 256)));
}

TEST(ReadbackVerdictNames, AreStable) {
    EXPECT_STREQ(to_string(ReadbackVerdict::kRedirect), "redirect");
    EXPECT_STREQ(to_string(ReadbackVerdict::kInvalidType), "invalid-type");
    EXPECT_STREQ(to_string(ReadbackVerdict::kNotHostVisible), "not-host-visible");
    EXPECT_STREQ(to_string(ReadbackVerdict::kAlreadyCached), "already-cached");
    EXPECT_STREQ(to_string(ReadbackVerdict::kExplicitDeviceMemory), "explicit-device-memory");
    EXPECT_STREQ(to_string(ReadbackVerdict::kNoCandidate), "no-candidate");
    EXPECT_STREQ(to_string(ReadbackVerdict::kHeapTooSmall), "heap-too-small");
}

TEST(ReadbackLogLine, ComposesFromTheLayout) {
    const auto& p = layout("nvidia-bar");
    const auto to = choose_readback_memory_type(p, kAll, 4, k48MiB);
    ASSERT_TRUE(to);
    const std::string line =
        "readback buffer memory: type 4 (" +
        describe_memory_property_flags(p.memoryTypes[4].propertyFlags) + ") -> type " +
        std::to_string(*to) + " (" + describe_memory_property_flags(p.memoryTypes[*to].propertyFlags) +
        ")";
    EXPECT_EQ(line,
              "readback buffer memory: type 4 (DEVICE_LOCAL | HOST_VISIBLE | HOST_COHERENT) -> "
              "type 3 (HOST_VISIBLE | HOST_COHERENT | HOST_CACHED)");
}

}  // namespace
}  // namespace slipstream
