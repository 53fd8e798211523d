#include "capture/barrier_elision.h"

namespace slipstream::capture {

bool BarrierElision::may_elide(const Footprint& footprint, bool indirect) {
    if (indirect || since_barrier_.conflicts_with(footprint) ||
        since_barrier_.ranges().size() + footprint.ranges().size() > kMaxUnionRanges) {
        restart(footprint);
        return false;
    }
    since_barrier_.add(footprint);
    batch_start_ = false;
    return true;
}

}  // namespace slipstream::capture
