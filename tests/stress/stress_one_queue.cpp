// stress_one_queue: many threads (--threads, default 8) record and submit small compute
// command buffers to ONE queue under the application's lock, while two threads wait on their
// fences (vkWaitForFences with timeouts from 0 to infinite, one fence or several, all or any;
// vkGetFenceStatus), a third waits on the timeline values some of them signal
// (vkWaitSemaphores, vkGetSemaphoreCounterValue), and a fourth signals from the host the gates
// others wait on (vkSignalSemaphore). Fences and command buffers are reset and reused (each
// thread's own pool). Every wait that says done is checked against the work's marker, and the
// data against a CPU reference at the end (traffic.h).
#include "stress_run.h"
#include "traffic.h"

int main(int argc, char** argv) {
    stress::Options options;
    options.threads = 8;
    options.extras = {{"gates", 1, "1: some submissions wait on timelines the host signals"}};
    return stress::run_program(argc, argv, "stress_one_queue", "one_queue", options,
                               [](const stress::Options& o, stress::Progress& progress) {
        vkapp::ContextOptions co;
        co.timeline_semaphores = true;
        vkapp::Context ctx = vkapp::create_context("stress_one_queue", co);
        std::vector<std::unique_ptr<stress::AppQueue>> storage;
        std::vector<stress::AppQueue*> queues = stress::app_queues(ctx, storage);
        stress::TrafficConfig c;
        c.submitters = o.threads;
        c.fence_waiters = 2;
        c.fence_every = 4;
        c.timelines = true;
        c.gates = o.extra("gates") != 0;
        c.submissions = o.submissions;
        c.stop_at_s = o.seconds > 0 ? stress::elapsed_s() + o.seconds : 0;
        const stress::TrafficResult r = stress::run_traffic(ctx, queues, c, progress);
        vkapp::destroy_context(ctx);
        return stress::outcome_of(r, progress);
    });
}
