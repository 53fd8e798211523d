// random_program's program from a seed: the buffers it starts with and a list of actions.
// Pure (no Vulkan). An action names only what it does (a dispatch, a copy, a host read...) and
// carries a seed of its own from which the runner draws every detail (buffers, ranges, which
// barrier, which wait) when it lowers the action. The synchronization an action needs is not
// an action: the runner derives it from its hazard model (hazards.h). So any subset of the
// actions is a valid program again, with every remaining action making the same choices:
// that is what --ops K (the first K actions) and --drop i,j (leave actions out) rely on.
#pragma once

#include "rng.h"

#include <cstdint>
#include <string>
#include <vector>

namespace rnd {

using Rng = vkapp::Rng;

enum class Kind {
    dispatch,   // a compute shader over two buffers (mix, accum or atomic)
    copy,       // vkCmdCopyBuffer, one to three regions
    fill,       // vkCmdFillBuffer
    update,     // vkCmdUpdateBuffer
    barrier,    // a barrier nothing needs (either version, ALL_COMMANDS or named stages)
    timestamp,  // reset two queries, timestamp, full barrier, timestamp
    end_cb,     // end the open command buffer of the current queue
    submit,     // submit what the current queue has recorded
    queue,      // switch the current queue (with two)
    host_read,  // the host reads a host-visible buffer
    host_write, // the host writes a host-visible buffer
    read_back,  // copy a buffer to fresh host-visible memory, then the host reads that
    wait,       // a host wait nothing needs (fence, poll, timeline, queue or device idle)
    realloc,    // free a buffer and allocate it again (maybe another size)
    resubmit,   // submit again a reusable command buffer that completed
};

const char* kind_name(Kind k);

struct Action {
    Kind kind;
    uint64_t seed;
};

struct SlotSpec {
    bool host_visible;  // else device-local
    bool cached;        // host-visible: a cached type where there is one (maybe non-coherent)
    uint32_t words;
};

struct Program {
    std::vector<SlotSpec> slots;
    std::vector<Action> actions;  // the random ones; the runner appends the final read-out
};

// The program of `seed`: its buffers, then `ops` actions. The first K actions of a seed are
// the same whatever `ops` is (K <= ops).
Program generate(uint64_t seed, uint32_t ops);

// Sizes a buffer may have, in 32-bit words.
uint32_t random_words(Rng& rng);

}  // namespace rnd
