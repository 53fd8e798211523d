// Memory layouts (VkPhysicalDeviceMemoryProperties) of real devices, by name.
//
// One definition, used by the unit tests of the memory policy and by the test-only layer
// VK_LAYER_SLIPSTREAM_test_memory_layout (tests/layers/memory_layout), which presents one of them
// to the layers above it so that real programs see a realistic layout on lavapipe.
//
// Type order, flags and heap assignment are what matters to the policy, and follow the devices
// named. Heap sizes of system-memory heaps depend on the host and are illustrative; VRAM sizes
// are the cards'. Where a layout was written from memory of vulkaninfo / gpuinfo.org dumps
// rather than read off a machine here, its comment says so.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string>
#include <vector>

namespace slipstream::test {

struct MemoryLayout {
    const char* name;    // what SLIPSTREAM_TEST_MEMORY_LAYOUT takes
    const char* origin;  // the device it comes from
    VkPhysicalDeviceMemoryProperties props;
    // Whether optimal-tiling images accept host-visible types. NVIDIA's drivers allow optimal
    // images only their plain DEVICE_LOCAL type (read on the H200: memoryTypeBits 0x2); RADV,
    // Intel and the SoCs accept any DEVICE_LOCAL type. Decides whether a redirect between two
    // host-visible types is safe for memory whose resources the layer cannot see in advance.
    bool optimal_images_host_visible = true;
};

namespace layout_detail {

constexpr VkDeviceSize kMiB = 1024ull * 1024ull;
constexpr VkDeviceSize kGiB = 1024ull * kMiB;

constexpr VkMemoryPropertyFlags DL = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
constexpr VkMemoryPropertyFlags HV = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT;
constexpr VkMemoryPropertyFlags HC = VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
constexpr VkMemoryPropertyFlags HCACHED = VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
constexpr VkMemoryPropertyFlags LAZY = VK_MEMORY_PROPERTY_LAZILY_ALLOCATED_BIT;
constexpr VkMemoryPropertyFlags AMD_DC_DU =
    VK_MEMORY_PROPERTY_DEVICE_COHERENT_BIT_AMD | VK_MEMORY_PROPERTY_DEVICE_UNCACHED_BIT_AMD;
constexpr VkMemoryHeapFlags HEAP_DL = VK_MEMORY_HEAP_DEVICE_LOCAL_BIT;

struct Heap {
    VkDeviceSize size;
    VkMemoryHeapFlags flags;
};
struct Type {
    VkMemoryPropertyFlags flags;
    uint32_t heap;
};

inline VkPhysicalDeviceMemoryProperties make(std::initializer_list<Heap> heaps,
                                             std::initializer_list<Type> types) {
    VkPhysicalDeviceMemoryProperties p;
    std::memset(&p, 0, sizeof p);
    for (const Heap& h : heaps) p.memoryHeaps[p.memoryHeapCount++] = {h.size, h.flags};
    for (const Type& t : types) p.memoryTypes[p.memoryTypeCount++] = {t.flags, t.heap};
    return p;
}

inline std::vector<MemoryLayout> build() {
    return {
        // GeForce RTX 4070 (12 GiB), NVIDIA Linux driver, resizable BAR off: the GPU of
        // BACKGROUND.md part 2 (its types 3 and 4, the 246 MiB BAR heap). NVIDIA keeps 10 MiB of
        // the 256 MiB BAR for itself. System-RAM heap sized for a 32 GiB host.
        {"nvidia-bar", "NVIDIA GeForce RTX 4070, Linux, resizable BAR off",
         make({{12 * kGiB, HEAP_DL}, {32 * kGiB, 0}, {246 * kMiB, HEAP_DL}},
              {{0, 1},                  // 0: no flags (NVIDIA lists one on the system heap)
               {DL, 0},                 // 1: VRAM
               {HV | HC, 1},            // 2: system RAM, write-combined
               {HV | HC | HCACHED, 1},  // 3: system RAM, cached: where readback belongs
               {DL | HV | HC, 2}}),     // 4: the BAR window: fast to write, ~22 MB/s to read
         false},
        // GeForce RTX 4090 (24 GiB), NVIDIA Linux driver, resizable BAR on: the same five types, but
        // the BAR covers all of VRAM, so the host-visible VRAM type lives on the VRAM heap itself.
        // The heap structure is taken from the H200 below (read on a machine); not checked on a
        // GeForce.
        {"nvidia-rebar", "NVIDIA GeForce RTX 4090, Linux, resizable BAR on",
         make({{24 * kGiB, HEAP_DL}, {32 * kGiB, 0}},
              {{0, 1}, {DL, 0}, {HV | HC, 1}, {HV | HC | HCACHED, 1}, {DL | HV | HC, 0}}), false},
        // NVIDIA H200, driver 580.159.04, read with vkGetPhysicalDeviceMemoryProperties on the device
        // machine (layout_probe, 2026-11-30): all of VRAM is host-visible (BAR1 is 256 GiB) and type
        // 4 is on the VRAM heap. CPU reads (slipstream-memory-types on the H200): type 4 ~0.06 GB/s, type 3
        // ~12 GB/s. The system heap's size depends on the host (this one has 128 GiB of RAM).
        {"nvidia-h200", "NVIDIA H200, driver 580.159.04, Linux",
         make({{150754820096ull, HEAP_DL}, {101361423360ull, 0}},
              {{0, 1}, {DL, 0}, {HV | HC, 1}, {HV | HC | HCACHED, 1}, {DL | HV | HC, 0}}), false},
        // Radeon RX 6800 (16 GiB) on RADV, Smart Access Memory / resizable BAR off. RADV's four
        // types (VRAM, GTT write-combined, CPU-visible VRAM, GTT cached), then their
        // DEVICE_COHERENT_AMD|DEVICE_UNCACHED_AMD twins (VK_AMD_device_coherent_memory, GPUs with
        // an uncached L2 path). Newer RADV also lists 32-bit-address duplicates of some types,
        // hidden from ordinary resources; left out. Written from memory of RADV dumps.
        {"amd", "AMD Radeon RX 6800 (RADV), resizable BAR off",
         make({{16 * kGiB - 256 * kMiB, HEAP_DL}, {24 * kGiB, 0}, {256 * kMiB, HEAP_DL}},
              {{DL, 0},                              // 0: VRAM
               {HV | HC, 1},                         // 1: GTT, write-combined
               {DL | HV | HC, 2},                    // 2: CPU-visible VRAM (256 MiB)
               {HV | HC | HCACHED, 1},               // 3: GTT, cached
               {DL | AMD_DC_DU, 0},                  // 4..7: the device-coherent twins
               {HV | HC | AMD_DC_DU, 1},
               {DL | HV | HC | AMD_DC_DU, 2},
               {HV | HC | HCACHED | AMD_DC_DU, 1}})},
        // Intel integrated (Iris Xe / UHD 6xx class): one heap of shared system memory, every
        // type DEVICE_LOCAL, a write-combined and a cached (LLC-coherent) host-visible type. This
        // is the Windows driver's list and that of recent ANV; older ANV had only types 0 and 2.
        // Written from memory of gpuinfo.org dumps.
        {"intel", "Intel Iris Xe (integrated), Windows driver / recent ANV",
         make({{8 * kGiB, HEAP_DL}},
              {{DL, 0}, {DL | HV | HC, 0}, {DL | HV | HC | HCACHED, 0}})},
        // Arm SoC (Mali Bifrost such as G72, or Adreno 5xx): unified memory in one heap; the
        // host-visible types are either coherent and uncached, or cached and NOT coherent: there is
        // no type that is both (BACKGROUND.md part 2). A lazily allocated type serves transient
        // attachments of tilers. Whether a plain DEVICE_LOCAL type comes first varies by driver.
        // Written from memory of gpuinfo.org dumps.
        {"arm", "Arm Mali (Bifrost) / Adreno 5xx class SoC",
         make({{4 * kGiB, HEAP_DL}},
              {{DL, 0}, {DL | HV | HC, 0}, {DL | HV | HCACHED, 0}, {DL | LAZY, 0}})},
        // Qualcomm Adreno 6xx class SoC: like "arm" plus a type that is both cached and coherent
        // (I/O-coherent SoC), listed AFTER the cached non-coherent one, so a policy that takes
        // "the first HOST_CACHED type" picks the wrong one. Written from memory of gpuinfo.org.
        {"adreno", "Qualcomm Adreno 6xx class SoC",
         make({{6 * kGiB, HEAP_DL}},
              {{DL, 0}, {DL | HV | HC, 0}, {DL | HV | HCACHED, 0}, {DL | HV | HC | HCACHED, 0}})},
        // Mesa lavapipe (llvmpipe, Mesa 22.3), read with vulkaninfo on the development machine.
        {"lavapipe", "Mesa lavapipe 22.3 (CPU)",
         make({{2 * kGiB, HEAP_DL}}, {{DL | HV | HC | HCACHED, 0}})},
        // Synthetic: a discrete GPU with no cached host memory at all (the policy must then leave
        // every choice alone). Shaped like "nvidia-bar" without type 3.
        {"no-cached", "synthetic: discrete GPU without a HOST_CACHED type",
         make({{8 * kGiB, HEAP_DL}, {16 * kGiB, 0}, {256 * kMiB, HEAP_DL}},
              {{DL, 0}, {HV | HC, 1}, {DL | HV | HC, 2}})},
    };
}

}  // namespace layout_detail

// All layouts, in a fixed order.
inline const std::vector<MemoryLayout>& memory_layouts() {
    static const std::vector<MemoryLayout> layouts = layout_detail::build();
    return layouts;
}

// The layout called `name`, or nullptr.
inline const MemoryLayout* find_memory_layout(const char* name) {
    if (!name) return nullptr;
    for (const MemoryLayout& layout : memory_layouts())
        if (std::strcmp(layout.name, name) == 0) return &layout;
    return nullptr;
}

// "nvidia-bar, nvidia-rebar, ..." for messages.
inline std::string memory_layout_names() {
    std::string names;
    for (const MemoryLayout& layout : memory_layouts()) {
        if (!names.empty()) names += ", ";
        names += layout.name;
    }
    return names;
}

}  // namespace slipstream::test
