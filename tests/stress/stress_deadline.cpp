// stress_deadline: the deadline flusher racing the waits. Submitting threads (--threads,
// default 4) put a fence on one submission in eight only; the others are watched through their
// markers in memory alone (no Vulkan call: with VK_SLIPSTREAM_MAX_DEFER_US small and
// VK_SLIPSTREAM_BATCH_MAX large, what a layer holds back reaches the GPU only by its deadline
// flush), and some of those the submitting thread waits for that way before it goes on, now and
// then while every other thread keeps from Vulkan calls that could flush (traffic.h). A
// fence waiter waits on the fenced ones from its own thread, and another thread takes a
// queue's lock and calls vkQueueWaitIdle, or all queues' locks and vkDeviceWaitIdle, and then
// checks that everything submitted before has run (traffic.h).
#include "stress_run.h"
#include "traffic.h"

int main(int argc, char** argv) {
    stress::Options options;
    options.threads = 4;
    return stress::run_program(argc, argv, "stress_deadline", "deadline", options,
                               [](const stress::Options& o, stress::Progress& progress) {
        vkapp::ContextOptions co;
        co.timeline_semaphores = true;
        vkapp::Context ctx = vkapp::create_context("stress_deadline", co);
        std::vector<std::unique_ptr<stress::AppQueue>> storage;
        std::vector<stress::AppQueue*> queues = stress::app_queues(ctx, storage);
        stress::TrafficConfig c;
        c.submitters = o.threads;
        c.fence_waiters = 1;
        c.fence_every = 8;
        c.poll_memory = true;
        c.quiet_probes = true;
        c.idle_waits = true;
        c.submissions = o.submissions;
        c.stop_at_s = o.seconds > 0 ? stress::elapsed_s() + o.seconds : 0;
        const stress::TrafficResult r = stress::run_traffic(ctx, queues, c, progress);
        vkapp::destroy_context(ctx);
        return stress::outcome_of(r, progress);
    });
}
