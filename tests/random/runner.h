// random_program's runner: lowers a Program (actions.h) to Vulkan calls, with the
// synchronization its hazard model (hazards.h) says each action needs, and digests everything
// the host reads.
#pragma once

#include "actions.h"

#include <cstdint>
#include <set>
#include <string>

namespace rnd {

struct RunOptions {
    uint64_t seed = 1;
    std::set<uint32_t> drop;  // action indices left out
    bool print = false;       // one line per lowered step on stdout
    std::string dump;         // raw bytes of every host read, in order
    uint32_t queues = 2;      // at most this many queues (the device may have fewer)
    // With fewer queues on the device than `queues`: the others share its last queue.
    bool share_queues = false;
    // A resubmit action submits its command buffer 1-5 times, waiting for it each time (a
    // runtime that waits for every operation and repeats the same one: armed launches).
    bool repeat_resubmits = false;
};

// Runs the program; prints `checksum: <16 hex>` and returns the exit status (0 fine, 1
// validation messages, 3 a wait that timed out).
int run(const Program& program, const RunOptions& options);

// Runs the programs of `count` seeds from `first_seed` (`ops` actions each) one after another on
// one device, as random_test.py's batches do: a GPU driver takes ~0.2 s to create a device,
// far longer than a program runs. Prints `batch: seed N begins` on stderr before each program
// (the validation messages that follow, up to the next such line, are its own) and
// `batch: seed N checksum <16 hex> messages M` on stdout after it (M: validation messages during
// it); returns as run() does; the first program that fails ends the batch.
int run_batch(uint64_t first_seed, uint32_t count, uint32_t ops, const RunOptions& options);

}  // namespace rnd
