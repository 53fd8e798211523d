// The capture of one command buffer: a compact deep copy of every command recorded since
// vkBeginCommandBuffer, kept while every command is one Slipstream can replay (the generated
// allow-list in tools/gen/gen_capture.py), so that fusion can later replay it into a
// command buffer of its own.
//
// Layout: one CaptureArena per command buffer holds everything; each command is a record
// (a CaptureRecord header, then the command's arguments with their pointers aimed at deep
// copies in the same arena), and the records form a singly linked list in recording order.
// The first command that cannot be captured, or a copy that fails (an sType Slipstream does
// not know, the arena's limit), stops the capture: the memory is given back and only the
// reason is kept (FUSION.md rule 6: deep-copy completely or don't capture).
//
// Handles are recorded as they are (FUSION.md rule 5): pipeline layouts, set layouts and
// update templates named by a capture must stay valid until it is replayed, which fusion has
// to ensure (reference them, or replay before the application destroys them).
//
// Written only by the thread recording the command buffer (command buffers are externally
// synchronized), read at submission.
#pragma once

#include "capture/capture_arena.h"
#include "capture/capture_footprint.h"
#include "command_table.h"

#include <vulkan/vk_layer.h>
#include <vulkan/vk_layer_dispatch_table.h>

#include <atomic>
#include <new>

namespace slipstream::capture {

struct CaptureRecord {
    CommandId id{};
    CaptureRecord* next = nullptr;
};

enum class StopReason : uint8_t {
    None,              // still capturable
    NotReplayable,     // a command outside the allow-list (graphics, indirection, ...)
    UnknownStructure,  // an sType (or descriptor type) Slipstream cannot deep-copy
    TooLarge,          // the arena's limit (or the heap) ran out
    BatchSized,        // more operations than a batch holds (VK_SLIPSTREAM_BATCH_MAX)
};
const char* stop_reason_name(StopReason reason);

class CommandCapture {
public:
    explicit CommandCapture(size_t arena_limit = CaptureArena::kDefaultLimit) : arena_(arena_limit) {}

    // Starts over (vkBeginCommandBuffer): records the usage flags and, for a secondary
    // command buffer, its inheritance info, deep.
    void begin(VkCommandBufferLevel level, const VkCommandBufferBeginInfo* info);
    // vkEndCommandBuffer returned `result`; a failed end leaves nothing to replay.
    void end(VkResult result);
    // vkResetCommandBuffer / vkResetCommandPool (release_memory: their RELEASE_RESOURCES bit).
    void reset(bool release_memory);

    bool capturable() const { return stop_ == StopReason::None; }
    StopReason stop_reason() const { return stop_; }
    // The first command that could not be captured ("" while capturable).
    const char* stopped_at() const { return stopped_at_; }
    // Stops the capture at a command that cannot be replayed. Only the first stop counts.
    void stop(CommandId id) { stop(kCommandInfo[int(id)].name, StopReason::NotReplayable); }
    // A deep copy of command `id` failed: why, the arena knows.
    void fail(CommandId id) {
        stop(kCommandInfo[int(id)].name, arena_.exhausted() ? StopReason::TooLarge : StopReason::UnknownStructure);
    }
    void stop(const char* where, StopReason reason);
    // Called once, before the first stop gives the records back (a lazily recorded command
    // buffer then records them natively); cleared by begin and reset.
    using StopHook = void (*)(void* context, const CommandCapture& capture);
    void on_stop(StopHook hook, void* context) {
        stop_hook_ = hook;
        stop_context_ = context;
    }

    bool begun() const { return begun_; }
    bool ended() const { return ended_; }
    VkCommandBufferLevel level() const { return level_; }
    VkCommandBufferUsageFlags usage() const { return usage_; }
    const VkCommandBufferBeginInfo* begin_info() const { return begin_info_; }          // deep copy
    const VkCommandBufferInheritanceInfo* inheritance() const { return inheritance_; }  // secondaries

    const CaptureRecord* records() const { return head_; }  // in recording order, via ->next
    uint32_t size() const { return count_; }
    const CaptureArena& arena() const { return arena_; }

    // Records every captured command into `cb` through `dispatch`, in order.
    void replay(const VkLayerDispatchTable& dispatch, VkCommandBuffer cb) const;

    // --- for the generated capture functions ---
    CaptureArena& arena() { return arena_; }
    // A value-initialized record of type R in the arena, or null when capture has stopped
    // (or stops now, for want of memory).
    template <typename R>
    R* new_record(CommandId id) {
        if (!capturable()) return nullptr;
        void* memory = arena_.allocate(sizeof(R), alignof(R));
        if (!memory) {
            fail(id);
            return nullptr;
        }
        R* record = new (memory) R();
        record->id = id;
        return record;
    }
    void append(CaptureRecord* record) {
        if (tail_) tail_->next = record;
        else head_ = record;
        tail_ = record;
        ++count_;
    }

    // With barrier elision: the memory the captured commands may touch (footprint_walk.h),
    // computed the first time a batch of more than one command buffer needs it
    // (capture::footprint_for). footprint_state: 0 not computed, 1 being computed, 2 ready
    // (footprint then stays as it is until begin or reset, which no batch can overlap).
    Footprint footprint = Footprint::make_unknown();
    std::atomic<uint8_t> footprint_state{0};

private:
    void clear(bool release_memory);

    CaptureArena arena_;
    StopHook stop_hook_ = nullptr;
    void* stop_context_ = nullptr;
    CaptureRecord* head_ = nullptr;
    CaptureRecord* tail_ = nullptr;
    uint32_t count_ = 0;
    StopReason stop_ = StopReason::None;
    const char* stopped_at_ = "";
    bool begun_ = false;
    bool ended_ = false;
    VkCommandBufferLevel level_ = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    VkCommandBufferUsageFlags usage_ = 0;
    VkCommandBufferBeginInfo* begin_info_ = nullptr;         // in arena_
    VkCommandBufferInheritanceInfo* inheritance_ = nullptr;  // in arena_
};

}  // namespace slipstream::capture
