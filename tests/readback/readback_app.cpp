// readback_app: reads GPU results back on the host the way unmodified applications do, so that
// tests can check where the Slipstream layer puts that memory (src/memory/memory/readback_tracker.h) on every
// memory layout the test layer VK_LAYER_SLIPSTREAM_test_memory_layout can present.
//
//   readback_app [--scenarios a,b,...]     default: all, in the order below
//
// Memory types are chosen the NAIVE way, as many programs and simple allocators do: for memory
// the host reads, the first type allowed by memoryTypeBits that is HOST_VISIBLE and
// DEVICE_LOCAL, else the first HOST_VISIBLE|HOST_COHERENT one; for device memory, the first
// DEVICE_LOCAL type. Every scenario fills a device buffer (or image) with GPU commands, with a
// pattern of its own, copies it into host-visible memory with a TRANSFER->HOST barrier, waits
// on a fence, maps and checks every byte (invalidating first where the chosen type is not
// HOST_COHERENT).
//
// Scenarios (names or their letters):
//   a staging                  readback buffer, plain allocation after its requirements query
//   b dedicated                readback buffer with VkMemoryDedicatedAllocateInfo
//   c block                    block-first sub-allocator: probe buffer created, queried and
//                              destroyed, an 8 MiB block, six readback regions bound into it
//   d mixed-suballoc           one 4 MiB allocation holding STORAGE|TRANSFER_DST buffers (no
//                              readback evidence)
//   e linear-image             dedicated memory of a LINEAR, TRANSFER_DST-only image
//   f hint-then-optimal-image  the requirements of a readback buffer as large as an OPTIMAL
//                              image are queried (it stays unbound), then memory sized for the
//                              image is allocated and the image bound to it; the image is
//                              cleared and copied to a readback buffer.
//                              Skipped where optimal images do not accept the naive type.
//   g hint-then-block          a sub-allocator's first block: a readback buffer's requirements
//                              are queried, then a 16 MiB block is allocated for it; the buffer
//                              and eight host-written storage buffers a compute dispatch reads
//                              and writes (through descriptors) are bound into the block. The
//                              block is not the readback buffer's memory: it must never move.
//
// Evidence from use (the patterns of issue 9; not in the default list, pick them by name):
//   h seed-large               the seed runtime's readback: device buffers filled through an
//                              upload staging buffer (STORAGE|TRANSFER_SRC, first HOST_VISIBLE
//                              type); a throwaway STORAGE|TRANSFER_DST buffer created, queried
//                              and destroyed, then a block of max(32 MiB, request) in the first
//                              HOST_VISIBLE type preferring DEVICE_LOCAL; a region buffer bound
//                              into it; three copies into that region, each vkQueueWaitIdle,
//                              vkMapMemory of the range, memcpy out, vkUnmapMemory (48 MB)
//   i seed-small               the same with a 64 KiB request (a 32 MiB block), and a second
//                              region bound into the block after the first copy
//   j ml-weights               an ML runtime's device buffers (STORAGE|TRANSFER_SRC|TRANSFER_DST)
//                              sub-allocated in host-visible VRAM (the naive type), weights
//                              written through a mapping, read and written in place by a compute
//                              shader through descriptors; results copied to readback staging in
//                              HOST_CACHED memory
//   k ml-copy-upload           two such blocks whose buffers are first filled by a GPU copy from
//                              upload staging, then read by the compute shader: the first block
//                              moves on its first use (a copy destination) and the GPU read that
//                              follows is the safety net's warning; the second block, of the same
//                              kind, stays where it was put
//
// Each scenario prints `scenario <name>: asked type <T> (<flags>) ... ok` or
// `scenario <name>: skipped (<why>)`; a mismatch prints `scenario <name>: FAILED ...`. The
// program ends with `checksum: <16 hex>` (FNV-1a over every verified byte) and exits non-zero on
// any mismatch or validation message.
#include "suite_util.h"  // tests/apps: Rng
#include "vk_app.h"

#include "readback_step_comp.h"  // tests/apps/shaders/roundtrip.comp (needs <cstdint> first)

#include <algorithm>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace {

constexpr VkMemoryPropertyFlags kDL = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
constexpr VkMemoryPropertyFlags kHV = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT;
constexpr VkMemoryPropertyFlags kHC = VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
constexpr VkMemoryPropertyFlags kCached = VK_MEMORY_PROPERTY_HOST_CACHED_BIT;

constexpr VkBufferUsageFlags kReadbackUsage = VK_BUFFER_USAGE_TRANSFER_DST_BIT;
constexpr VkBufferUsageFlags kDeviceUsage =
    VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;

constexpr VkDeviceSize kKiB = 1024, kMiB = 1024 * 1024;

using suite::Rng;

VkDeviceSize align_up(VkDeviceSize v, VkDeviceSize a) { return a ? (v + a - 1) / a * a : v; }

std::string flag_names(VkMemoryPropertyFlags f) {
    std::string s;
    auto add = [&](VkMemoryPropertyFlags bit, const char* name) {
        if (!(f & bit)) return;
        if (!s.empty()) s += "|";
        s += name;
    };
    add(kDL, "DEVICE_LOCAL");
    add(kHV, "HOST_VISIBLE");
    add(kHC, "HOST_COHERENT");
    add(kCached, "HOST_CACHED");
    add(VK_MEMORY_PROPERTY_LAZILY_ALLOCATED_BIT, "LAZILY_ALLOCATED");
    add(VK_MEMORY_PROPERTY_DEVICE_COHERENT_BIT_AMD | VK_MEMORY_PROPERTY_DEVICE_UNCACHED_BIT_AMD, "AMD_DEVICE");
    return s.empty() ? "none" : s;
}

class App {
public:
    App() : ctx_(vkapp::create_context("readback_app")) { pool_ = vkapp::create_command_pool(ctx_); }

    int finish() {
        vkDestroyCommandPool(ctx_.device, pool_, nullptr);
        const int rc = vkapp::finish(ctx_, checksum_);
        if (failures_) {
            std::fprintf(stderr, "readback_app: %d scenario(s) FAILED\n", failures_);
            return 3;
        }
        return rc;
    }

    void staging();
    void dedicated();
    void block();
    void mixed_suballoc();
    void linear_image();
    void hint_then_optimal_image();
    void hint_then_block();
    void seed_large() { seed_runtime("seed-large", 48000000, false); }
    void seed_small() { seed_runtime("seed-small", 64 * kKiB, true); }
    void ml_weights();
    void ml_copy_upload();

private:
    // The naive choice for memory the host reads (-1: none).
    int naive_host_type(uint32_t bits) const {
        int t = vkapp::find_memory_type(ctx_.memory_properties, bits, kHV | kDL);
        return t >= 0 ? t : vkapp::find_memory_type(ctx_.memory_properties, bits, kHV | kHC);
    }
    // The naive choice where the program cannot do without one (exits when there is none).
    uint32_t require_host_type(const char* scenario, uint32_t bits) const {
        const int type = naive_host_type(bits);
        if (type < 0) {
            std::fprintf(stderr, "scenario %s: no host-visible type in memoryTypeBits 0x%x\n", scenario, bits);
            std::exit(2);
        }
        return uint32_t(type);
    }
    VkMemoryPropertyFlags flags(uint32_t type) const { return ctx_.memory_properties.memoryTypes[type].propertyFlags; }
    std::string describe(uint32_t type) const {
        return std::to_string(type) + " (" + flag_names(flags(type)) + ")";
    }

    VkDeviceMemory allocate(VkDeviceSize size, uint32_t type, const void* next = nullptr) {
        VkMemoryAllocateInfo mai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
        mai.pNext = next;
        mai.allocationSize = size;
        mai.memoryTypeIndex = type;
        VkDeviceMemory memory;
        VK_CHECK(vkAllocateMemory(ctx_.device, &mai, nullptr, &memory));
        return memory;
    }

    VkBuffer create_buffer(VkDeviceSize size, VkBufferUsageFlags usage) {
        VkBufferCreateInfo bci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
        bci.size = size;
        bci.usage = usage;
        bci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
        VkBuffer buffer;
        VK_CHECK(vkCreateBuffer(ctx_.device, &bci, nullptr, &buffer));
        return buffer;
    }

    // Binds buffer `i` (`what`: "region", "storage buffer") into `memory`, a block of `block`
    // bytes of `type`, at the first offset from `cursor` its alignment allows, as a
    // sub-allocator would; returns where it ends. A buffer that cannot go there is a setup
    // error of the test (exit 2), not a finding.
    VkDeviceSize place(const char* scenario, const char* what, size_t i, VkBuffer buffer, VkDeviceMemory memory,
                       uint32_t type, VkDeviceSize block, VkDeviceSize cursor, VkDeviceSize* offset) {
        VkMemoryRequirements req;
        vkGetBufferMemoryRequirements(ctx_.device, buffer, &req);
        if (!(req.memoryTypeBits >> type & 1u)) {
            std::fprintf(stderr, "scenario %s: %s %zu does not accept the block's type %u (bits 0x%x)\n", scenario,
                         what, i, type, req.memoryTypeBits);
            std::exit(2);
        }
        *offset = align_up(cursor, req.alignment);
        if (*offset + req.size > block) {
            std::fprintf(stderr, "scenario %s: %s %zu does not fit the block\n", scenario, what, i);
            std::exit(2);
        }
        VK_CHECK(vkBindBufferMemory(ctx_.device, buffer, memory, *offset));
        return *offset + req.size;
    }

    // A device-local buffer the GPU fills, with its own allocation of the first DEVICE_LOCAL type.
    vkapp::Buffer device_buffer(VkDeviceSize size) {
        vkapp::Buffer b;
        b.size = size;
        b.buffer = create_buffer(size, kDeviceUsage);
        VkMemoryRequirements req;
        vkGetBufferMemoryRequirements(ctx_.device, b.buffer, &req);
        const int type = vkapp::find_memory_type(ctx_.memory_properties, req.memoryTypeBits, kDL);
        if (type < 0) {
            std::fprintf(stderr, "readback_app: no DEVICE_LOCAL type for buffers\n");
            std::exit(2);
        }
        b.memory_type = uint32_t(type);
        b.memory = allocate(req.size, b.memory_type);
        VK_CHECK(vkBindBufferMemory(ctx_.device, b.buffer, b.memory, 0));
        return b;
    }

    // Records GPU writes of a pattern into [offset, offset + size) of `buffer` (both multiples
    // of 4) and writes the same bytes into `expect` (indexed from `offset`): a fill with a word of
    // the seed's, then (after a barrier) vkCmdUpdateBuffer chunks of pseudo-random data at the
    // start, in the middle and at the end, where they do not overlap.
    static void record_pattern(VkCommandBuffer cb, VkBuffer buffer, VkDeviceSize offset, VkDeviceSize size,
                               uint64_t seed, uint8_t* expect) {
        Rng rng(seed);
        const uint32_t word = rng.next32() | 0x01010101u;  // no zero byte: a zeroed page never passes
        vkCmdFillBuffer(cb, buffer, offset, size, word);
        for (VkDeviceSize i = 0; i < size; i += 4) std::memcpy(expect + i, &word, 4);
        // The updates overwrite part of the fill: order them after it.
        transfer_to_transfer(cb);
        const VkDeviceSize chunk = std::min<VkDeviceSize>(size, 4096);
        const VkDeviceSize starts[] = {0, (size / 2) & ~VkDeviceSize(3), size - chunk};
        VkDeviceSize written = 0;  // chunks never overlap: no write-after-write between them
        for (VkDeviceSize start : starts) {
            if (start < written) continue;
            const VkDeviceSize n = std::min(chunk, size - start);
            written = start + n;
            std::vector<uint32_t> data(size_t(n / 4));
            for (auto& w : data) w = rng.next32();
            vkCmdUpdateBuffer(cb, buffer, offset + start, n, data.data());
            std::memcpy(expect + start, data.data(), size_t(n));
        }
    }

    void submit(const std::function<void(VkCommandBuffer)>& record) { vkapp::one_shot(ctx_, pool_, record); }

    void invalidate_if_needed(VkDeviceMemory memory, uint32_t type) {
        if (flags(type) & kHC) return;
        VkMappedMemoryRange r{VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE};
        r.memory = memory;
        r.offset = 0;
        r.size = VK_WHOLE_SIZE;
        VK_CHECK(vkInvalidateMappedMemoryRanges(ctx_.device, 1, &r));
    }

    void* map(VkDeviceMemory memory) {
        void* p = nullptr;
        VK_CHECK(vkMapMemory(ctx_.device, memory, 0, VK_WHOLE_SIZE, 0, &p));
        return p;
    }

    // Compares, hashes what was read, reports the first differences. True when equal.
    bool verify(const char* scenario, const char* what, const uint8_t* got, const uint8_t* want, size_t n) {
        checksum_ = vkapp::fnv1a(got, n, checksum_);
        size_t bad = 0, first = 0;
        for (size_t i = 0; i < n; ++i) {
            if (got[i] == want[i]) continue;
            if (!bad) first = i;
            if (bad < 4)
                std::fprintf(stderr, "scenario %s: %s byte %zu is 0x%02x, expected 0x%02x\n", scenario, what, i,
                             got[i], want[i]);
            ++bad;
        }
        if (bad)
            std::fprintf(stderr, "scenario %s: %s: %zu of %zu bytes differ (first at %zu)\n", scenario, what, bad, n,
                         first);
        return bad == 0;
    }

    void report(const char* scenario, const std::string& detail, bool ok) {
        std::printf("scenario %s: %s ... %s\n", scenario, detail.c_str(), ok ? "ok" : "FAILED");
        std::fflush(stdout);
        if (!ok) ++failures_;
    }

    void skipped(const char* scenario, const std::string& why) {
        std::printf("scenario %s: skipped (%s)\n", scenario, why.c_str());
        std::fflush(stdout);
    }

    // The barriers around a copy: pattern writes -> copy reads, and copy writes -> host reads.
    static void transfer_to_transfer(VkCommandBuffer cb) {
        vkapp::barrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT,
                       VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT);
    }
    static void transfer_to_host(VkCommandBuffer cb) {
        vkapp::barrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT,
                       VK_ACCESS_HOST_READ_BIT);
    }

    // The first memory type allowed by `bits` with all of `want`, else `fallback`'s choice.
    int first_type(uint32_t bits, VkMemoryPropertyFlags want) const {
        return vkapp::find_memory_type(ctx_.memory_properties, bits, want);
    }
    // Submits once and waits with vkQueueWaitIdle, as the seed runtime does.
    void submit_wait_idle(const std::function<void(VkCommandBuffer)>& record) {
        vkapp::one_shot(ctx_, pool_, record, vkapp::Wait::queue_idle);
    }
    // Records the in-place kernel (roundtrip.comp) over each buffer through its descriptor set,
    // then copies buffer i to `dst` at dst_offsets[i], with the barriers between.
    static void transform_and_copy(VkCommandBuffer cb, const vkapp::ComputePipeline& pipe,
                                   const std::vector<vkapp::StorageSet>& sets, const VkBuffer* buffers,
                                   const VkDeviceSize* sizes, const uint32_t* seeds, const VkDeviceSize* dst_offsets,
                                   size_t count, VkBuffer dst) {
        vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipe.pipeline);
        for (size_t i = 0; i < count; ++i) {
            const uint32_t push[2] = {uint32_t(sizes[i] / 4), seeds[i]};
            vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipe.layout, 0, 1, &sets[i].set, 0, nullptr);
            vkCmdPushConstants(cb, pipe.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof push, push);
            vkCmdDispatch(cb, (push[0] + 255) / 256, 1, 1);
        }
        vkapp::barrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                       VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT);
        for (size_t i = 0; i < count; ++i) {
            VkBufferCopy copy{0, dst_offsets[i], sizes[i]};
            vkCmdCopyBuffer(cb, buffers[i], dst, 1, &copy);
        }
        transfer_to_host(cb);
    }
    // Memory for `buffer` of type `type`, bound at 0.
    VkDeviceMemory bind_own(VkBuffer buffer, uint32_t type) {
        VkMemoryRequirements req;
        vkGetBufferMemoryRequirements(ctx_.device, buffer, &req);
        VkDeviceMemory memory = allocate(req.size, type);
        VK_CHECK(vkBindBufferMemory(ctx_.device, buffer, memory, 0));
        return memory;
    }
    void seed_runtime(const char* scenario, VkDeviceSize request, bool second_region);
    // An ML block: `count` device buffers of `words` each in one allocation of the naive host
    // type; filled by a mapping (map_first) or by a copy from upload staging. Returns ok.
    bool ml_block(const char* scenario, int index, bool map_first, uint32_t* type_out);

    // A single readback buffer of `size` filled from a device buffer with pattern `seed`,
    // allocated plainly or dedicated: scenarios a and b.
    void single_buffer(const char* scenario, VkDeviceSize size, uint64_t seed, bool dedicated);

    vkapp::Context ctx_;
    VkCommandPool pool_ = VK_NULL_HANDLE;
    uint64_t checksum_ = vkapp::fnv1a(nullptr, 0);
    int failures_ = 0;
};

void App::single_buffer(const char* scenario, VkDeviceSize size, uint64_t seed, bool dedicated) {
    vkapp::Buffer dev = device_buffer(size);
    // The readback buffer: create, query, allocate, bind, in this order and on this thread.
    VkBuffer buffer = create_buffer(size, kReadbackUsage);
    VkMemoryRequirements req;
    VkMemoryDedicatedRequirements dreq{VK_STRUCTURE_TYPE_MEMORY_DEDICATED_REQUIREMENTS};
    if (dedicated) {
        VkBufferMemoryRequirementsInfo2 info{VK_STRUCTURE_TYPE_BUFFER_MEMORY_REQUIREMENTS_INFO_2};
        info.buffer = buffer;
        VkMemoryRequirements2 req2{VK_STRUCTURE_TYPE_MEMORY_REQUIREMENTS_2};
        req2.pNext = &dreq;
        vkGetBufferMemoryRequirements2(ctx_.device, &info, &req2);
        req = req2.memoryRequirements;
    } else {
        vkGetBufferMemoryRequirements(ctx_.device, buffer, &req);
    }
    const uint32_t type = require_host_type(scenario, req.memoryTypeBits);
    VkMemoryDedicatedAllocateInfo dai{VK_STRUCTURE_TYPE_MEMORY_DEDICATED_ALLOCATE_INFO};
    dai.buffer = buffer;
    VkDeviceMemory memory = allocate(req.size, type, dedicated ? &dai : nullptr);
    VK_CHECK(vkBindBufferMemory(ctx_.device, buffer, memory, 0));

    std::vector<uint8_t> expect(static_cast<size_t>(size));
    submit([&](VkCommandBuffer cb) {
        record_pattern(cb, dev.buffer, 0, size, seed, expect.data());
        transfer_to_transfer(cb);
        VkBufferCopy copy{0, 0, size};
        vkCmdCopyBuffer(cb, dev.buffer, buffer, 1, &copy);
        transfer_to_host(cb);
    });
    auto* mapped = static_cast<const uint8_t*>(map(memory));
    invalidate_if_needed(memory, type);
    const bool ok = verify(scenario, "readback buffer", mapped, expect.data(), expect.size());
    vkUnmapMemory(ctx_.device, memory);
    std::string detail = "asked type " + describe(type) + ", " + std::to_string(req.size) + " bytes";
    if (dedicated)
        detail += std::string(", dedicated (prefers ") + (dreq.prefersDedicatedAllocation ? "yes" : "no") + ")";
    report(scenario, detail, ok);
    vkDestroyBuffer(ctx_.device, buffer, nullptr);
    vkFreeMemory(ctx_.device, memory, nullptr);
    vkapp::destroy_buffer(ctx_, dev);
}

void App::staging() { single_buffer("staging", 3 * 64 * kKiB + 4 * kKiB, 0xA1, false); }

void App::dedicated() { single_buffer("dedicated", kMiB + 4 * kKiB + 20, 0xB2, true); }

void App::block() {
    const char* scenario = "block";
    const VkDeviceSize kBlock = 8 * kMiB;
    const VkDeviceSize sizes[] = {4 * kKiB, 100 * kKiB + 12, kMiB, 192 * kKiB + 20, 2 * kMiB, 12 * kKiB + 8};
    constexpr size_t kRegions = sizeof sizes / sizeof sizes[0];
    VkDeviceSize src_offsets[kRegions];
    VkDeviceSize total = 0;
    for (size_t i = 0; i < kRegions; ++i) {
        src_offsets[i] = total;
        total += sizes[i];  // every size is a multiple of 4
    }
    vkapp::Buffer dev = device_buffer(total);

    // The sub-allocator learns the type for readback blocks from a probe buffer it then destroys.
    VkBuffer probe = create_buffer(64 * kKiB, kReadbackUsage);
    VkMemoryRequirements probe_req;
    vkGetBufferMemoryRequirements(ctx_.device, probe, &probe_req);
    vkDestroyBuffer(ctx_.device, probe, nullptr);
    const uint32_t type = require_host_type(scenario, probe_req.memoryTypeBits);
    VkDeviceMemory memory = allocate(kBlock, type);

    VkBuffer regions[kRegions];
    VkDeviceSize offsets[kRegions];
    VkDeviceSize cursor = 0;
    bool ok = true;
    for (size_t i = 0; i < kRegions; ++i) {
        regions[i] = create_buffer(sizes[i], kReadbackUsage);
        // Leave a gap, as sub-allocators do between regions freed and reused.
        cursor = place(scenario, "region", i, regions[i], memory, type, kBlock, cursor, &offsets[i]) + 4 * kKiB + 4;
    }

    std::vector<uint8_t> expect(static_cast<size_t>(total));
    submit([&](VkCommandBuffer cb) {
        for (size_t i = 0; i < kRegions; ++i)
            record_pattern(cb, dev.buffer, src_offsets[i], sizes[i], 0xC300 + i, expect.data() + src_offsets[i]);
        transfer_to_transfer(cb);
        for (size_t i = 0; i < kRegions; ++i) {
            VkBufferCopy copy{src_offsets[i], 0, sizes[i]};
            vkCmdCopyBuffer(cb, dev.buffer, regions[i], 1, &copy);
        }
        transfer_to_host(cb);
    });
    auto* mapped = static_cast<const uint8_t*>(map(memory));
    invalidate_if_needed(memory, type);
    for (size_t i = 0; i < kRegions; ++i) {
        const std::string what = "region " + std::to_string(i);
        const uint8_t* want = expect.data() + src_offsets[i];
        ok = verify(scenario, what.c_str(), mapped + offsets[i], want, size_t(sizes[i])) && ok;
    }
    vkUnmapMemory(ctx_.device, memory);
    report(scenario,
           "asked type " + describe(type) + ", block of " + std::to_string(kBlock) + " bytes, " +
               std::to_string(kRegions) + " regions",
           ok);
    for (VkBuffer b : regions) vkDestroyBuffer(ctx_.device, b, nullptr);
    vkFreeMemory(ctx_.device, memory, nullptr);
    vkapp::destroy_buffer(ctx_, dev);
}

void App::mixed_suballoc() {
    const char* scenario = "mixed-suballoc";
    const VkDeviceSize kBlock = 4 * kMiB;
    const VkDeviceSize sizes[] = {64 * kKiB, 256 * kKiB + 4, kMiB, 512 * kKiB + 36};
    constexpr size_t kCount = sizeof sizes / sizeof sizes[0];
    VkDeviceSize src_offsets[kCount];
    VkDeviceSize total = 0;
    for (size_t i = 0; i < kCount; ++i) {
        src_offsets[i] = total;
        total += sizes[i];
    }
    vkapp::Buffer dev = device_buffer(total);

    // Storage buffers the host also reads: no readback usage, so no readback evidence.
    VkBuffer buffers[kCount];
    VkMemoryRequirements reqs[kCount];
    uint32_t bits = ~0u;
    for (size_t i = 0; i < kCount; ++i) {
        buffers[i] = create_buffer(sizes[i], VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT);
        vkGetBufferMemoryRequirements(ctx_.device, buffers[i], &reqs[i]);
        bits &= reqs[i].memoryTypeBits;
    }
    const uint32_t type = require_host_type(scenario, bits);
    VkDeviceMemory memory = allocate(kBlock, type);
    VkDeviceSize offsets[kCount];
    VkDeviceSize cursor = 0;
    for (size_t i = 0; i < kCount; ++i)
        cursor = place(scenario, "storage buffer", i, buffers[i], memory, type, kBlock, cursor, &offsets[i]);

    std::vector<uint8_t> expect(static_cast<size_t>(total));
    submit([&](VkCommandBuffer cb) {
        for (size_t i = 0; i < kCount; ++i)
            record_pattern(cb, dev.buffer, src_offsets[i], sizes[i], 0xD400 + i, expect.data() + src_offsets[i]);
        transfer_to_transfer(cb);
        for (size_t i = 0; i < kCount; ++i) {
            VkBufferCopy copy{src_offsets[i], 0, sizes[i]};
            vkCmdCopyBuffer(cb, dev.buffer, buffers[i], 1, &copy);
        }
        transfer_to_host(cb);
    });
    auto* mapped = static_cast<const uint8_t*>(map(memory));
    invalidate_if_needed(memory, type);
    bool ok = true;
    for (size_t i = 0; i < kCount; ++i) {
        const std::string what = "storage buffer " + std::to_string(i);
        const uint8_t* want = expect.data() + src_offsets[i];
        ok = verify(scenario, what.c_str(), mapped + offsets[i], want, size_t(sizes[i])) && ok;
    }
    vkUnmapMemory(ctx_.device, memory);
    report(scenario,
           "asked type " + describe(type) + ", " + std::to_string(kBlock) + " bytes, " +
               std::to_string(kCount) + " storage buffers",
           ok);
    for (VkBuffer b : buffers) vkDestroyBuffer(ctx_.device, b, nullptr);
    vkFreeMemory(ctx_.device, memory, nullptr);
    vkapp::destroy_buffer(ctx_, dev);
}

void App::linear_image() {
    const char* scenario = "linear-image";
    const VkFormat format = VK_FORMAT_R8G8B8A8_UNORM;
    const uint32_t width = 123, height = 45;  // 492-byte rows: drivers may pad them
    VkImageFormatProperties fp;
    if (vkGetPhysicalDeviceImageFormatProperties(ctx_.physical_device, format, VK_IMAGE_TYPE_2D, VK_IMAGE_TILING_LINEAR,
                                                 VK_IMAGE_USAGE_TRANSFER_DST_BIT, 0, &fp) != VK_SUCCESS ||
        fp.maxExtent.width < width || fp.maxExtent.height < height) {
        skipped(scenario, "linear R8G8B8A8_UNORM transfer-destination images are not supported");
        return;
    }
    const VkDeviceSize bytes = VkDeviceSize(width) * height * 4;
    vkapp::Buffer dev = device_buffer(bytes);

    VkImageCreateInfo ici{VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO};
    ici.imageType = VK_IMAGE_TYPE_2D;
    ici.format = format;
    ici.extent = {width, height, 1};
    ici.mipLevels = 1;
    ici.arrayLayers = 1;
    ici.samples = VK_SAMPLE_COUNT_1_BIT;
    ici.tiling = VK_IMAGE_TILING_LINEAR;
    ici.usage = VK_IMAGE_USAGE_TRANSFER_DST_BIT;
    ici.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    ici.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED;
    VkImage image;
    VK_CHECK(vkCreateImage(ctx_.device, &ici, nullptr, &image));
    VkImageMemoryRequirementsInfo2 info{VK_STRUCTURE_TYPE_IMAGE_MEMORY_REQUIREMENTS_INFO_2};
    info.image = image;
    VkMemoryDedicatedRequirements dreq{VK_STRUCTURE_TYPE_MEMORY_DEDICATED_REQUIREMENTS};
    VkMemoryRequirements2 req2{VK_STRUCTURE_TYPE_MEMORY_REQUIREMENTS_2};
    req2.pNext = &dreq;
    vkGetImageMemoryRequirements2(ctx_.device, &info, &req2);
    const VkMemoryRequirements& req = req2.memoryRequirements;
    const int type = naive_host_type(req.memoryTypeBits);
    if (type < 0) {
        vkDestroyImage(ctx_.device, image, nullptr);
        vkapp::destroy_buffer(ctx_, dev);
        skipped(scenario, "no host-visible type for linear images");
        return;
    }
    VkMemoryDedicatedAllocateInfo dai{VK_STRUCTURE_TYPE_MEMORY_DEDICATED_ALLOCATE_INFO};
    dai.image = image;
    VkDeviceMemory memory = allocate(req.size, uint32_t(type), &dai);
    VK_CHECK(vkBindImageMemory(ctx_.device, image, memory, 0));

    std::vector<uint8_t> expect(static_cast<size_t>(bytes));
    submit([&](VkCommandBuffer cb) {
        record_pattern(cb, dev.buffer, 0, bytes, 0xE5, expect.data());
        VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
        mb.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
        mb.dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT;
        VkImageMemoryBarrier ib{VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER};
        ib.srcAccessMask = 0;
        ib.dstAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
        ib.oldLayout = VK_IMAGE_LAYOUT_UNDEFINED;
        ib.newLayout = VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL;
        ib.srcQueueFamilyIndex = ib.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
        ib.image = image;
        ib.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
        vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &mb, 0, nullptr,
                             1, &ib);
        VkBufferImageCopy copy{};
        copy.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
        copy.imageExtent = {width, height, 1};
        vkCmdCopyBufferToImage(cb, dev.buffer, image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1, &copy);
        // GENERAL: the layout in which the host may read a linear image.
        ib.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
        ib.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
        ib.oldLayout = VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL;
        ib.newLayout = VK_IMAGE_LAYOUT_GENERAL;
        vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 0, nullptr, 0, nullptr,
                             1, &ib);
    });
    VkImageSubresource sub{VK_IMAGE_ASPECT_COLOR_BIT, 0, 0};
    VkSubresourceLayout layout;
    vkGetImageSubresourceLayout(ctx_.device, image, &sub, &layout);
    auto* mapped = static_cast<const uint8_t*>(map(memory));
    invalidate_if_needed(memory, type);
    bool ok = true;
    const size_t row = size_t(width) * 4;
    for (uint32_t y = 0; y < height && ok; ++y) {
        const std::string what = "row " + std::to_string(y);
        ok = verify(scenario, what.c_str(), mapped + layout.offset + y * layout.rowPitch, expect.data() + y * row, row);
    }
    vkUnmapMemory(ctx_.device, memory);
    report(scenario,
           "asked type " + describe(uint32_t(type)) + ", " + std::to_string(req.size) + " bytes, dedicated, " +
               std::to_string(width) + "x" + std::to_string(height) + " rowPitch " + std::to_string(layout.rowPitch),
           ok);
    vkDestroyImage(ctx_.device, image, nullptr);
    vkFreeMemory(ctx_.device, memory, nullptr);
    vkapp::destroy_buffer(ctx_, dev);
}

void App::hint_then_optimal_image() {
    const char* scenario = "hint-then-optimal-image";
    const VkFormat format = VK_FORMAT_R8G8B8A8_UNORM;
    const uint32_t width = 128, height = 96;
    const VkImageUsageFlags usage = VK_IMAGE_USAGE_TRANSFER_DST_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT;
    VkImageFormatProperties fp;
    if (vkGetPhysicalDeviceImageFormatProperties(ctx_.physical_device, format, VK_IMAGE_TYPE_2D,
                                                 VK_IMAGE_TILING_OPTIMAL, usage, 0, &fp) != VK_SUCCESS) {
        skipped(scenario, "optimal R8G8B8A8_UNORM transfer images are not supported");
        return;
    }
    VkImageCreateInfo ici{VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO};
    ici.imageType = VK_IMAGE_TYPE_2D;
    ici.format = format;
    ici.extent = {width, height, 1};
    ici.mipLevels = 1;
    ici.arrayLayers = 1;
    ici.samples = VK_SAMPLE_COUNT_1_BIT;
    ici.tiling = VK_IMAGE_TILING_OPTIMAL;
    ici.usage = usage;
    ici.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    ici.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED;
    VkImage image;
    VK_CHECK(vkCreateImage(ctx_.device, &ici, nullptr, &image));
    VkMemoryRequirements image_req;
    vkGetImageMemoryRequirements(ctx_.device, image, &image_req);

    // The application queries the requirements of a readback buffer as large as the image (a
    // staging buffer for its pixels, say) and leaves it unbound; the next allocation is the
    // image's, of the same size: the hint's size bound cannot tell it from the buffer's memory.
    VkBuffer hint = create_buffer(image_req.size, kReadbackUsage);
    VkMemoryRequirements hint_req;
    vkGetBufferMemoryRequirements(ctx_.device, hint, &hint_req);
    const uint32_t type = require_host_type(scenario, hint_req.memoryTypeBits);
    if (!(image_req.memoryTypeBits >> type & 1u)) {
        char why[160];
        std::snprintf(why, sizeof why, "optimal images do not accept the naive type %s (image memoryTypeBits 0x%x)",
                      describe(type).c_str(), image_req.memoryTypeBits);
        vkDestroyBuffer(ctx_.device, hint, nullptr);
        vkDestroyImage(ctx_.device, image, nullptr);
        skipped(scenario, why);
        return;
    }
    // At least the buffer's size too (its requirement may be rounded up past the image's).
    VkDeviceMemory image_memory = allocate(std::max(image_req.size, hint_req.size), type);
    VK_CHECK(vkBindImageMemory(ctx_.device, image, image_memory, 0));

    // Where the image's pixels are read: an ordinary readback buffer (create, query, allocate).
    const VkDeviceSize bytes = VkDeviceSize(width) * height * 4;
    VkBuffer dst = create_buffer(bytes, kReadbackUsage);
    VkMemoryRequirements dst_req;
    vkGetBufferMemoryRequirements(ctx_.device, dst, &dst_req);
    const uint32_t dst_type = require_host_type(scenario, dst_req.memoryTypeBits);
    VkDeviceMemory dst_memory = allocate(dst_req.size, dst_type);
    VK_CHECK(vkBindBufferMemory(ctx_.device, dst, dst_memory, 0));

    const uint8_t texel[4] = {0x16, 0x5b, 0xa4, 0xe9};  // this scenario's pattern
    submit([&](VkCommandBuffer cb) {
        VkImageMemoryBarrier ib{VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER};
        ib.srcAccessMask = 0;
        ib.dstAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
        ib.oldLayout = VK_IMAGE_LAYOUT_UNDEFINED;
        ib.newLayout = VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL;
        ib.srcQueueFamilyIndex = ib.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
        ib.image = image;
        ib.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
        vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 0, nullptr, 0,
                             nullptr, 1, &ib);
        VkClearColorValue color;
        for (int c = 0; c < 4; ++c) color.float32[c] = float(texel[c]) / 255.0f;  // exact in UNORM8
        vkCmdClearColorImage(cb, image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, &color, 1, &ib.subresourceRange);
        ib.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
        ib.dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT;
        ib.oldLayout = VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL;
        ib.newLayout = VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL;
        vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 0, nullptr, 0,
                             nullptr, 1, &ib);
        VkBufferImageCopy copy{};
        copy.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
        copy.imageExtent = {width, height, 1};
        vkCmdCopyImageToBuffer(cb, image, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, dst, 1, &copy);
        transfer_to_host(cb);
    });
    std::vector<uint8_t> expect(static_cast<size_t>(bytes));
    for (size_t i = 0; i < expect.size(); ++i) expect[i] = texel[i % 4];
    auto* mapped = static_cast<const uint8_t*>(map(dst_memory));
    invalidate_if_needed(dst_memory, dst_type);
    const bool ok = verify(scenario, "image copy", mapped, expect.data(), expect.size());
    vkUnmapMemory(ctx_.device, dst_memory);
    report(scenario,
           "asked type " + describe(type) + " for the image (" + std::to_string(image_req.size) +
               " bytes), type " + describe(dst_type) + " for its readback buffer",
           ok);
    vkDestroyBuffer(ctx_.device, dst, nullptr);
    vkFreeMemory(ctx_.device, dst_memory, nullptr);
    vkDestroyImage(ctx_.device, image, nullptr);
    vkFreeMemory(ctx_.device, image_memory, nullptr);
    vkDestroyBuffer(ctx_.device, hint, nullptr);  // never bound
}

void App::hint_then_block() {
    const char* scenario = "hint-then-block";
    const VkDeviceSize kBlock = 16 * kMiB;
    // Storage buffers the host writes and a compute dispatch then reads and writes in place.
    const VkDeviceSize sizes[] = {64 * kKiB, 256 * kKiB + 16, 512 * kKiB, 4 * kKiB + 4,
                                  768 * kKiB + 8, 128 * kKiB, 192 * kKiB + 12, 32 * kKiB};
    constexpr size_t kCount = sizeof sizes / sizeof sizes[0];
    VkDeviceSize dst_offsets[kCount];
    VkDeviceSize total = 0;
    for (size_t i = 0; i < kCount; ++i) {
        dst_offsets[i] = total;
        total += sizes[i];  // every size is a multiple of 4
    }

    // The sub-allocator is asked for a readback buffer (every result, about 2 MiB) and has no
    // block of its type yet: it queries the buffer, allocates a block, binds the buffer at 0.
    VkBuffer readback = create_buffer(total, kReadbackUsage);
    VkMemoryRequirements readback_req;
    vkGetBufferMemoryRequirements(ctx_.device, readback, &readback_req);
    const uint32_t type = require_host_type(scenario, readback_req.memoryTypeBits);
    VkDeviceMemory memory = allocate(kBlock, type);
    VK_CHECK(vkBindBufferMemory(ctx_.device, readback, memory, 0));

    // Then the storage buffers land in the same block, which has room to spare.
    VkBuffer buffers[kCount];
    VkDeviceSize offsets[kCount];
    VkDeviceSize cursor = readback_req.size;
    for (size_t i = 0; i < kCount; ++i) {
        buffers[i] = create_buffer(sizes[i], VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT);
        cursor = place(scenario, "storage buffer", i, buffers[i], memory, type, kBlock, cursor, &offsets[i]);
    }

    // The host writes the inputs in place; the kernel transforms each word (roundtrip.comp).
    auto* mapped = static_cast<uint8_t*>(map(memory));
    std::vector<uint8_t> expect(static_cast<size_t>(total));
    uint32_t seeds[kCount];
    for (size_t i = 0; i < kCount; ++i) {
        Rng rng(0x6700 + i);
        seeds[i] = rng.next32();
        const size_t words = size_t(sizes[i] / 4);
        std::vector<uint32_t> input(words);
        for (size_t w = 0; w < words; ++w) {
            input[w] = rng.next32();
            uint32_t v = input[w] * 2654435761u + (seeds[i] ^ uint32_t(w));
            v ^= v >> 15;
            std::memcpy(expect.data() + dst_offsets[i] + 4 * w, &v, 4);
        }
        std::memcpy(mapped + offsets[i], input.data(), size_t(sizes[i]));
    }
    if (!(flags(type) & kHC)) {
        VkMappedMemoryRange r{VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE};
        r.memory = memory;
        r.offset = 0;
        r.size = VK_WHOLE_SIZE;
        VK_CHECK(vkFlushMappedMemoryRanges(ctx_.device, 1, &r));
    }

    vkapp::ComputePipeline pipe =
        vkapp::create_compute_pipeline(ctx_, readback_step_comp, sizeof readback_step_comp, 1, 8);
    std::vector<vkapp::StorageSet> sets;
    for (VkBuffer b : buffers) sets.push_back(vkapp::create_storage_set(ctx_, pipe, {b}));
    submit([&](VkCommandBuffer cb) { transform_and_copy(cb, pipe, sets, buffers, sizes, seeds, dst_offsets, kCount, readback); });
    invalidate_if_needed(memory, type);
    bool ok = true;
    for (size_t i = 0; i < kCount; ++i) {
        const std::string what = "result " + std::to_string(i);
        ok = verify(scenario, what.c_str(), mapped + dst_offsets[i], expect.data() + dst_offsets[i],
                    size_t(sizes[i])) && ok;
    }
    vkUnmapMemory(ctx_.device, memory);
    report(scenario,
           "asked type " + describe(type) + ", block of " + std::to_string(kBlock) + " bytes, readback buffer of " +
               std::to_string(readback_req.size) + " bytes and " + std::to_string(kCount) + " storage buffers",
           ok);
    for (vkapp::StorageSet& s : sets) vkapp::destroy_storage_set(ctx_, s);
    vkapp::destroy_compute_pipeline(ctx_, pipe);
    for (VkBuffer b : buffers) vkDestroyBuffer(ctx_.device, b, nullptr);
    vkDestroyBuffer(ctx_.device, readback, nullptr);
    vkFreeMemory(ctx_.device, memory, nullptr);
}


void App::seed_runtime(const char* scenario, VkDeviceSize request, bool second_region) {
    constexpr VkBufferUsageFlags kStaging = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    constexpr VkBufferUsageFlags kUpload = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT;
    const VkDeviceSize kMinBlock = 32 * kMiB;
    const VkDeviceSize second = 200 * kKiB + 12;  // the second region's size (seed-small)
    const VkDeviceSize dev_size = request + (second_region ? second : 0);
    vkapp::Buffer dev = device_buffer(dev_size);

    // Upload staging: the first HOST_VISIBLE type, written through a mapping, copied to the device.
    VkBuffer upload = create_buffer(dev_size, kUpload);
    VkMemoryRequirements upload_req;
    vkGetBufferMemoryRequirements(ctx_.device, upload, &upload_req);
    const int upload_type = first_type(upload_req.memoryTypeBits, kHV);
    if (upload_type < 0) {
        std::fprintf(stderr, "scenario %s: no host-visible type for upload staging\n", scenario);
        std::exit(2);
    }
    VkDeviceMemory upload_memory = bind_own(upload, uint32_t(upload_type));
    std::vector<uint8_t> expect(static_cast<size_t>(dev_size));
    {
        Rng rng(0x5EED);
        for (size_t i = 0; i + 4 <= expect.size(); i += 4) {
            const uint32_t w = rng.next32() | 0x01010101u;
            std::memcpy(&expect[i], &w, 4);
        }
        void* p = map(upload_memory);
        std::memcpy(p, expect.data(), expect.size());
        if (!(flags(uint32_t(upload_type)) & kHC)) {
            VkMappedMemoryRange r{VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE};
            r.memory = upload_memory;
            r.size = VK_WHOLE_SIZE;
            VK_CHECK(vkFlushMappedMemoryRanges(ctx_.device, 1, &r));
        }
        vkUnmapMemory(ctx_.device, upload_memory);
    }
    submit_wait_idle([&](VkCommandBuffer cb) {
        VkBufferCopy copy{0, 0, dev_size};
        vkCmdCopyBuffer(cb, upload, dev.buffer, 1, &copy);
    });

    // The block allocator: a throwaway buffer of the request's usage tells the type, then a block.
    VkBuffer probe = create_buffer(request, kStaging);
    VkMemoryRequirements probe_req;
    vkGetBufferMemoryRequirements(ctx_.device, probe, &probe_req);
    vkDestroyBuffer(ctx_.device, probe, nullptr);
    const uint32_t type = require_host_type(scenario, probe_req.memoryTypeBits);
    const VkDeviceSize block_size = std::max(kMinBlock, align_up(request, probe_req.alignment));
    VkDeviceMemory block = allocate(block_size, type);

    struct Region {
        VkBuffer buffer;
        VkDeviceSize offset, size, src_offset;
    };
    std::vector<Region> regions;
    auto add_region = [&](VkDeviceSize size, VkDeviceSize src_offset, VkDeviceSize at_least) {
        Region r{create_buffer(size, kStaging), 0, size, src_offset};
        VkMemoryRequirements req;
        vkGetBufferMemoryRequirements(ctx_.device, r.buffer, &req);
        r.offset = align_up(at_least, req.alignment);
        if (!(req.memoryTypeBits >> type & 1u) || r.offset + req.size > block_size) {
            std::fprintf(stderr, "scenario %s: a region does not fit the block\n", scenario);
            std::exit(2);
        }
        VK_CHECK(vkBindBufferMemory(ctx_.device, r.buffer, block, r.offset));
        regions.push_back(r);
    };
    add_region(request, 0, 0);

    bool ok = true;
    const int kRounds = 3;
    for (int round = 0; round < kRounds; ++round) {
        if (round == 1 && second_region) add_region(second, request, regions[0].offset + request + 4 * kKiB);
        submit_wait_idle([&](VkCommandBuffer cb) {
            if (round > 0) {  // fresh data each round, so a stale read cannot pass
                record_pattern(cb, dev.buffer, 0, dev_size, 0x5E00 + uint64_t(round), expect.data());
                transfer_to_transfer(cb);
            }
            for (const Region& r : regions) {
                VkBufferCopy copy{r.src_offset, 0, r.size};
                vkCmdCopyBuffer(cb, dev.buffer, r.buffer, 1, &copy);
            }
            transfer_to_host(cb);
        });
        for (size_t i = 0; i < regions.size(); ++i) {
            const Region& r = regions[i];
            void* p = nullptr;
            VK_CHECK(vkMapMemory(ctx_.device, block, r.offset, r.size, 0, &p));
            if (!(flags(type) & kHC)) {
                VkMappedMemoryRange range{VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE};
                range.memory = block;
                range.offset = r.offset;
                range.size = VK_WHOLE_SIZE;
                VK_CHECK(vkInvalidateMappedMemoryRanges(ctx_.device, 1, &range));
            }
            std::vector<uint8_t> out(static_cast<size_t>(r.size));
            std::memcpy(out.data(), p, out.size());
            vkUnmapMemory(ctx_.device, block);
            const std::string what = "round " + std::to_string(round) + " region " + std::to_string(i);
            ok = verify(scenario, what.c_str(), out.data(), expect.data() + r.src_offset, out.size()) && ok;
        }
    }
    report(scenario,
           "asked type " + describe(type) + ", block of " + std::to_string(block_size) + " bytes, " +
               std::to_string(regions.size()) + " region(s) of STORAGE|TRANSFER_DST, " + std::to_string(kRounds) +
               " copies each; upload staging in type " + std::to_string(upload_type),
           ok);
    for (const Region& r : regions) vkDestroyBuffer(ctx_.device, r.buffer, nullptr);
    vkFreeMemory(ctx_.device, block, nullptr);
    vkDestroyBuffer(ctx_.device, upload, nullptr);
    vkFreeMemory(ctx_.device, upload_memory, nullptr);
    vkapp::destroy_buffer(ctx_, dev);
}

bool App::ml_block(const char* scenario, int index, bool map_first, uint32_t* type_out) {
    const VkDeviceSize kBlock = 4 * kMiB;
    const VkDeviceSize sizes[] = {512 * kKiB + 64, 1 * kMiB + 256};
    constexpr size_t kCount = sizeof sizes / sizeof sizes[0];
    VkBuffer buffers[kCount];
    VkMemoryRequirements reqs[kCount];
    uint32_t bits = ~0u;
    for (size_t i = 0; i < kCount; ++i) {
        buffers[i] = create_buffer(sizes[i], kDeviceUsage);
        vkGetBufferMemoryRequirements(ctx_.device, buffers[i], &reqs[i]);
        bits &= reqs[i].memoryTypeBits;
    }
    const uint32_t type = require_host_type(scenario, bits);  // host-visible VRAM where there is some
    *type_out = type;
    VkDeviceMemory memory = allocate(kBlock, type);
    VkDeviceSize offsets[kCount], cursor = 0, total = 0;
    for (size_t i = 0; i < kCount; ++i) {
        offsets[i] = align_up(cursor, reqs[i].alignment);
        VK_CHECK(vkBindBufferMemory(ctx_.device, buffers[i], memory, offsets[i]));
        cursor = offsets[i] + reqs[i].size;
        total += sizes[i];
    }
    // Inputs, and what the kernel (roundtrip.comp) makes of them.
    std::vector<std::vector<uint32_t>> input(kCount);
    std::vector<uint8_t> expect(static_cast<size_t>(total));
    uint32_t seeds[kCount];
    VkDeviceSize dst_offsets[kCount], at = 0;
    for (size_t i = 0; i < kCount; ++i) {
        Rng rng(0x3100 + 16 * uint64_t(index) + i);
        seeds[i] = rng.next32();
        input[i].resize(size_t(sizes[i] / 4));
        dst_offsets[i] = at;
        for (size_t w = 0; w < input[i].size(); ++w) {
            input[i][w] = rng.next32();
            uint32_t v = input[i][w] * 2654435761u + (seeds[i] ^ uint32_t(w));
            v ^= v >> 15;
            std::memcpy(expect.data() + at + 4 * w, &v, 4);
        }
        at += sizes[i];
    }
    VkBuffer upload = VK_NULL_HANDLE;
    VkDeviceMemory upload_memory = VK_NULL_HANDLE;
    if (map_first) {
        // Weights go straight into the mapped device memory.
        auto* p = static_cast<uint8_t*>(map(memory));
        for (size_t i = 0; i < kCount; ++i) std::memcpy(p + offsets[i], input[i].data(), size_t(sizes[i]));
        if (!(flags(type) & kHC)) {
            VkMappedMemoryRange r{VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE};
            r.memory = memory;
            r.size = VK_WHOLE_SIZE;
            VK_CHECK(vkFlushMappedMemoryRanges(ctx_.device, 1, &r));
        }
        vkUnmapMemory(ctx_.device, memory);
    } else {
        upload = create_buffer(total, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT);
        VkMemoryRequirements req;
        vkGetBufferMemoryRequirements(ctx_.device, upload, &req);
        const int upload_type = first_type(req.memoryTypeBits, kHV | kHC);
        upload_memory = bind_own(upload, uint32_t(upload_type));
        auto* p = static_cast<uint8_t*>(map(upload_memory));
        for (size_t i = 0; i < kCount; ++i) std::memcpy(p + dst_offsets[i], input[i].data(), size_t(sizes[i]));
        vkUnmapMemory(ctx_.device, upload_memory);
    }
    // Readback staging of its own, already HOST_CACHED (coherent where the device has it).
    VkBuffer out = create_buffer(total, kReadbackUsage);
    VkMemoryRequirements out_req;
    vkGetBufferMemoryRequirements(ctx_.device, out, &out_req);
    int out_type = first_type(out_req.memoryTypeBits, kHV | kHC | kCached);
    if (out_type < 0) out_type = first_type(out_req.memoryTypeBits, kHV | kCached);
    if (out_type < 0) out_type = int(require_host_type(scenario, out_req.memoryTypeBits));
    VkDeviceMemory out_memory = bind_own(out, uint32_t(out_type));

    vkapp::ComputePipeline pipe = vkapp::create_compute_pipeline(ctx_, readback_step_comp, sizeof readback_step_comp, 1, 8);
    std::vector<vkapp::StorageSet> sets;
    if (map_first)
        for (VkBuffer b : buffers) sets.push_back(vkapp::create_storage_set(ctx_, pipe, {b}));
    submit([&](VkCommandBuffer cb) {
        if (!map_first) {
            for (size_t i = 0; i < kCount; ++i) {
                VkBufferCopy copy{dst_offsets[i], 0, sizes[i]};
                vkCmdCopyBuffer(cb, upload, buffers[i], 1, &copy);
            }
            vkapp::barrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                           VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
        }
    });
    // The runtime writes its descriptors once the buffers hold their data (after the upload).
    if (!map_first)
        for (VkBuffer b : buffers) sets.push_back(vkapp::create_storage_set(ctx_, pipe, {b}));
    submit([&](VkCommandBuffer cb) { transform_and_copy(cb, pipe, sets, buffers, sizes, seeds, dst_offsets, kCount, out); });
    auto* mapped = static_cast<const uint8_t*>(map(out_memory));
    invalidate_if_needed(out_memory, uint32_t(out_type));
    const std::string what = "block " + std::to_string(index);
    const bool ok = verify(scenario, what.c_str(), mapped, expect.data(), expect.size());
    vkUnmapMemory(ctx_.device, out_memory);
    for (vkapp::StorageSet& set : sets) vkapp::destroy_storage_set(ctx_, set);
    vkapp::destroy_compute_pipeline(ctx_, pipe);
    vkDestroyBuffer(ctx_.device, out, nullptr);
    vkFreeMemory(ctx_.device, out_memory, nullptr);
    if (upload) {
        vkDestroyBuffer(ctx_.device, upload, nullptr);
        vkFreeMemory(ctx_.device, upload_memory, nullptr);
    }
    for (VkBuffer b : buffers) vkDestroyBuffer(ctx_.device, b, nullptr);
    vkFreeMemory(ctx_.device, memory, nullptr);
    return ok;
}

void App::ml_weights() {
    uint32_t type = 0;
    const bool ok = ml_block("ml-weights", 0, true, &type);
    report("ml-weights", "asked type " + describe(type) + " for 2 device buffers, written through a mapping", ok);
}

void App::ml_copy_upload() {
    uint32_t type = 0, type2 = 0;
    bool ok = ml_block("ml-copy-upload", 1, false, &type);
    ok = ml_block("ml-copy-upload", 2, false, &type2) && ok;
    report("ml-copy-upload",
           "asked type " + describe(type) + " and type " + describe(type2) +
               " for two blocks of device buffers, filled by copies",
           ok);
}

struct Scenario {
    char letter;
    const char* name;
    void (App::*run)();
};
const Scenario kScenarios[] = {
    {'a', "staging", &App::staging},
    {'b', "dedicated", &App::dedicated},
    {'c', "block", &App::block},
    {'d', "mixed-suballoc", &App::mixed_suballoc},
    {'e', "linear-image", &App::linear_image},
    {'f', "hint-then-optimal-image", &App::hint_then_optimal_image},
    {'g', "hint-then-block", &App::hint_then_block},
    // Evidence from use: run only when named.
    {'h', "seed-large", &App::seed_large},
    {'i', "seed-small", &App::seed_small},
    {'j', "ml-weights", &App::ml_weights},
    {'k', "ml-copy-upload", &App::ml_copy_upload},
};
constexpr size_t kDefaultScenarios = 7;  // a..g
constexpr size_t kScenarioCount = sizeof kScenarios / sizeof kScenarios[0];

[[noreturn]] void usage(const char* argv0) {
    std::fprintf(stderr, "usage: %s [--scenarios a,b,...]   (letters or names:", argv0);
    for (const Scenario& s : kScenarios) std::fprintf(stderr, " %c=%s", s.letter, s.name);
    std::fprintf(stderr, ")\n");
    std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
    bool wanted[kScenarioCount];
    for (size_t s = 0; s < kScenarioCount; ++s) wanted[s] = s < kDefaultScenarios;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--scenarios") != 0 || i + 1 >= argc) usage(argv[0]);
        for (bool& w : wanted) w = false;
        std::string list = argv[++i];
        size_t pos = 0;
        while (pos <= list.size()) {
            const size_t comma = std::min(list.find(',', pos), list.size());
            const std::string item = list.substr(pos, comma - pos);
            pos = comma + 1;
            if (item.empty()) continue;
            bool found = false;
            for (size_t s = 0; s < kScenarioCount; ++s) {
                if (item == kScenarios[s].name || (item.size() == 1 && item[0] == kScenarios[s].letter)) {
                    wanted[s] = true;
                    found = true;
                }
            }
            if (!found) {
                std::fprintf(stderr, "%s: unknown scenario '%s'\n", argv[0], item.c_str());
                usage(argv[0]);
            }
        }
    }
    App app;
    for (size_t s = 0; s < kScenarioCount; ++s)
        if (wanted[s]) (app.*kScenarios[s].run)();
    return app.finish();
}
