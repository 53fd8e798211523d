// The work of a capture as an armed replay holds it (submit/armed_replay.h, docs/armed-launch.md):
// which captures can be armed, whether two captures are the same work, and the replay whose
// dispatches can be skipped.
//
// A replay is armed before anyone knows whether the next submission will be the same work, so
// every command in it must be one that can run without effect when it is not: binds (pipeline,
// descriptor sets, push descriptors), push constants and barriers change no memory, and each vkCmdDispatch becomes a
// vkCmdDispatchIndirect whose group counts the host writes just before it releases the replay
// (the captured counts) or skips it (zeros). Any other command (a copy, a fill, an indirect
// dispatch of the application's, a query, an event, a pNext on a barrier) and the capture is
// not armable.
//
// Two captures are the same work when their armable commands are equal, argument by argument
// and element by element of their arrays (the handles compared as handles): `key` holds them
// in that order, so equality is one comparison of bytes, whatever arena each capture lives in.
#pragma once

#include "capture/command_capture.h"

#include <vulkan/vk_layer.h>
#include <vulkan/vk_layer_dispatch_table.h>

#include <cstdint>
#include <vector>

namespace slipstream::capture {

// One dispatch's group counts, as vkCmdDispatchIndirect reads them.
struct ArmedDispatch {
    uint32_t x = 0, y = 0, z = 0;
};

class ArmableWork {
public:
    // At most this many dispatches in one armed replay: its indirect arguments' room.
    static constexpr uint32_t kMaxDispatches = 64;

    // Reads `capture`; false (and empty) when one of its commands cannot be armed, or it holds
    // no dispatch, or more than kMaxDispatches.
    bool read(const CommandCapture& capture);
    void clear();
    bool empty() const { return dispatches_.empty(); }
    bool same_as(const ArmableWork& other) const { return key_ == other.key_; }
    const std::vector<ArmedDispatch>& dispatches() const { return dispatches_; }

private:
    template <typename T>
    void put(const T& value);
    template <typename T>
    void put_array(const T* values, uint32_t count);
    bool read_record(const CaptureRecord& r);
    bool read_barrier2(const VkDependencyInfo& info);
    bool read_writes(const VkWriteDescriptorSet* writes, uint32_t count);

    std::vector<unsigned char> key_;
    std::vector<ArmedDispatch> dispatches_;
};

// Records `capture` (armable) into `cb` through `d`: each vkCmdDispatch, the i-th, as
// vkCmdDispatchIndirect from `args` at `offset` + i * sizeof(VkDispatchIndirectCommand); every
// other command as captured. The caller records, before it, what makes the host's writes of
// the arguments visible to the indirect read.
void record_armed(const CommandCapture& capture, const VkLayerDispatchTable& d, VkCommandBuffer cb, VkBuffer args,
                  VkDeviceSize offset);

}  // namespace slipstream::capture
