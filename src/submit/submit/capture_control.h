// When a command buffer is captured: VK_SLIPSTREAM_FUSE on, and a device that has not handed
// the application a vkCmd* Slipstream does not know. The layer's vkBeginCommandBuffer,
// vkEndCommandBuffer and vkGetDeviceProcAddr call these.
#pragma once

#include "capture/command_capture.h"
#include "state/object_state.h"

namespace slipstream::capture {

// vkBeginCommandBuffer: starts a capture (creating it on first use) or drops the one the
// command buffer had, if the device can no longer fuse. Returns true when the command buffer
// is recorded lazily (VK_SLIPSTREAM_LAZY_RECORD): the driver is not told of it now; the first
// command that cannot be captured records the capture so far natively (from its begin info
// on), and from there on the command buffer is recorded as usual.
//
// What laziness saves: on the H200 a naive runtime's small command buffer costs ~10 us of CPU
// (slipstream-overhead's small_cb: begin 2.8, barrier+binds+dispatch 2.3, end 0.5, submit
// 3.3); fusion replays it into its batch at submission anyway, so recording it into the
// driver first paid for the same work twice.
bool begin_capture(CommandBufferState& cb, const VkCommandBufferBeginInfo* info);
// A lazily recorded command buffer goes to a queue that does not fuse (fusion could not start
// on it): the driver records it now, from its capture. (The application does not expect its
// pool to be used here; this happens only where a queue's fusion failed for want of memory,
// or for misuse: see submit/fusion.cpp.) A command buffer not yet ended is left recording.
void record_natively(CommandBufferState& cb);
// Every recorded command, while the command buffer has a capture: a command buffer with more
// operations than a batch holds (VK_SLIPSTREAM_BATCH_MAX) is a batch already, whose fusion
// saves no submission, while capturing and replaying it costs CPU time on each of its commands
// (an ML runtime's 100-dispatch command buffers: 13% per command buffer on the H200). Its
// capture stops before the operation past the limit: from there on the driver records it (the
// capture so far recorded natively first, if it was lazy), and it is submitted as it is.
inline void stop_if_batch_sized(CommandBufferState& cb) {
    if (cb.operations() > cb.device->settings.batch_max && cb.capture->capturable())
        cb.capture->stop("(a batch already)", StopReason::BatchSized);
}
// vkEndCommandBuffer returned `result`: counts the command buffer as captured or not.
void end_capture(CommandBufferState& cb, VkResult result);
// With barrier elision: the command buffer's footprint (capture/footprint_walk.h), computed at
// its first replay into a batch that holds more than one command buffer (none else compares
// footprints) rather than at vkEndCommandBuffer: runtimes that wait for every submission then
// pay nothing for it (~0.1 us per vkEndCommandBuffer of one dispatch on lavapipe, more with
// more commands). Computing it later sees the same descriptor sets: a set that a recorded
// command buffer binds cannot change before that command buffer's work is done without
// invalidating it, except update-after-bind sets, which are unknown either way, as are sets
// updated after the command buffer began (its descriptor_epoch). Into `scratch` only where
// another thread computes the command buffer's own copy at that moment.
const Footprint& footprint_for(const CommandBufferState& cb, Footprint& scratch);
// vkGetDeviceProcAddr handed the application `name`, a vkCmd* that Slipstream does not
// intercept: the device stops fusing (one info line and one count per distinct name).
void note_unknown_command(DeviceState& device, const char* name);

}  // namespace slipstream::capture
