// The device's one record of buffers, images, imports and update templates (state/object_record.h).
#include "state/object_record.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

using namespace slipstream;

namespace {
template <typename H>
H handle(uint64_t n) {
    return reinterpret_cast<H>(uintptr_t(n));
}

VkBufferCreateInfo buffer_info(VkDeviceSize size, VkBufferUsageFlags usage, VkBufferCreateFlags flags = 0) {
    VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    info.size = size;
    info.usage = usage;
    info.flags = flags;
    return info;
}
}  // namespace

TEST(ObjectRecord, BufferAsCreatedThenBound) {
    ObjectRecord r;
    const VkBuffer b = handle<VkBuffer>(1);
    EXPECT_FALSE(r.buffer(b));
    r.buffer_created(b, buffer_info(256, VK_BUFFER_USAGE_TRANSFER_DST_BIT));
    std::optional<BufferRecord> got = r.buffer(b);
    ASSERT_TRUE(got);
    EXPECT_EQ(got->size, 256u);
    EXPECT_EQ(got->usage, VkBufferUsageFlags(VK_BUFFER_USAGE_TRANSFER_DST_BIT));
    EXPECT_FALSE(got->bound);
    EXPECT_FALSE(got->external);

    r.buffer_bound(b, handle<VkDeviceMemory>(7), 512, true);
    got = r.buffer(b);
    EXPECT_TRUE(got->bound);
    EXPECT_TRUE(got->bind_plain);
    EXPECT_EQ(got->memory, handle<VkDeviceMemory>(7));
    EXPECT_EQ(got->offset, 512u);

    r.buffer_destroyed(b);
    EXPECT_FALSE(r.buffer(b));
    r.buffer_bound(b, handle<VkDeviceMemory>(7), 0, true);  // a bind of a buffer it never saw: ignored
    EXPECT_FALSE(r.buffer(b));
}

TEST(ObjectRecord, ExternalBuffersAndPlainBinds) {
    ObjectRecord r;
    VkExternalMemoryBufferCreateInfo external{VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO};
    VkBufferCreateInfo info = buffer_info(64, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT);
    info.pNext = &external;
    r.buffer_created(handle<VkBuffer>(1), info);
    EXPECT_TRUE(r.buffer(handle<VkBuffer>(1))->external);

    // A sparse buffer, a bind with a pNext structure and a bind into an import are not plain.
    r.buffer_created(handle<VkBuffer>(2), buffer_info(64, 0, VK_BUFFER_CREATE_SPARSE_BINDING_BIT));
    r.buffer_bound(handle<VkBuffer>(2), handle<VkDeviceMemory>(10), 0, true);
    EXPECT_FALSE(r.buffer(handle<VkBuffer>(2))->bind_plain);

    r.buffer_created(handle<VkBuffer>(3), buffer_info(64, 0));
    r.buffer_bound(handle<VkBuffer>(3), handle<VkDeviceMemory>(10), 0, false);
    EXPECT_FALSE(r.buffer(handle<VkBuffer>(3))->bind_plain);

    VkImportMemoryFdInfoKHR import{VK_STRUCTURE_TYPE_IMPORT_MEMORY_FD_INFO_KHR};
    VkMemoryAllocateInfo imported{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    imported.pNext = &import;
    r.memory_allocated(handle<VkDeviceMemory>(11), imported);
    VkMemoryDedicatedAllocateInfo dedicated{VK_STRUCTURE_TYPE_MEMORY_DEDICATED_ALLOCATE_INFO};
    VkMemoryAllocateInfo own{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    own.pNext = &dedicated;  // dedicated is no import
    r.memory_allocated(handle<VkDeviceMemory>(12), own);

    r.buffer_created(handle<VkBuffer>(4), buffer_info(64, 0));
    r.buffer_bound(handle<VkBuffer>(4), handle<VkDeviceMemory>(11), 0, true);
    EXPECT_FALSE(r.buffer(handle<VkBuffer>(4))->bind_plain);
    r.buffer_bound(handle<VkBuffer>(4), handle<VkDeviceMemory>(12), 0, true);
    EXPECT_TRUE(r.buffer(handle<VkBuffer>(4))->bind_plain);

    // Once the import is freed, its handle may come back as plain memory.
    r.memory_freed(handle<VkDeviceMemory>(11));
    r.buffer_bound(handle<VkBuffer>(4), handle<VkDeviceMemory>(11), 0, true);
    EXPECT_TRUE(r.buffer(handle<VkBuffer>(4))->bind_plain);
}

TEST(ObjectRecord, Images) {
    ObjectRecord r;
    VkImageCreateInfo info{VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO};
    info.tiling = VK_IMAGE_TILING_LINEAR;
    info.usage = VK_IMAGE_USAGE_TRANSFER_DST_BIT;
    r.image_created(handle<VkImage>(1), info);
    info.flags = VK_IMAGE_CREATE_DISJOINT_BIT;
    r.image_created(handle<VkImage>(2), info);
    r.image_bound(handle<VkImage>(1), handle<VkDeviceMemory>(5), 4096, 1024, true);
    r.image_bound(handle<VkImage>(2), handle<VkDeviceMemory>(5), 0, 1024, true);
    const std::optional<ImageRecord> a = r.image(handle<VkImage>(1));
    ASSERT_TRUE(a);
    EXPECT_EQ(a->tiling, VK_IMAGE_TILING_LINEAR);
    EXPECT_TRUE(a->bind_plain);
    EXPECT_EQ(a->offset, 4096u);
    EXPECT_EQ(a->size, 1024u);
    EXPECT_FALSE(r.image(handle<VkImage>(2))->bind_plain);  // disjoint planes: no one range
    r.image_destroyed(handle<VkImage>(1));
    EXPECT_FALSE(r.image(handle<VkImage>(1)));
}

TEST(ObjectRecord, UpdateTemplatesOutliveTheirDestroyForHolders) {
    ObjectRecord r;
    VkDescriptorUpdateTemplateEntry entries[2] = {{0, 0, 1, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 8, 24},
                                                  {1, 2, 3, VK_DESCRIPTOR_TYPE_SAMPLED_IMAGE, 32, 16}};
    VkDescriptorUpdateTemplateCreateInfo info{VK_STRUCTURE_TYPE_DESCRIPTOR_UPDATE_TEMPLATE_CREATE_INFO};
    info.descriptorUpdateEntryCount = 2;
    info.pDescriptorUpdateEntries = entries;
    info.templateType = VK_DESCRIPTOR_UPDATE_TEMPLATE_TYPE_PUSH_DESCRIPTORS_KHR;
    const VkDescriptorUpdateTemplate t = handle<VkDescriptorUpdateTemplate>(3);
    r.template_created(t, info);
    std::shared_ptr<const UpdateTemplateRecord> held = r.update_template(t);
    ASSERT_TRUE(held);
    EXPECT_EQ(held->type, VK_DESCRIPTOR_UPDATE_TEMPLATE_TYPE_PUSH_DESCRIPTORS_KHR);
    ASSERT_EQ(held->entries.size(), 2u);
    EXPECT_EQ(held->entries[1].dstArrayElement, 2u);
    EXPECT_EQ(held->entries[1].stride, 16u);
    r.template_destroyed(t);
    EXPECT_FALSE(r.update_template(t));
    EXPECT_EQ(held->entries[0].offset, 8u);  // a lookup in progress keeps its copy
}

// Buffers made, bound and destroyed on several threads while others read: each thread's own
// buffers read back as it left them (run under ThreadSanitizer by the threads label).
TEST(ObjectRecord, ConcurrentChurn) {
    ObjectRecord r;
    std::vector<std::thread> threads;
    for (uint64_t t = 0; t < 4; ++t)
        threads.emplace_back([&r, t] {
            for (uint64_t i = 1; i <= 2000; ++i) {
                const VkBuffer b = handle<VkBuffer>(t << 32 | i);
                r.buffer_created(b, buffer_info(i, 0));
                r.buffer_bound(b, handle<VkDeviceMemory>(i), i, true);
                const std::optional<BufferRecord> got = r.buffer(b);
                ASSERT_TRUE(got);
                EXPECT_EQ(got->size, i);
                EXPECT_EQ(got->offset, i);
                if (i % 2) r.buffer_destroyed(b);
            }
        });
    for (std::thread& t : threads) t.join();
    EXPECT_TRUE(r.buffer(handle<VkBuffer>(uint64_t(3) << 32 | 2000)));
    EXPECT_FALSE(r.buffer(handle<VkBuffer>(uint64_t(3) << 32 | 1999)));
}

// With fusion alone on, only semaphore kinds are recorded: buffers cost no lock.
TEST(ObjectRecord, SemaphoresOnly) {
    ObjectRecord r(false);
    r.buffer_created(handle<VkBuffer>(1), buffer_info(64, 0));
    EXPECT_FALSE(r.buffer(handle<VkBuffer>(1)));
    VkSemaphoreTypeCreateInfo type{VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO};
    type.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
    VkSemaphoreCreateInfo info{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, &type};
    r.semaphore_created(handle<VkSemaphore>(2), info);
    ASSERT_TRUE(r.semaphore(handle<VkSemaphore>(2)));
    EXPECT_TRUE(r.semaphore(handle<VkSemaphore>(2))->timeline);
    EXPECT_FALSE(r.semaphore(handle<VkSemaphore>(2))->shared);
    r.semaphore_shared(handle<VkSemaphore>(2));
    EXPECT_TRUE(r.semaphore(handle<VkSemaphore>(2))->shared);
    r.semaphore_destroyed(handle<VkSemaphore>(2));
    EXPECT_FALSE(r.semaphore(handle<VkSemaphore>(2)));
}
