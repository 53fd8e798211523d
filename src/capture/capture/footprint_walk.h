// footprint_of: the footprint (capture_footprint.h) of a finished capture, from its records and
// what the device's ResourceRegistry knows of the objects they name. Computed once, at
// vkEndCommandBuffer, so that a batch's replay only compares footprints.
//
// What counts: the descriptor sets it binds (every descriptor in them: a superset of what its
// shaders use), its push descriptors, copy / fill / update / clear sources and destinations
// (a buffer-image copy takes the whole buffer), indirect dispatch parameters, image layout
// transitions in its barriers (they write the image). Unknown: a pipeline other than a compute
// pipeline whose shader reaches only descriptors (PhysicalStorageBufferAddresses), descriptor
// buffers, queue-family transfers, and every command outside compute and transfer work
// (events, queries, timestamps: anything not named here).
#pragma once

#include "capture/capture_footprint.h"
#include "capture/command_capture.h"
#include "capture/resource_registry.h"

namespace slipstream::capture {

// `begun_epoch`: the registry's update epoch when the command buffer began (a set updated
// since may have changed after it was bound). `trust`: test-only (VK_SLIPSTREAM_ELIDE_PROOF=
// trust-unknown), hidden sets and address-reaching pipelines taken at face value.
// Into `out` (its memory reused: vkEndCommandBuffer allocates nothing once a command buffer's
// footprint has had room for its ranges).
void footprint_of(const CommandCapture& capture, const ResourceRegistry& registry, uint64_t begun_epoch, bool trust,
                  Footprint& out);
inline Footprint footprint_of(const CommandCapture& capture, const ResourceRegistry& registry, uint64_t begun_epoch,
                              bool trust) {
    Footprint f;
    footprint_of(capture, registry, begun_epoch, trust, f);
    return f;
}

}  // namespace slipstream::capture
