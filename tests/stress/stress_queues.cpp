// stress_queues: every queue of every queue family with compute (up to --queues per family;
// the H200 has 16 in family 0 and 8 in a compute-only family, lavapipe one in all), with
// submitting threads spread over them (--threads, default two per queue, 8 to 64; each queue
// under its own lock), fence waiters, timeline waiters and host signals as in stress_one_queue,
// and relays (--relays, default 2, of --stages stages) that hand a buffer from queue to queue
// and thread to thread through a timeline semaphore (traffic.h). With one queue it says so and
// runs the same work on it.
#include "stress_run.h"
#include "traffic.h"

#include <algorithm>
#include <cstdio>
#include <set>

int main(int argc, char** argv) {
    stress::Options options;
    options.threads = 0;  // two per queue, at least 8, at most 64
    options.extras = {{"queues", 16, "queues per family at most"},
                      {"relays", 2, "cross-queue relays (two threads each)"},
                      {"stages", 200, "stages per relay"},
                      {"gates", 1, "1: some submissions wait on timelines the host signals"},
                      {"families", 0, "0: every family with compute; 1: the first only"}};
    return stress::run_program(argc, argv, "stress_queues", "queues", options,
                               [](const stress::Options& o, stress::Progress& progress) {
        vkapp::ContextOptions co;
        co.timeline_semaphores = true;
        co.every_compute_family = o.extra("families") == 0;
        co.queue_count = uint32_t(o.extra("queues"));
        vkapp::Context ctx = vkapp::create_context("stress_queues", co);
        std::vector<std::unique_ptr<stress::AppQueue>> storage;
        std::vector<stress::AppQueue*> queues = stress::app_queues(ctx, storage);
        const std::set<uint32_t> families(ctx.queue_families.begin(), ctx.queue_families.end());
        if (queues.size() == 1)
            std::printf("stress_queues: the device has one queue with compute: all threads and relay stages share it\n");
        else
            std::printf("stress_queues: %zu queues in %zu families\n", queues.size(), families.size());
        stress::TrafficConfig c;
        c.submitters = o.threads ? o.threads : uint32_t(std::clamp<size_t>(2 * queues.size(), 8, 64));
        c.fence_waiters = 2;
        c.fence_every = 4;
        c.timelines = true;
        c.gates = o.extra("gates") != 0;
        c.relays = uint32_t(o.extra("relays"));
        c.relay_stages = uint32_t(o.extra("stages"));
        c.submissions = o.submissions;
        c.stop_at_s = o.seconds > 0 ? stress::elapsed_s() + o.seconds : 0;
        const stress::TrafficResult r = stress::run_traffic(ctx, queues, c, progress);
        vkapp::destroy_context(ctx);
        stress::CaseOutcome out = stress::outcome_of(r, progress);
        if (out.result.passed)
            out.result.detail =
                "queues: " + std::to_string(queues.size()) + ", families: " + std::to_string(families.size());
        return out;
    });
}
