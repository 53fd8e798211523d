// Barrier elision between fused captures (VK_SLIPSTREAM_ELIDE_BARRIERS): the fuse barrier in
// front of a capture (batch_recorder.cpp) is left out where its footprint provably cannot meet
// the footprint of any capture since the last barrier that ordered everything before it.
//
// The fuse barrier orders a capture after ALL earlier compute and transfer work, not only its
// neighbour: with A, B, C fused and the barrier before B left out, the one before C also
// stands between A and C. So a capture is compared against the union of every capture since
// the last such barrier recorded (ours, or an application barrier at a capture's start that
// holds ours), and the union restarts there. Only read-read overlap is allowed; an unknown
// footprint (capture_footprint.h) conflicts with everything. The first capture of a batch
// keeps its barrier: the work before the batch on the queue is not known here.
#pragma once

#include "capture/capture_footprint.h"

namespace slipstream::capture {

class BarrierElision {
public:
    // Bounded comparison cost: a union that grows past this many ranges ends with a barrier.
    static constexpr size_t kMaxUnionRanges = 256;

    // A new batch: nothing known before it.
    void begin_batch() {
        since_barrier_.set_unknown();
        batch_start_ = true;
    }
    // Whether the fuse barrier in front of a capture of `footprint` may be left out. Either
    // way it then counts as replayed: when false, the caller records the barrier, and the
    // union restarts from this capture. A capture that dispatches indirectly (`indirect`)
    // keeps its barrier, the one that reaches DRAW_INDIRECT: the barriers of ours before it did
    // not order earlier writes before indirect parameter reads, so no union would do.
    bool may_elide(const Footprint& footprint, bool indirect = false);
    // The capture opens with a barrier of its own that holds the fuse barrier: it orders the
    // capture after everything before it, so the union restarts from it.
    void ordered(const Footprint& footprint) { restart(footprint); }
    // Test-only (VK_SLIPSTREAM_ELIDE_PROOF=off): every capture but a batch's first, unproven.
    bool may_elide_blindly() {
        const bool first = batch_start_;
        batch_start_ = false;
        return !first;
    }

private:
    void restart(const Footprint& footprint) {
        since_barrier_.clear();
        since_barrier_.add(footprint);
        batch_start_ = false;
    }
    Footprint since_barrier_ = Footprint::make_unknown();
    bool batch_start_ = true;
};

}  // namespace slipstream::capture
