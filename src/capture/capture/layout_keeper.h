// Keeps pipeline layouts, descriptor set layouts and descriptor update templates alive while
// a capture may still be replayed with them (FUSION.md rule 5).
//
// A lazily recorded command buffer exists only as its capture: the driver never saw its
// commands, so fusion must replay them at submission, maybe long after recording; and any
// fused capture is replayed when its batch goes, after the submission. Destroying
// a pipeline layout (or a set layout, or a template) once the commands naming it are recorded
// is legal; replaying those commands after it is gone is not. So a destroy is put off while a
// capture begun before it is alive (not yet reset, re-begun or freed), and done when the
// last such capture goes. Captures are counted per epoch (the number of destroys before they
// were begun): a destroy at epoch k waits for every live capture of epoch <= k.
//
// Valid applications reset or free a command buffer only once its work completed, which they
// learn through a wait that flushes fusion's batches, so when the last capture goes no batch
// still being recorded can name the object either.
#pragma once

#include <vulkan/vulkan.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <utility>
#include <vector>

namespace slipstream::capture {

class LayoutKeeper {
public:
    enum class Kind : uint8_t { PipelineLayout, SetLayout, UpdateTemplate, UpdateTemplateKHR };
    struct Destroyers {
        PFN_vkDestroyPipelineLayout pipeline_layout = nullptr;
        PFN_vkDestroyDescriptorSetLayout set_layout = nullptr;
        PFN_vkDestroyDescriptorUpdateTemplate update_template = nullptr;
        PFN_vkDestroyDescriptorUpdateTemplateKHR update_template_khr = nullptr;
    };

    // A capture begins: returns its epoch, counted live until release(epoch).
    uint64_t hold();
    void release(uint64_t epoch);
    // The epoch now (destroys so far): what a capture begun now would get.
    uint64_t epoch() const { return epoch_.load(std::memory_order_acquire); }

    // The application destroys `handle`: destroyed now, or once the live captures that may
    // name it are gone. `allocator` is copied (the application's callbacks must outlive the
    // object, as for any destroy).
    void destroy(VkDevice device, const Destroyers& with, Kind kind, uint64_t handle,
                 const VkAllocationCallbacks* allocator);
    // vkDestroyDevice: everything still kept goes now.
    void destroy_all();
    // Objects whose destroy is put off (statistics, tests).
    size_t kept() const;

private:
    struct Kept {
        Kind kind;
        uint64_t handle;
        uint64_t epoch;  // destroyed at this epoch: waits for live captures of epoch <= it
        bool has_allocator;
        VkAllocationCallbacks allocator;
    };
    static void destroy_now(VkDevice device, const Destroyers& with, const Kept& k);
    // The kept objects no live capture can name any more, taken out of kept_ (mutex_ held).
    std::vector<Kept> take_free_locked();

    mutable std::mutex mutex_;
    std::atomic<uint64_t> epoch_{0};
    // Epoch -> live captures begun in it, oldest first. Epochs only grow, so a hold adds at the
    // back: a vector, not a map, so that a command buffer's begin and reset allocate nothing.
    std::vector<std::pair<uint64_t, uint32_t>> live_;
    std::vector<Kept> kept_;
    VkDevice device_ = VK_NULL_HANDLE;
    Destroyers with_{};
};

}  // namespace slipstream::capture
