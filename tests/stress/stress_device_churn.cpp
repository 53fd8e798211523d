// stress_device_churn: one thread creates and destroys instances and devices in a loop
// (--rounds, default 6: each round an instance, a device, one checked step with a fence and
// vkQueueWaitIdle, everything destroyed) while other threads keep working on their own
// long-lived device (--threads submitters, default 2, and a fence waiter: traffic.h) until the
// churn is done and their --submissions are made. The checksum covers the churn's results (the
// long-lived device's work depends on how long the churn took; the CPU reference checks it).
#include "stress_run.h"
#include "traffic.h"

#include <atomic>
#include <thread>

int main(int argc, char** argv) {
    stress::Options options;
    options.threads = 2;
    options.extras = {{"rounds", 6, "devices (and instances) created and destroyed"}};
    return stress::run_program(argc, argv, "stress_device_churn", "device_churn", options,
                               [](const stress::Options& o, stress::Progress& progress) {
        vkapp::ContextOptions co;
        co.timeline_semaphores = true;
        vkapp::Context ctx = vkapp::create_context("stress_device_churn", co);
        std::vector<std::unique_ptr<stress::AppQueue>> storage;
        std::vector<stress::AppQueue*> queues = stress::app_queues(ctx, storage);
        const uint64_t rounds = o.extra("rounds");
        std::string churn_problem;
        std::atomic<bool> churning{true};
        uint64_t checksum = vkapp::fnv1a(nullptr, 0);
        std::thread churn([&] {
            for (uint64_t i = 0; i < rounds && churn_problem.empty(); ++i) {
                vkapp::ContextOptions small;
                small.timeline_semaphores = i % 2 == 0;  // with and without what fusion needs
                vkapp::Context round = vkapp::create_context("stress_device_churn round", small);
                if (stress::single_step(round, 2000 + i, &churn_problem)) checksum = vkapp::fnv1a(&i, sizeof i, checksum);
                progress.submissions.fetch_add(1);
                progress.waits.fetch_add(1);
                vkapp::destroy_context(round);
            }
            churning.store(false);
        });
        stress::TrafficConfig c;
        c.submitters = o.threads;
        c.fence_waiters = 1;
        c.fence_every = 4;
        c.submissions = o.submissions;
        c.stop_at_s = o.seconds > 0 ? stress::elapsed_s() + o.seconds : 0;
        c.while_running = &churning;
        stress::TrafficResult r = stress::run_traffic(ctx, queues, c, progress);
        churn.join();
        vkapp::destroy_context(ctx);
        r.submissions += rounds;
        if (!churn_problem.empty()) {
            r.ok = false;
            r.wrong_result = true;
            if (r.detail.empty()) r.detail = churn_problem;
        }
        stress::CaseOutcome out = stress::outcome_of(r, progress);
        out.result.threads += 1;
        out.checksum = checksum;
        return out;
    });
}
