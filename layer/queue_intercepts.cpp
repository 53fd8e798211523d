// Every VkQueue function that layer/ does not hook by hand (labels, checkpoints, performance
// configuration): generated wrappers (tools/gen/gen_queue_intercepts.py) that hold the queue's
// fusion lock, its open batch flushed, so the flusher thread and the application never use
// one queue at once (FUSION.md rule 4).
#include "hooks.h"
#include "state/object_state.h"
#include "submit/fusion.h"

#include <vector>

namespace slipstream::hooks {

#include "queue_intercepts.inl"

const NamedProc* queue_intercepts(size_t* count) {
    static const std::vector<NamedProc> all = [] {
        std::vector<NamedProc> v;
        for (const auto* e = kGeneratedQueueIntercepts; e->name; ++e) v.push_back({e->name, e->fn});
        return v;
    }();
    *count = all.size();
    return all.data();
}

}  // namespace slipstream::hooks
