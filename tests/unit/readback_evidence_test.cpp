// The pure rules of cached readback's evidence from use (src/memory/memory/readback_evidence.h), and the
// generated list of commands they rest on (buffer_uses.h).
#include "buffer_uses.h"
#include "memory/readback_buffer_uses.h"
#include "memory/readback_evidence.h"
#include "memory/readback_policy.h"

#include "memory_layouts.h"

#include <gtest/gtest.h>

using namespace slipstream;

namespace {
constexpr VkBufferUsageFlags kStorage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT;
constexpr VkBufferUsageFlags kSrc = VK_BUFFER_USAGE_TRANSFER_SRC_BIT;
constexpr VkBufferUsageFlags kDst = VK_BUFFER_USAGE_TRANSFER_DST_BIT;

PendingBind bind(VkDeviceSize offset, VkDeviceSize size, VkDeviceSize alignment, uint32_t bits) {
    PendingBind p;
    p.offset = offset;
    p.reqs.size = size;
    p.reqs.alignment = alignment;
    p.reqs.memoryTypeBits = bits;
    return p;
}
}  // namespace

TEST(ReadbackEvidence, OnlyPlainBindsOfTransferDestinationsWait) {
    EXPECT_TRUE(bind_may_wait(kStorage | kDst, 0, true));          // the seed runtime's staging
    EXPECT_TRUE(bind_may_wait(kStorage | kSrc | kDst, 0, true));   // device buffers wait too: use decides
    EXPECT_TRUE(bind_may_wait(kDst, 0, true));
    EXPECT_FALSE(bind_may_wait(kStorage | kSrc, 0, true));         // upload staging: never a copy target
    EXPECT_FALSE(bind_may_wait(VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT, 0, true));
    EXPECT_FALSE(bind_may_wait(kDst, 0, false));                   // device-group or status pNext
    EXPECT_FALSE(bind_may_wait(kDst, VK_BUFFER_CREATE_PROTECTED_BIT, true));
    EXPECT_FALSE(bind_may_wait(kDst, VK_BUFFER_CREATE_SPARSE_BINDING_BIT, true));
    EXPECT_FALSE(bind_may_wait(kDst, VK_BUFFER_CREATE_DEVICE_ADDRESS_CAPTURE_REPLAY_BIT, true));
}

TEST(ReadbackEvidence, BarriersRevealStagingOnlyByTransferWritesAndHostReads) {
    EXPECT_TRUE(barrier_reveals_readback(VK_ACCESS_TRANSFER_WRITE_BIT));
    EXPECT_TRUE(barrier_reveals_readback(VK_ACCESS_HOST_READ_BIT));
    EXPECT_TRUE(barrier_reveals_readback(VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_HOST_READ_BIT));
    EXPECT_TRUE(barrier_reveals_readback(VK_ACCESS_2_TRANSFER_WRITE_BIT));
    EXPECT_FALSE(barrier_reveals_readback(0));  // an execution dependency says nothing
    EXPECT_FALSE(barrier_reveals_readback(VK_ACCESS_SHADER_READ_BIT));
    EXPECT_FALSE(barrier_reveals_readback(VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_SHADER_READ_BIT));
    EXPECT_FALSE(barrier_reveals_readback(VK_ACCESS_TRANSFER_READ_BIT));
    EXPECT_FALSE(barrier_reveals_readback(VK_ACCESS_MEMORY_READ_BIT));
    EXPECT_FALSE(barrier_reveals_readback(VK_ACCESS_2_SHADER_STORAGE_READ_BIT));
}

TEST(ReadbackEvidence, TwinTypesAreThoseEveryPendingBufferAccepts) {
    EXPECT_EQ(twin_allowed_types(0x1E, {}), 0x1Eu);
    EXPECT_EQ(twin_allowed_types(0x1E, {bind(0, 64, 16, 0x1F), bind(64, 64, 16, 0x16)}), 0x16u);
    EXPECT_EQ(twin_allowed_types(0x08, {bind(0, 64, 16, 0x17)}), 0u);
}

TEST(ReadbackEvidence, TwinMustHoldEveryBufferAtItsOffset) {
    const VkDeviceSize size = 1 << 20;
    EXPECT_TRUE(twin_fits({bind(0, 4096, 256, 0x18), bind(8192, 4096, 256, 0x08)}, size, 3));
    EXPECT_FALSE(twin_fits({bind(0, 4096, 256, 0x10)}, size, 3));          // type not allowed
    EXPECT_FALSE(twin_fits({bind(100, 4096, 256, 0x08)}, size, 3));        // offset misaligned
    EXPECT_FALSE(twin_fits({bind(size - 100, 4096, 4, 0x08)}, size, 3));   // runs past the end
    EXPECT_FALSE(twin_fits({bind(size + 4, 4, 4, 0x08)}, size, 3));        // starts past the end
    EXPECT_TRUE(twin_fits({bind(size - 4096, 4096, 0, 0x08)}, size, 3));   // alignment 0 = any
    EXPECT_FALSE(twin_fits({}, size, 40));
}

TEST(ReadbackEvidence, GpuReadSignaturesAreBounded) {
    GpuReadSignatures s;
    const UseSignature a{4, kStorage | kSrc | kDst, 0};
    EXPECT_FALSE(s.contains(a));
    EXPECT_TRUE(s.add(a));
    EXPECT_FALSE(s.add(a));
    EXPECT_TRUE(s.contains(a));
    EXPECT_FALSE(s.contains(UseSignature{4, kStorage | kDst, 0}));  // the seed's staging is another kind
    EXPECT_FALSE(s.contains(UseSignature{2, kStorage | kSrc | kDst, 0}));
    for (uint32_t i = 0; s.size() < GpuReadSignatures::kCapacity; ++i) s.add(UseSignature{i, kDst, 7});
    EXPECT_FALSE(s.add(UseSignature{99, kDst, 0}));
    EXPECT_FALSE(s.contains(UseSignature{99, kDst, 0}));
    EXPECT_TRUE(s.contains(a));
}

// The H200's host-visible VRAM is a candidate (a cached coherent type is a safe target), and the
// target is the cached system-memory type: what deferral's twin gets.
TEST(ReadbackEvidence, H200HostVisibleVramMovesToCachedSystemMemory) {
    const test::MemoryLayout* h200 = test::find_memory_layout("nvidia-h200");
    ASSERT_NE(h200, nullptr);
    const uint32_t safe_from_4 = 0x1D;  // every type but the plain DEVICE_LOCAL one optimal images need
    const ReadbackChoice c =
        evaluate_readback_memory_type(h200->props, twin_allowed_types(safe_from_4, {bind(0, 48000000, 256, 0x1E)}), 4,
                                      64ull << 20);
    ASSERT_TRUE(c.redirect());
    EXPECT_EQ(c.memory_type, 3u);
}

TEST(ReadbackEvidence, GeneratedCommandListsComeFromTheRegistry) {
    EXPECT_TRUE(is_known_command("vkCmdCopyBuffer"));
    EXPECT_TRUE(is_known_command("vkCmdCopyBuffer2KHR"));  // aliases too
    EXPECT_TRUE(is_known_command("vkUpdateDescriptorSetWithTemplate"));
    EXPECT_TRUE(is_known_command("vkCreateFence"));
    EXPECT_FALSE(is_known_command("vkCmdCopyMemoryToBufferFUTURE"));
    EXPECT_FALSE(is_known_command(""));
    for (size_t i = 1; i < sizeof kKnownCommands / sizeof kKnownCommands[0]; ++i)
        ASSERT_LT(kKnownCommands[i - 1], kKnownCommands[i]) << "kKnownCommands must be sorted for binary search";
}
