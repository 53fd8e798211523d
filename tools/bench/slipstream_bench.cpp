// slipstream-bench: a real Vulkan compute program that does the same work in two styles, so the
// cost of "one operation per submission" can be measured with and without the Slipstream layer
// and against what a careful runtime author writes by hand. The rows are those of
// docs/BACKGROUND.md, so the numbers compare with the ones that motivated the project.
//
// --style naive: what an unmodified application does.
//   * One command buffer and one vkQueueSubmit per operation (kernel launch, upload, copy).
//   * An ALL_COMMANDS -> ALL_COMMANDS memory barrier at the start of every command buffer.
//   * A blocking wait whenever it needs results: vkWaitForFences (--wait fence, the default) or
//     vkQueueWaitIdle (--wait queue-idle).
//   * Staging memory (upload and readback) in the first HOST_VISIBLE|HOST_COHERENT memory type
//     that is also DEVICE_LOCAL when there is one, else the first HOST_VISIBLE|HOST_COHERENT type.
//   It is not a strawman: pipelines, pipeline layouts, descriptor sets and command buffers are
//   created once and reused; uploads do not wait (each has its own staging region), so only
//   operations that need a result block. Public code that behaves like this:
//   * Halide's Vulkan runtime (src/runtime/vulkan.cpp) before the fixes BACKGROUND.md describes:
//     each kernel launch (halide_vulkan_run) and each buffer copy records its own command buffer,
//     submits it alone and then calls vkQueueWaitIdle ("isn't the most efficient, but it's what
//     we do in Metal etc."); its readback staging preferred DEVICE_LOCAL host-visible memory.
//     (That runtime even waited after every launch; this naive style waits only when it needs
//     results, which makes the baseline faster, not slower.)
//   * Kompute: Sequence::eval() records, submits and blocks on a fence (vkWaitForFences) for each
//     evaluated sequence; the common "mgr.sequence()->record<Op>(...)->eval()" is one op per
//     submission and wait.
//   * Tutorial-style compute code such as "vulkan_minimal_compute" (one command buffer, submit,
//     vkWaitForFences, read HOST_VISIBLE|HOST_COHERENT memory) and the many "one-shot command
//     buffer" helpers that submit and vkQueueWaitIdle.
//   * Runtimes that use one staging choice for both directions, e.g. VMA's
//     VMA_MEMORY_USAGE_CPU_TO_GPU (host-visible, DEVICE_LOCAL preferred) also for readback: on a
//     GPU with a host-visible VRAM window the host then reads uncached VRAM across the bus.
//
// --style tuned: what a careful runtime author writes by hand (the in-application fix).
//   * Operations are recorded into the command buffer currently being filled, at most 32
//     commands per command buffer; it is submitted when full or before anything waits.
//   * Each command is preceded by a COMPUTE|TRANSFER -> COMPUTE|TRANSFER barrier (the work is
//     only compute and transfer; host writes made before vkQueueSubmit are visible to it).
//   * Waits poll vkGetFenceStatus for up to 100 us before blocking in vkWaitForFences, both for
//     results and for a free command buffer; a sync with nothing in flight makes no call.
//   * Readback staging in HOST_VISIBLE|HOST_COHERENT|HOST_CACHED memory (falling back to
//     HOST_VISIBLE|HOST_COHERENT system memory, then any HOST_VISIBLE|HOST_COHERENT type).
//     Upload staging is chosen as in the naive style (the fix left uploads unchanged).
//   * Device buffers of the allocate+free row are sub-allocated from one pooled VkDeviceMemory.
//   --wait has no effect on the tuned style.
//
// Both styles put the same TRANSFER -> HOST barrier after a copy the host will read.
//
// The batched pattern: what ML runtimes do (ggml-vulkan submits its graph in chunks of up to
// 100 nodes; ncnn records a whole network's layers into one command buffer). It is the row
// `batched`'s own and does not depend on --style or --wait, so the report's "naive" and "layer"
// columns run it without and with the layer: the layer's cost on an application that already
// batches.
//   * 100 dispatches per command buffer, each with its pipeline, descriptor set and push
//     constants bound (one graph node each), recorded anew for every submission.
//   * A COMPUTE_SHADER -> COMPUTE_SHADER barrier (SHADER_WRITE -> SHADER_READ|SHADER_WRITE) in
//     front of every dispatch: each depends on the one before, and the first on the previous
//     command buffer (a fence wait makes no GPU write visible to later GPU reads).
//   * One vkQueueSubmit per command buffer with a fence, then one plain vkWaitForFences on it
//     (no spinning) and vkResetFences, before the next command buffer is recorded.
//
// Every row verifies its results after every repetition (warm-up included), outside the timed
// part unless the row's own work is the readback, and the program exits 1 when any check fails
// or the debug messenger reported a validation message.
#include "build_info.h"
#include "vk_app.h"

#include "bench_accum_spv.h"
#include "bench_add_spv.h"
#include "bench_matvec_spv.h"
#include "bench_step_spv.h"

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstring>
#include <ctime>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

extern char** environ;

#ifndef SLIPSTREAM_BENCH_COMMIT
#define SLIPSTREAM_BENCH_COMMIT "unknown"
#endif

namespace {

using Clock = std::chrono::steady_clock;
using vkapp::Context;

constexpr uint32_t kBatchLimit = 32;      // tuned: commands per command buffer
constexpr uint32_t kBatchedDispatches = 100;  // batched pattern: dispatches per command buffer
constexpr double kSpinMicros = 100.0;     // tuned: poll the fence this long before blocking
constexpr uint32_t kRingSize = 256;       // command buffers (each with a fence) reused in turn
constexpr uint32_t kLocalSize = 64;       // workgroup size of the three kernels
constexpr uint32_t kTinyWords = 256;      // the tiny kernel's buffer
constexpr VkDeviceSize k64KiB = 64 * 1024;
constexpr uint32_t k64KiBWords = 64 * 1024 / 4;

enum class Style { naive, tuned };
enum class WaitMode { fence, queue_idle };

// ---------------------------------------------------------------------------------------------
// The rows. `help` is printed by --help and says exactly what one sample measures per style.
struct RowInfo {
    const char* id;
    const char* title;
    const char* unit;
    const char* help;
};

const RowInfo kRows[] = {
    {"launch", "launch, back to back", "us",
     "Per-launch cost of N back-to-back launches of a tiny kernel (256 uints, v += c; each\n"
     "      launch depends on the one before), then one sync; time / N.\n"
     "      naive: N command buffers, N vkQueueSubmit, then one wait.\n"
     "      tuned: up to 32 launches per command buffer, then one spin-then-block wait.\n"
     "      GPU time: one dispatch of the kernel."},
    {"launch_timeline_info", "launch, empty timeline info", "us",
     "As launch, each naive submission chaining an empty VkTimelineSemaphoreSubmitInfo (no\n"
     "      semaphore in it), as one widely used ML runtime attaches to every submission.\n"
     "      tuned: as launch. GPU time: one dispatch of the kernel."},
    {"launch_timeline_chain", "launch, timeline-chained", "us",
     "As launch, the naive submissions ordered by a timeline semaphore as runtimes that\n"
     "      sequence kernels with one do: launch k waits for value k-1 and signals k; the\n"
     "      sync waits for the last value (vkWaitSemaphores) before the style's wait.\n"
     "      tuned: as launch. GPU time: one dispatch of the kernel."},
    {"launch_binary_chain", "launch, binary-chained", "us",
     "As launch, the naive submissions ordered by binary semaphores: launch k waits for the\n"
     "      semaphore launch k-1 signaled and signals the other of two.\n"
     "      tuned: as launch. GPU time: one dispatch of the kernel."},
    {"launch_sync", "launch + device sync", "us",
     "Cost of one tiny launch followed by waiting for it, repeated N times; time / N.\n"
     "      naive: submit, then vkWaitForFences or vkQueueWaitIdle.\n"
     "      tuned: submit, then spin on vkGetFenceStatus (<= 100 us) before blocking.\n"
     "      GPU time: one dispatch of the kernel."},
    {"launch_spin", "launch + app spin", "us",
     "As launch_sync, but the application waits by polling vkGetFenceStatus itself until the\n"
     "      fence signals (no vkWaitForFences, whatever --wait says): the latency floor of one\n"
     "      submit-then-wait round trip. naive: ALL_COMMANDS barrier, its own command buffer and\n"
     "      fence. tuned: COMPUTE|TRANSFER barrier. GPU time: one dispatch of the kernel."},
    {"launch_spin_bare", "launch + app spin, no barrier", "us",
     "As launch_spin with nothing but the dispatch (and its binds) in the command buffer, in\n"
     "      both styles (a raw client that records one dispatch per command buffer and waits\n"
     "      for each). GPU time: one dispatch of the kernel."},
    {"launch_sync_fresh_fence", "launch + sync with a fresh fence", "us",
     "Cost of one tiny launch (a compute barrier and the dispatch, recorded into one command\n"
     "      buffer each time) submitted with a fence and waited for with vkWaitForFences,\n"
     "      N times; time / N.\n"
     "      naive: per launch vkCreateFence, submit with it, wait, vkDestroyFence (compute\n"
     "      runtimes' fence per operation; some drivers charge ~0.5 ms a create + destroy).\n"
     "      tuned: one kept fence, vkResetFences after each wait.\n"
     "      GPU time: one dispatch of the kernel."},
    {"launch_sync_resubmit", "launch + device sync, same command buffer re-submitted", "us",
     "Cost of one tiny launch followed by waiting for it, N times; time / N. Every launch\n"
     "      submits the SAME command buffer (a compute barrier and the dispatch), recorded once\n"
     "      before timing without ONE_TIME_SUBMIT, with a kept fence (a latency loop repeating\n"
     "      its work: what armed launches, VK_SLIPSTREAM_ARM=on, are for).\n"
     "      naive: submit, vkWaitForFences (vkQueueWaitIdle with --wait queue-idle), vkResetFences.\n"
     "      tuned: submit, spin on vkGetFenceStatus (<= 100 us) before blocking, vkResetFences.\n"
     "      Each dispatch adds 1 and the buffer is zeroed only before the first: the check\n"
     "      counts every dispatch, warm-up included. GPU time: one dispatch of the kernel."},
    {"launch_sync_rerecord", "launch + device sync, re-recorded identically", "us",
     "As launch_sync_resubmit, but every launch first re-records the command buffer\n"
     "      identically (vkBeginCommandBuffer with ONE_TIME_SUBMIT, the same barrier and\n"
     "      dispatch, vkEndCommandBuffer): the same work, which a layer can only tell is the\n"
     "      same by comparing the commands. naive and tuned wait as in launch_sync_resubmit;\n"
     "      the same check. GPU time: one dispatch of the kernel."},
    {"barriers_16", "16 dispatches with barriers, one command buffer + sync", "us",
     "Per-dispatch cost of one command buffer of 16 dependent tiny dispatches with the style's\n"
     "      barrier in front of each, submitted and waited for, N times; time / (16 N).\n"
     "      naive: ALL_COMMANDS -> ALL_COMMANDS barriers, the style's blocking wait.\n"
     "      tuned: COMPUTE|TRANSFER barriers, spin-then-block wait.\n"
     "      GPU time: the 16 dispatches and their barriers."},
    {"idle_sync", "idle device sync", "us",
     "Cost of a device sync when nothing is in flight (after one launch + sync), N times; / N.\n"
     "      naive: vkWaitForFences on the last (signalled) fence, or vkQueueWaitIdle.\n"
     "      tuned: the runtime knows nothing is in flight and makes no call.\n"
     "      GPU time: none."},
    {"upload_64k", "upload 64 KiB", "us",
     "Per-upload cost of N host->device uploads of 64 KiB (memcpy into a staging region, then\n"
     "      vkCmdCopyBuffer into a device buffer), distinct data and regions, then one sync; / N.\n"
     "      naive: one command buffer + submit per upload. tuned: batched, 32 per command buffer.\n"
     "      GPU time: one 64 KiB staging->device copy."},
    {"upload_launch", "upload 64 KiB + launch", "us",
     "Per-iteration cost of N iterations of (upload 64 KiB into one device buffer, launch a\n"
     "      kernel that adds it into an accumulator), then one sync; / N.\n"
     "      naive: two command buffers + submits per iteration. tuned: batched (32 commands).\n"
     "      GPU time: one copy + barrier + dispatch."},
    {"alloc_free_64k", "allocate + free 64 KiB", "us",
     "Cost of creating and destroying a 64 KiB device buffer with its memory, N times; / N.\n"
     "      naive: vkCreateBuffer, vkAllocateMemory, vkBindBufferMemory, vkDestroyBuffer,\n"
     "      vkFreeMemory. tuned: vkCreateBuffer, bind into a slot of one pooled VkDeviceMemory,\n"
     "      vkDestroyBuffer (the memory stays in the pool). GPU time: none."},
    {"staging_per_op", "staging per operation", "us",
     "Per-operation cost of N uploads and N readbacks of 64 KiB, alternating (an upload into a\n"
     "      device buffer, then a readback of it), each submitted and waited for; time / 2N.\n"
     "      naive: per operation vkCreateBuffer, vkAllocateMemory of host-visible memory,\n"
     "      vkBindBufferMemory, vkMapMemory, memcpy, copy command, submit, the style's wait,\n"
     "      vkDestroyBuffer, vkFreeMemory (a fresh staging allocation per transfer).\n"
     "      tuned: the same with one upload and one readback staging buffer kept.\n"
     "      GPU time: one 64 KiB copy."},
    {"upload_48mb", "upload 48 MB", "ms",
     "Cost of one 48 MB (48,000,000 bytes; 4 MB with --quick) host->device upload: memcpy into\n"
     "      staging, copy command, submit, wait (the style's wait).\n"
     "      GPU time: the staging->device copy."},
    {"readback_48mb", "readback 48 MB", "ms",
     "Cost of one 48 MB (4 MB with --quick) device->host copy: copy command into readback\n"
     "      staging, submit, wait, memcpy into the application's host array.\n"
     "      naive: staging in the first host-visible type that is also DEVICE_LOCAL.\n"
     "      tuned: staging in HOST_CACHED|HOST_COHERENT memory.\n"
     "      GPU time: the device->staging copy."},
    {"seed_readback_48mb", "seed runtime: readback 48 MB", "ms",
     "The seed runtime's readback (BACKGROUND.md part 2): a block allocator learns the type from\n"
     "      a throwaway STORAGE|TRANSFER_DST buffer, allocates a block (>= 32 MiB) and binds a\n"
     "      region buffer of that usage into it, once; each repetition copies 48 MB (4 MB with\n"
     "      --quick) from a device buffer into the region, submits, waits (the style's wait),\n"
     "      maps the range, memcpys it out, unmaps.\n"
     "      naive: the block in the first host-visible type that is also DEVICE_LOCAL.\n"
     "      tuned: the block in HOST_CACHED|HOST_COHERENT memory. GPU time: the copy."},
    {"seed_readback_64k", "seed runtime: readback 64 KiB", "us",
     "As seed_readback_48mb with a 64 KiB request (the block is 32 MiB); per repetition."},
    {"ml_matvec", "ML: matvec, host-visible VRAM", "us",
     "An ML runtime's device buffers: a 4096x14336 f32 matrix (256x1024 with --quick), its\n"
     "      vector and result, STORAGE|TRANSFER_SRC|TRANSFER_DST, sub-allocated from one block.\n"
     "      Per kernel: 16 matrix-vector products (one workgroup per row, bound by the matrix's\n"
     "      memory bandwidth) recorded into ONE command buffer in both styles, one submit and\n"
     "      wait; time / 16. Results are read through HOST_CACHED staging (untimed).\n"
     "      naive: the block in the first host-visible type that is also DEVICE_LOCAL, weights\n"
     "      written through a mapping (as runtimes do with host-visible VRAM).\n"
     "      tuned: the block in DEVICE_LOCAL memory, weights uploaded through staging.\n"
     "      GPU time: one product."},
    {"pipeline", "pipeline: 100 kernels + readback", "us",
     "Cost of a chain of 100 small dependent kernels (16384 uints, ping-pong between two\n"
     "      buffers), then one 64 KiB readback into the application's host array.\n"
     "      naive: 101 command buffers + submits, one blocking wait, naive readback staging.\n"
     "      tuned: 4 command buffers (32 commands each), spin-then-block wait, cached staging.\n"
     "      GPU time: the 100 dispatches and the copy recorded in one command buffer with the\n"
     "      style's barriers (so it includes what each barrier costs on the GPU)."},
    {"seed_chain", "seed runtime: chain of 10 stages", "us",
     "The seed runtime's (Halide's Vulkan runtime's) pattern, per chain of 10 small dependent\n"
     "      kernels (4096 uints each): 11 region buffers created and bound inside one big device\n"
     "      block, each zero-filled when created, the descriptor sets updated, the kernels run,\n"
     "      the buffers destroyed at the start of the next chain; time per chain.\n"
     "      naive: a command pool and command buffer created for every operation (fill or\n"
     "      kernel), one vkQueueSubmit without a fence each, vkQueueWaitIdle after each\n"
     "      (whatever --wait says), the pool destroyed.\n"
     "      tuned: the 10 fills and 10 kernels in one command buffer, COMPUTE|TRANSFER\n"
     "      barriers, one spin-then-block wait. GPU time: the 10 kernels in one command buffer."},
    {"independent", "independent: small kernels, one per command buffer", "us",
     "Per-kernel cost of N = 64 (16 with --quick) small independent kernels, each adding to a\n"
     "      buffer of its own (256 uints, v += c; each its own VkDeviceMemory), then one sync;\n"
     "      time / N. Nothing orders them: a runtime that knows they are independent may run\n"
     "      them at once.\n"
     "      naive: N command buffers, no barriers, N vkQueueSubmit back to back, one wait.\n"
     "      tuned: one command buffer, a COMPUTE|TRANSFER barrier between every two dispatches\n"
     "      (a runtime that serializes every kernel by hand), one submit, one spin-then-block wait.\n"
     "      GPU time: the N dispatches in one command buffer with the style's barriers."},
    {"batched", "batched: 100 dispatches per command buffer + fence wait", "us",
     "Per-command-buffer cost of the batched pattern (ML runtimes; the same in every --style\n"
     "      and --wait): N = 32 times (4 with --quick), record 100 dependent launches of the tiny\n"
     "      kernel (256 uints, v += c) into one command buffer, a COMPUTE_SHADER ->\n"
     "      COMPUTE_SHADER barrier (SHADER_WRITE -> SHADER_READ|SHADER_WRITE) before each, then\n"
     "      one vkQueueSubmit with a fence, one plain vkWaitForFences, vkResetFences;\n"
     "      time / N (per command buffer of 100 dispatches, not per dispatch).\n"
     "      GPU time: the 100 dispatches and their barriers in one command buffer."},
};

const RowInfo* find_row(const std::string& id) {
    for (const RowInfo& r : kRows)
        if (id == r.id) return &r;
    return nullptr;
}

// ---------------------------------------------------------------------------------------------
struct Options {
    Style style = Style::naive;
    WaitMode wait = WaitMode::fence;
    std::vector<std::string> rows;  // empty: all
    int reps = 0;                   // 0: the row's default
    int warmup = -1;                // -1: the row's default
    bool quick = false;
    bool probe_device = false;      // --probe-device: say which device would run, then exit
    double max_row_seconds = 60.0;  // stop adding repetitions to a row after this (>= 3 kept)
    std::string json_path;
};

void print_help() {
    std::printf(
        "usage: slipstream-bench [options]\n"
        "  --style naive|tuned      how the work is submitted (default naive); see below\n"
        "  --wait fence|queue-idle  naive style's blocking wait: vkWaitForFences (default) or\n"
        "                           vkQueueWaitIdle (as Halide's Vulkan runtime did)\n"
        "  --rows a,b,c             run only these rows (ids below)\n"
        "  --reps N                 timed repetitions per row (default: per row, see below)\n"
        "  --warmup N               discarded repetitions before them (default 2, 1 for 48 MB rows)\n"
        "  --quick                  few repetitions and 4 MB instead of 48 MB (CI smoke test)\n"
        "  --max-row-seconds S      stop a row's repetitions after S seconds, keeping at least 3\n"
        "                           (default 60; 0 = no limit)\n"
        "  --json PATH              write device, memory types, settings and all samples\n"
        "  --list-rows              print the row ids and exit\n"
        "  --probe-device           print 'software: yes|no' and the device name, and exit\n"
        "  --build-commit           print the commit this build came from, and exit\n"
        "\n"
        "styles:\n"
        "  naive  one command buffer and vkQueueSubmit per operation, an ALL_COMMANDS barrier at\n"
        "         the start of each, a blocking wait when results are needed, staging memory in\n"
        "         the first host-visible type that is also DEVICE_LOCAL (what unmodified\n"
        "         applications do).\n"
        "  tuned  up to 32 operations per command buffer with COMPUTE|TRANSFER barriers between\n"
        "         them, spin on vkGetFenceStatus for up to 100 us before blocking, readback\n"
        "         staging in HOST_CACHED|HOST_COHERENT memory (what a careful runtime does).\n"
        "  batched  100 dependent dispatches per command buffer with COMPUTE_SHADER barriers\n"
        "         between them, one vkQueueSubmit with a fence and one plain vkWaitForFences per\n"
        "         command buffer (what ML runtimes such as ggml-vulkan do). Not a --style value:\n"
        "         the row `batched` always submits this way, whatever --style and --wait say.\n"
        "\n"
        "Each row's sample is one repetition's wall time (std::chrono::steady_clock) divided by\n"
        "the operations in it; the row reports median, min, p10, p90 and max over the timed\n"
        "repetitions and, where the queue has timestamps, the GPU time of its device work\n"
        "(gpu_time_us, measured separately). Every repetition is verified; exit status 1 when\n"
        "any verification fails or a validation message was reported.\n"
        "\n"
        "rows (default repetitions: 20, 10 for the 48 MB rows; --quick: 3, 2):\n");
    for (const RowInfo& r : kRows)
        std::printf("  %-15s %s [%s]\n      %s\n", r.id, r.title, r.unit, r.help);
}

[[noreturn]] void usage_error(const std::string& msg) {
    std::fprintf(stderr, "slipstream-bench: %s (try --help)\n", msg.c_str());
    std::exit(2);
}

Options parse_options(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) usage_error("missing value after " + a);
            return argv[++i];
        };
        if (a == "--help" || a == "-h") {
            print_help();
            std::exit(0);
        } else if (a == "--list-rows") {
            for (const RowInfo& r : kRows) std::printf("%s\n", r.id);
            std::exit(0);
        } else if (a == "--build-commit") {
            // The commit this build (and the layer built beside it) came from.
            std::printf("%s\n", SLIPSTREAM_BUILD_COMMIT);
            std::exit(0);
        } else if (a == "--style") {
            std::string v = value();
            if (v == "naive") o.style = Style::naive;
            else if (v == "tuned") o.style = Style::tuned;
            else usage_error("--style must be naive or tuned");
        } else if (a == "--wait") {
            std::string v = value();
            if (v == "fence") o.wait = WaitMode::fence;
            else if (v == "queue-idle") o.wait = WaitMode::queue_idle;
            else usage_error("--wait must be fence or queue-idle");
        } else if (a == "--rows") {
            std::stringstream ss(value());
            std::string id;
            while (std::getline(ss, id, ',')) {
                if (id.empty()) continue;
                if (!find_row(id)) usage_error("unknown row '" + id + "'");
                o.rows.push_back(id);
            }
        } else if (a == "--reps") {
            o.reps = std::atoi(value().c_str());
            if (o.reps < 1) usage_error("--reps must be >= 1");
        } else if (a == "--warmup") {
            o.warmup = std::atoi(value().c_str());
            if (o.warmup < 0) usage_error("--warmup must be >= 0");
        } else if (a == "--quick") {
            o.quick = true;
        } else if (a == "--probe-device") {
            o.probe_device = true;
        } else if (a == "--max-row-seconds") {
            o.max_row_seconds = std::atof(value().c_str());
        } else if (a == "--json") {
            o.json_path = value();
        } else {
            usage_error("unknown option " + a);
        }
    }
    return o;
}

// ---------------------------------------------------------------------------------------------
// Statistics.
double percentile(std::vector<double> v, double p) {
    if (v.empty()) return NAN;
    std::sort(v.begin(), v.end());
    double pos = p * double(v.size() - 1);
    size_t lo = size_t(std::floor(pos));
    size_t hi = std::min(v.size() - 1, lo + 1);
    double frac = pos - double(lo);
    return v[lo] + (v[hi] - v[lo]) * frac;
}

double micros(Clock::duration d) { return std::chrono::duration<double, std::micro>(d).count(); }

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
    _mm_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
}

// A cheap deterministic pattern for buffer contents.
inline uint32_t pattern(uint32_t seed, uint32_t i) {
    uint32_t x = seed * 0x9E3779B9u ^ (i + 0x7F4A7C15u) * 0x85EBCA6Bu;
    x ^= x >> 15;
    x *= 0x2C1B3C6Du;
    x ^= x >> 12;
    return x;
}

// ---------------------------------------------------------------------------------------------
// JSON writing (a small streaming writer; enough for our flat data).
std::string json_str(const std::string& s) {
    std::string out = "\"";
    for (unsigned char c : s) {
        switch (c) {
            case '"': out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            case '\n': out += "\\n"; break;
            case '\r': out += "\\r"; break;
            case '\t': out += "\\t"; break;
            default:
                if (c < 0x20) {
                    char buf[8];
                    std::snprintf(buf, sizeof buf, "\\u%04x", c);
                    out += buf;
                } else {
                    out += char(c);
                }
        }
    }
    return out + "\"";
}

std::string json_num(double v) {
    if (!std::isfinite(v)) return "null";
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    return buf;
}

std::string memory_flags_str(VkMemoryPropertyFlags f) {
    static const std::pair<VkMemoryPropertyFlags, const char*> names[] = {
        {VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, "DEVICE_LOCAL"},
        {VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT, "HOST_VISIBLE"},
        {VK_MEMORY_PROPERTY_HOST_COHERENT_BIT, "HOST_COHERENT"},
        {VK_MEMORY_PROPERTY_HOST_CACHED_BIT, "HOST_CACHED"},
        {VK_MEMORY_PROPERTY_LAZILY_ALLOCATED_BIT, "LAZILY_ALLOCATED"},
        {VK_MEMORY_PROPERTY_PROTECTED_BIT, "PROTECTED"},
        {VK_MEMORY_PROPERTY_DEVICE_COHERENT_BIT_AMD, "DEVICE_COHERENT_AMD"},
        {VK_MEMORY_PROPERTY_DEVICE_UNCACHED_BIT_AMD, "DEVICE_UNCACHED_AMD"},
        {VK_MEMORY_PROPERTY_RDMA_CAPABLE_BIT_NV, "RDMA_CAPABLE_NV"},
    };
    std::string s;
    for (auto& n : names)
        if (f & n.first) s += (s.empty() ? "" : "|") + std::string(n.second);
    return s.empty() ? "0" : s;
}

// ---------------------------------------------------------------------------------------------
// Memory-type choices.
enum class MemPref {
    device,            // device buffers: DEVICE_LOCAL first
    staging_naive,     // HOST_VISIBLE|HOST_COHERENT, DEVICE_LOCAL preferred (naive; all uploads)
    readback_tuned,    // HOST_VISIBLE|HOST_COHERENT|HOST_CACHED, then coherent system memory
};

const char* pref_name(MemPref p) {
    switch (p) {
        case MemPref::device: return "device-local";
        case MemPref::staging_naive: return "host-visible+coherent, DEVICE_LOCAL preferred";
        case MemPref::readback_tuned: return "host-visible+coherent+cached preferred";
    }
    return "?";
}

// Memory types allowed by `bits`, in the order the preference tries them.
std::vector<uint32_t> candidate_types(const VkPhysicalDeviceMemoryProperties& mp, uint32_t bits,
                                      MemPref pref) {
    const VkMemoryPropertyFlags hv = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT;
    const VkMemoryPropertyFlags hc = VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    const VkMemoryPropertyFlags cached = VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
    const VkMemoryPropertyFlags dl = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
    std::vector<uint32_t> out;
    auto add_if = [&](auto pred) {
        for (uint32_t i = 0; i < mp.memoryTypeCount; ++i) {
            if (!(bits & (1u << i))) continue;
            if (std::find(out.begin(), out.end(), i) != out.end()) continue;
            if (pred(mp.memoryTypes[i].propertyFlags)) out.push_back(i);
        }
    };
    auto has = [](VkMemoryPropertyFlags f, VkMemoryPropertyFlags want) { return (f & want) == want; };
    switch (pref) {
        case MemPref::device:
            add_if([&](VkMemoryPropertyFlags f) { return has(f, dl); });
            add_if([&](VkMemoryPropertyFlags) { return true; });
            break;
        case MemPref::staging_naive:
            add_if([&](VkMemoryPropertyFlags f) { return has(f, hv | hc | dl); });
            add_if([&](VkMemoryPropertyFlags f) { return has(f, hv | hc); });
            break;
        case MemPref::readback_tuned:
            add_if([&](VkMemoryPropertyFlags f) { return has(f, hv | hc | cached); });
            add_if([&](VkMemoryPropertyFlags f) { return has(f, hv | hc) && !(f & dl); });
            add_if([&](VkMemoryPropertyFlags f) { return has(f, hv | hc); });
            break;
    }
    return out;
}

struct Buf {
    VkBuffer buffer = VK_NULL_HANDLE;
    VkDeviceMemory memory = VK_NULL_HANDLE;
    VkDeviceSize size = 0;
    int type = -1;
    void* map = nullptr;
    template <typename T>
    T* as() const { return static_cast<T*>(map); }
};

// ---------------------------------------------------------------------------------------------
struct StagingUse {
    std::string name;
    std::string preference;
    int type;
    VkDeviceSize bytes;
};

struct RowResult {
    const RowInfo* info = nullptr;
    std::string title;
    std::string pattern;          // how it submitted: "naive", "tuned" or "batched"
    std::vector<double> samples;  // in the row's unit
    int warmup = 0;
    int reps_requested = 0;
    int ops_per_rep = 0;
    uint64_t bytes = 0;          // bytes moved per operation, where it means something
    double gpu_us = NAN;         // GPU time of the row's device work (timestamps), if any
    std::string gpu_what;
    int verify_failures = 0;
    int verify_checks = 0;
    std::string first_failure;
    bool truncated = false;      // stopped early by --max-row-seconds
};

class Bench {
public:
    Bench(Context& ctx, const Options& opt) : ctx_(ctx), opt_(opt) {}
    ~Bench() { destroy(); }

    void init();
    double state_probe_us();
    void destroy();
    RowResult run(const RowInfo& row);

    const std::vector<StagingUse>& staging() const { return staging_; }
    bool timestamps() const { return ts_bits_ > 0; }

private:
    // --- the two styles' way of submitting work -------------------------------------------
    struct Slot {
        VkCommandBuffer cb = VK_NULL_HANDLE;
        VkFence fence = VK_NULL_HANDLE;
        bool pending = false;  // submitted and not yet seen complete
    };
    VkCommandBuffer begin_op();
    void end_op();
    void flush();
    void sync();
    Slot& acquire_slot();
    void submit(Slot& s);
    // What naive submissions chain (the launch_timeline_* rows).
    enum class Decoration { none, empty_timeline_info, timeline_chain, binary_chain };
    Decoration decoration_ = Decoration::none;
    VkSemaphore chain_ = VK_NULL_HANDLE;  // timeline_chain's semaphore
    uint64_t chain_value_ = 0;            // ... the value the latest submission signals
    VkSemaphore binaries_[2] = {};        // binary_chain's: launch k signals binaries_[k % 2]
    void row_launch_decorated(RowResult& row, Decoration d);
    void wait_fence(VkFence f);
    void spin_on_fence(VkFence f);
    void wait_device(VkFence f);  // the style's device sync on a fence of the row's own
    void record_style_barrier(VkCommandBuffer cb);
    static void host_read_barrier(VkCommandBuffer cb);

    // --- helpers --------------------------------------------------------------------------
    Buf make_buffer(VkDeviceSize size, VkBufferUsageFlags usage, MemPref pref);
    Buf make_staging(const std::string& name, VkDeviceSize size, VkBufferUsageFlags usage,
                     MemPref pref);
    void free_buffer(Buf& b);
    void untimed(const std::function<void(VkCommandBuffer)>& record);
    double gpu_time_us(const std::function<void(VkCommandBuffer)>& record, int samples);
    VkDescriptorSet make_set(const vkapp::ComputePipeline& p, const std::vector<VkBuffer>& bufs);
    void dispatch(VkCommandBuffer cb, const vkapp::ComputePipeline& p, VkDescriptorSet set,
                  uint32_t a, uint32_t count);
    MemPref readback_pref() const {
        return opt_.style == Style::naive ? MemPref::staging_naive : MemPref::readback_tuned;
    }
    void check(RowResult& row, bool ok, const std::string& what);
    // A row's own command buffer and fence, for patterns that do not use the styles' ring.
    struct Own {
        VkCommandBuffer cb = VK_NULL_HANDLE;
        VkFence fence = VK_NULL_HANDLE;
    };
    Own make_own();
    void free_own(Own& o);
    // Begins o.cb (one-time submit), records, ends, submits with o.fence.
    void submit_own(const Own& o, const std::function<void(VkCommandBuffer)>& record);
    // Copies `tiny` into `check_buf` (untimed) and checks every word is `want`.
    void check_tiny(RowResult& row, const Buf& tiny, const Buf& check_buf, uint32_t want, int rep);
    int reps(int full, int quick) const {
        return opt_.reps > 0 ? opt_.reps : (opt_.quick ? quick : full);
    }
    int warmup(int dflt) const { return opt_.warmup >= 0 ? opt_.warmup : dflt; }
    void measure(RowResult& row, int warmup, int reps, double divisor,
                 const std::function<void(int)>& prep, const std::function<void(int)>& body,
                 const std::function<void(int)>& verify);

    void row_launch(RowResult& row, bool sync_each);
    void row_launch_spin(RowResult& row, bool barrier);
    void row_launch_sync_fresh_fence(RowResult& row);
    void row_launch_sync_same(RowResult& row, bool rerecord);
    void row_barriers_16(RowResult& row);
    void row_seed_chain(RowResult& row);
    void row_idle_sync(RowResult& row);
    void row_upload_64k(RowResult& row);
    void row_upload_launch(RowResult& row);
    void row_alloc_free(RowResult& row);
    void row_staging_per_op(RowResult& row);
    void row_upload_big(RowResult& row);
    void row_readback_big(RowResult& row);
    void row_pipeline(RowResult& row);
    void row_batched(RowResult& row);
    void row_independent(RowResult& row);
    void row_seed_readback(RowResult& row, VkDeviceSize bytes);
    void row_ml_matvec(RowResult& row);

    Context& ctx_;
    const Options& opt_;
    VkCommandPool pool_ = VK_NULL_HANDLE;
    std::vector<Slot> ring_;
    uint32_t next_slot_ = 0;
    Slot* cur_ = nullptr;          // tuned: command buffer being filled
    uint32_t cur_cmds_ = 0;
    VkFence last_fence_ = VK_NULL_HANDLE;  // fence of the last submission (none in queue-idle)
    bool in_flight_ = false;       // something submitted since the last completed sync
    bool submitted_since_idle_ = false;

    VkCommandBuffer aux_cb_ = VK_NULL_HANDLE;  // untimed work and GPU timing
    VkFence aux_fence_ = VK_NULL_HANDLE;
    VkQueryPool query_pool_ = VK_NULL_HANDLE;
    uint32_t ts_bits_ = 0;

    vkapp::ComputePipeline add_, accum_, step_, matvec_;
    VkDescriptorPool dpool_ = VK_NULL_HANDLE;

    std::vector<StagingUse> staging_;
};

// ---------------------------------------------------------------------------------------------
void Bench::init() {
    pool_ = vkapp::create_command_pool(ctx_, VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT);
    ring_.resize(kRingSize);
    std::vector<VkCommandBuffer> cbs(kRingSize + 1);
    VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    ai.commandPool = pool_;
    ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ai.commandBufferCount = kRingSize + 1;
    VK_CHECK(vkAllocateCommandBuffers(ctx_.device, &ai, cbs.data()));
    VkFenceCreateInfo fi{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    for (uint32_t i = 0; i < kRingSize; ++i) {
        ring_[i].cb = cbs[i];
        VK_CHECK(vkCreateFence(ctx_.device, &fi, nullptr, &ring_[i].fence));
    }
    aux_cb_ = cbs[kRingSize];
    VK_CHECK(vkCreateFence(ctx_.device, &fi, nullptr, &aux_fence_));

    ts_bits_ = ctx_.queue_family_properties.timestampValidBits;
    if (ts_bits_ > 0) {
        VkQueryPoolCreateInfo qi{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
        qi.queryType = VK_QUERY_TYPE_TIMESTAMP;
        qi.queryCount = 2;
        VK_CHECK(vkCreateQueryPool(ctx_.device, &qi, nullptr, &query_pool_));
    }

    add_ = vkapp::create_compute_pipeline(ctx_, bench_add_spv, sizeof bench_add_spv, 1, 8);
    accum_ = vkapp::create_compute_pipeline(ctx_, bench_accum_spv, sizeof bench_accum_spv, 2, 8);
    step_ = vkapp::create_compute_pipeline(ctx_, bench_step_spv, sizeof bench_step_spv, 2, 8);
    matvec_ = vkapp::create_compute_pipeline(ctx_, bench_matvec_spv, sizeof bench_matvec_spv, 3, 8);

    VkDescriptorPoolSize ps{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 32};
    VkDescriptorPoolCreateInfo dpi{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    dpi.flags = VK_DESCRIPTOR_POOL_CREATE_FREE_DESCRIPTOR_SET_BIT;
    dpi.maxSets = 16;
    dpi.poolSizeCount = 1;
    dpi.pPoolSizes = &ps;
    VK_CHECK(vkCreateDescriptorPool(ctx_.device, &dpi, nullptr, &dpool_));
}

void Bench::destroy() {
    if (!ctx_.device) return;
    if (pool_) {
        flush();
        VK_CHECK(vkQueueWaitIdle(ctx_.queue));
    }
    for (Slot& s : ring_)
        if (s.fence) vkDestroyFence(ctx_.device, s.fence, nullptr);
    ring_.clear();
    if (aux_fence_) vkDestroyFence(ctx_.device, aux_fence_, nullptr);
    aux_fence_ = VK_NULL_HANDLE;
    if (pool_) vkDestroyCommandPool(ctx_.device, pool_, nullptr);  // frees the command buffers
    pool_ = VK_NULL_HANDLE;
    if (query_pool_) vkDestroyQueryPool(ctx_.device, query_pool_, nullptr);
    query_pool_ = VK_NULL_HANDLE;
    if (dpool_) vkDestroyDescriptorPool(ctx_.device, dpool_, nullptr);
    dpool_ = VK_NULL_HANDLE;
    if (add_.pipeline) vkapp::destroy_compute_pipeline(ctx_, add_);
    if (accum_.pipeline) vkapp::destroy_compute_pipeline(ctx_, accum_);
    if (step_.pipeline) vkapp::destroy_compute_pipeline(ctx_, step_);
    if (matvec_.pipeline) vkapp::destroy_compute_pipeline(ctx_, matvec_);
}

// --- submission -------------------------------------------------------------------------------
void Bench::wait_fence(VkFence f) {
    if (opt_.style == Style::tuned) {
        auto t0 = Clock::now();
        for (;;) {
            VkResult r = vkGetFenceStatus(ctx_.device, f);
            if (r == VK_SUCCESS) return;
            if (r != VK_NOT_READY) vkapp::fail("vkGetFenceStatus", r, __FILE__, __LINE__);
            if (micros(Clock::now() - t0) > kSpinMicros) break;
            cpu_relax();
        }
    }
    VK_CHECK(vkWaitForFences(ctx_.device, 1, &f, VK_TRUE, UINT64_MAX));
}

// Polls `f` until it signals, never blocking: the application's own spin (launch_spin rows,
// the state probe).
void Bench::spin_on_fence(VkFence f) {
    for (;;) {
        const VkResult r = vkGetFenceStatus(ctx_.device, f);
        if (r == VK_SUCCESS) return;
        if (r != VK_NOT_READY) vkapp::fail("vkGetFenceStatus", r, __FILE__, __LINE__);
        cpu_relax();
    }
}

// As sync() waits, for a fence the row submitted itself: naive blocks in vkWaitForFences (or
// vkQueueWaitIdle), tuned spins before blocking.
void Bench::wait_device(VkFence f) {
    if (opt_.style == Style::naive && opt_.wait == WaitMode::queue_idle) VK_CHECK(vkQueueWaitIdle(ctx_.queue));
    else wait_fence(f);
}

Bench::Slot& Bench::acquire_slot() {
    Slot& s = ring_[next_slot_];
    next_slot_ = (next_slot_ + 1) % kRingSize;
    if (s.pending) {
        if (opt_.style == Style::naive && opt_.wait == WaitMode::queue_idle) {
            // No fences in this mode: an application that wants the command buffer back
            // waits for the queue.
            VK_CHECK(vkQueueWaitIdle(ctx_.queue));
            for (Slot& o : ring_) o.pending = false;
            in_flight_ = false;
        } else {
            wait_fence(s.fence);
            s.pending = false;
        }
    }
    if (!(opt_.style == Style::naive && opt_.wait == WaitMode::queue_idle))
        VK_CHECK(vkResetFences(ctx_.device, 1, &s.fence));
    VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    VK_CHECK(vkBeginCommandBuffer(s.cb, &bi));  // implicitly resets it (pool has RESET flag)
    return s;
}

void Bench::submit(Slot& s) {
    VK_CHECK(vkEndCommandBuffer(s.cb));
    VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.commandBufferCount = 1;
    si.pCommandBuffers = &s.cb;
    VkTimelineSemaphoreSubmitInfo values{VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO};
    const uint64_t wait_value = chain_value_, signal_value = chain_value_ + 1;
    const VkPipelineStageFlags stage = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
    if (opt_.style == Style::naive && decoration_ != Decoration::none) si.pNext = &values;
    if (opt_.style == Style::naive && decoration_ == Decoration::timeline_chain) {
        values.waitSemaphoreValueCount = 1;
        values.pWaitSemaphoreValues = &wait_value;
        values.signalSemaphoreValueCount = 1;
        values.pSignalSemaphoreValues = &signal_value;
        si.waitSemaphoreCount = 1;
        si.pWaitSemaphores = &chain_;
        si.pWaitDstStageMask = &stage;
        si.signalSemaphoreCount = 1;
        si.pSignalSemaphores = &chain_;
        chain_value_ = signal_value;
    }
    if (opt_.style == Style::naive && decoration_ == Decoration::binary_chain) {
        si.pNext = nullptr;
        si.waitSemaphoreCount = chain_value_ ? 1 : 0;
        si.pWaitSemaphores = &binaries_[(chain_value_ + 1) % 2];
        si.pWaitDstStageMask = &stage;
        si.signalSemaphoreCount = 1;
        si.pSignalSemaphores = &binaries_[chain_value_ % 2];
        ++chain_value_;
    }
    const bool use_fence = !(opt_.style == Style::naive && opt_.wait == WaitMode::queue_idle);
    VK_CHECK(vkQueueSubmit(ctx_.queue, 1, &si, use_fence ? s.fence : VK_NULL_HANDLE));
    s.pending = true;
    if (use_fence) last_fence_ = s.fence;
    in_flight_ = true;
    submitted_since_idle_ = true;
}

void Bench::record_style_barrier(VkCommandBuffer cb) {
    if (opt_.style == Style::naive) {
        vkapp::barrier(cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_ACCESS_MEMORY_WRITE_BIT,
                       VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
                       VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT);
    } else {
        const VkPipelineStageFlags st =
            VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
        vkapp::barrier(cb, st, VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT, st,
                       VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                           VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT);
    }
}

void Bench::host_read_barrier(VkCommandBuffer cb) {
    vkapp::barrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                   VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
}

// Starts one operation: returns the command buffer to record it into, with the style's barrier
// in front of it.
VkCommandBuffer Bench::begin_op() {
    if (opt_.style == Style::naive) {
        cur_ = &acquire_slot();
        record_style_barrier(cur_->cb);
        return cur_->cb;
    }
    if (cur_ && cur_cmds_ >= kBatchLimit) flush();
    if (!cur_) {
        cur_ = &acquire_slot();
        cur_cmds_ = 0;
    }
    record_style_barrier(cur_->cb);
    ++cur_cmds_;
    return cur_->cb;
}

void Bench::end_op() {
    if (opt_.style == Style::naive) {
        submit(*cur_);
        cur_ = nullptr;
    }
}

void Bench::flush() {
    if (cur_) {
        submit(*cur_);
        cur_ = nullptr;
        cur_cmds_ = 0;
    }
}

// Waits until everything submitted so far has completed (the style's "device sync").
void Bench::sync() {
    flush();
    if (opt_.style == Style::naive) {
        if (opt_.wait == WaitMode::queue_idle) {
            VK_CHECK(vkQueueWaitIdle(ctx_.queue));
            for (Slot& s : ring_) s.pending = false;
        } else if (last_fence_) {
            VK_CHECK(vkWaitForFences(ctx_.device, 1, &last_fence_, VK_TRUE, UINT64_MAX));
        }
        in_flight_ = false;
        return;
    }
    if (!in_flight_) return;  // tuned: nothing in flight, nothing to wait for
    wait_fence(last_fence_);
    in_flight_ = false;
}

// --- helpers ----------------------------------------------------------------------------------
Buf Bench::make_buffer(VkDeviceSize size, VkBufferUsageFlags usage, MemPref pref) {
    Buf b;
    b.size = size;
    VkBufferCreateInfo bci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    bci.size = size;
    bci.usage = usage;
    bci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    VK_CHECK(vkCreateBuffer(ctx_.device, &bci, nullptr, &b.buffer));
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(ctx_.device, b.buffer, &req);
    VkResult last = VK_ERROR_OUT_OF_DEVICE_MEMORY;
    for (uint32_t t : candidate_types(ctx_.memory_properties, req.memoryTypeBits, pref)) {
        VkMemoryAllocateInfo mai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
        mai.allocationSize = req.size;
        mai.memoryTypeIndex = t;
        last = vkAllocateMemory(ctx_.device, &mai, nullptr, &b.memory);
        if (last == VK_SUCCESS) {
            b.type = int(t);
            break;
        }
        // A full heap: fall back to the next candidate, as the runtimes do.
        if (last != VK_ERROR_OUT_OF_DEVICE_MEMORY && last != VK_ERROR_OUT_OF_HOST_MEMORY) break;
    }
    if (b.type < 0) vkapp::fail("vkAllocateMemory (all candidate types)", last, __FILE__, __LINE__);
    VK_CHECK(vkBindBufferMemory(ctx_.device, b.buffer, b.memory, 0));
    if (ctx_.memory_properties.memoryTypes[b.type].propertyFlags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT)
        VK_CHECK(vkMapMemory(ctx_.device, b.memory, 0, VK_WHOLE_SIZE, 0, &b.map));
    return b;
}

Buf Bench::make_staging(const std::string& name, VkDeviceSize size, VkBufferUsageFlags usage,
                        MemPref pref) {
    Buf b = make_buffer(size, usage, pref);
    bool known = false;
    for (const StagingUse& s : staging_) known |= s.name == name;
    if (!known) staging_.push_back({name, pref_name(pref), b.type, size});
    return b;
}

void Bench::free_buffer(Buf& b) {
    if (b.buffer) vkDestroyBuffer(ctx_.device, b.buffer, nullptr);
    if (b.memory) vkFreeMemory(ctx_.device, b.memory, nullptr);  // unmaps implicitly
    b = Buf{};
}

// Untimed work (preparing inputs, verification copies): its own command buffer and fence,
// full barriers on both sides, waits until done.
void Bench::untimed(const std::function<void(VkCommandBuffer)>& record) {
    VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    VK_CHECK(vkBeginCommandBuffer(aux_cb_, &bi));
    vkapp::barrier(aux_cb_, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_ACCESS_MEMORY_WRITE_BIT,
                   VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
                   VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT);
    record(aux_cb_);
    vkapp::barrier(aux_cb_, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_ACCESS_MEMORY_WRITE_BIT,
                   VK_PIPELINE_STAGE_HOST_BIT | VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
                   VK_ACCESS_HOST_READ_BIT | VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT);
    VK_CHECK(vkEndCommandBuffer(aux_cb_));
    VK_CHECK(vkResetFences(ctx_.device, 1, &aux_fence_));
    VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.commandBufferCount = 1;
    si.pCommandBuffers = &aux_cb_;
    VK_CHECK(vkQueueSubmit(ctx_.queue, 1, &si, aux_fence_));
    VK_CHECK(vkWaitForFences(ctx_.device, 1, &aux_fence_, VK_TRUE, UINT64_MAX));
}

// The round trip of an empty command buffer, submitted and spun on (median of 32, after 8): what
// this process's GPU round trips cost before any row runs. Some machines put a whole process
// in a state where every round trip costs several times more (80-120 us instead of 15-20 on an
// H200); bench_report compares this across processes and runs such a process again.
double Bench::state_probe_us() {
    std::vector<double> trips;
    for (int i = 0; i < 40; ++i) {
        VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
        bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
        VK_CHECK(vkBeginCommandBuffer(aux_cb_, &bi));
        VK_CHECK(vkEndCommandBuffer(aux_cb_));
        VK_CHECK(vkResetFences(ctx_.device, 1, &aux_fence_));
        VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
        si.commandBufferCount = 1;
        si.pCommandBuffers = &aux_cb_;
        const auto t0 = Clock::now();
        VK_CHECK(vkQueueSubmit(ctx_.queue, 1, &si, aux_fence_));
        spin_on_fence(aux_fence_);
        if (i >= 8) trips.push_back(micros(Clock::now() - t0));
    }
    std::sort(trips.begin(), trips.end());
    return trips[trips.size() / 2];
}

// GPU time of `record` from two timestamps, median over `samples` separate submissions.
double Bench::gpu_time_us(const std::function<void(VkCommandBuffer)>& record, int samples) {
    if (!query_pool_) return NAN;
    const uint64_t mask = ts_bits_ >= 64 ? ~0ull : ((1ull << ts_bits_) - 1);
    std::vector<double> v;
    for (int i = 0; i < samples; ++i) {
        untimed([&](VkCommandBuffer cb) {
            vkCmdResetQueryPool(cb, query_pool_, 0, 2);
            vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, query_pool_, 0);
            record(cb);
            vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, query_pool_, 1);
        });
        uint64_t t[2] = {0, 0};
        VK_CHECK(vkGetQueryPoolResults(ctx_.device, query_pool_, 0, 2, sizeof t, t, sizeof(uint64_t),
                                       VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT));
        uint64_t ticks = ((t[1] & mask) - (t[0] & mask)) & mask;
        v.push_back(double(ticks) * double(ctx_.properties.limits.timestampPeriod) / 1000.0);
    }
    return percentile(v, 0.5);
}

VkDescriptorSet Bench::make_set(const vkapp::ComputePipeline& p, const std::vector<VkBuffer>& bufs) {
    VkDescriptorSetAllocateInfo ai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    ai.descriptorPool = dpool_;
    ai.descriptorSetCount = 1;
    ai.pSetLayouts = &p.set_layout;
    VkDescriptorSet set;
    VK_CHECK(vkAllocateDescriptorSets(ctx_.device, &ai, &set));
    vkapp::write_storage_buffers(ctx_, set, bufs);
    return set;
}

void Bench::dispatch(VkCommandBuffer cb, const vkapp::ComputePipeline& p, VkDescriptorSet set,
                     uint32_t a, uint32_t count) {
    vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, p.pipeline);
    vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, p.layout, 0, 1, &set, 0, nullptr);
    const uint32_t push[2] = {a, count};
    vkCmdPushConstants(cb, p.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof push, push);
    vkCmdDispatch(cb, (count + kLocalSize - 1) / kLocalSize, 1, 1);
}

void Bench::check(RowResult& row, bool ok, const std::string& what) {
    ++row.verify_checks;
    if (ok) return;
    ++row.verify_failures;
    if (row.first_failure.empty()) row.first_failure = what;
}

Bench::Own Bench::make_own() {
    Own o;
    VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    ai.commandPool = pool_;
    ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ai.commandBufferCount = 1;
    VK_CHECK(vkAllocateCommandBuffers(ctx_.device, &ai, &o.cb));
    VkFenceCreateInfo fi{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VK_CHECK(vkCreateFence(ctx_.device, &fi, nullptr, &o.fence));
    return o;
}

void Bench::free_own(Own& o) {
    vkDestroyFence(ctx_.device, o.fence, nullptr);
    vkFreeCommandBuffers(ctx_.device, pool_, 1, &o.cb);
    o = Own{};
}

void Bench::submit_own(const Own& o, const std::function<void(VkCommandBuffer)>& record) {
    VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    VK_CHECK(vkBeginCommandBuffer(o.cb, &bi));  // implicitly resets it
    record(o.cb);
    VK_CHECK(vkEndCommandBuffer(o.cb));
    VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.commandBufferCount = 1;
    si.pCommandBuffers = &o.cb;
    VK_CHECK(vkQueueSubmit(ctx_.queue, 1, &si, o.fence));
}

void Bench::check_tiny(RowResult& row, const Buf& tiny, const Buf& check_buf, uint32_t want, int rep) {
    untimed([&](VkCommandBuffer cb) {
        VkBufferCopy c{0, 0, kTinyWords * 4};
        vkCmdCopyBuffer(cb, tiny.buffer, check_buf.buffer, 1, &c);
    });
    bool ok = true;
    for (uint32_t i = 0; i < kTinyWords; ++i) ok &= check_buf.as<uint32_t>()[i] == want;
    check(row, ok, "rep " + std::to_string(rep) + ": value is " + std::to_string(check_buf.as<uint32_t>()[0]) +
                       ", expected " + std::to_string(want));
}

void Bench::measure(RowResult& row, int warmup, int reps, double divisor,
                    const std::function<void(int)>& prep, const std::function<void(int)>& body,
                    const std::function<void(int)>& verify) {
    row.warmup = warmup;
    row.reps_requested = reps;
    const auto start = Clock::now();
    for (int r = 0; r < warmup + reps; ++r) {
        prep(r);
        const auto t0 = Clock::now();
        body(r);
        const auto t1 = Clock::now();
        verify(r);
        if (r >= warmup) row.samples.push_back(micros(t1 - t0) / divisor);
        if (opt_.max_row_seconds > 0 && r + 1 < warmup + reps && row.samples.size() >= 3 &&
            micros(Clock::now() - start) > opt_.max_row_seconds * 1e6) {
            row.truncated = true;
            break;
        }
    }
}

// --- rows -------------------------------------------------------------------------------------
RowResult Bench::run(const RowInfo& info) {
    RowResult row;
    row.info = &info;
    row.title = info.title;
    row.pattern = opt_.style == Style::naive ? "naive" : "tuned";
    const std::string id = info.id;
    if (id == "launch") row_launch(row, false);
    else if (id == "launch_timeline_info") row_launch_decorated(row, Decoration::empty_timeline_info);
    else if (id == "launch_timeline_chain") row_launch_decorated(row, Decoration::timeline_chain);
    else if (id == "launch_binary_chain") row_launch_decorated(row, Decoration::binary_chain);
    else if (id == "launch_sync") row_launch(row, true);
    else if (id == "launch_spin") row_launch_spin(row, true);
    else if (id == "launch_spin_bare") row_launch_spin(row, false);
    else if (id == "launch_sync_fresh_fence") row_launch_sync_fresh_fence(row);
    else if (id == "launch_sync_resubmit") row_launch_sync_same(row, false);
    else if (id == "launch_sync_rerecord") row_launch_sync_same(row, true);
    else if (id == "barriers_16") row_barriers_16(row);
    else if (id == "seed_chain") row_seed_chain(row);
    else if (id == "idle_sync") row_idle_sync(row);
    else if (id == "upload_64k") row_upload_64k(row);
    else if (id == "upload_launch") row_upload_launch(row);
    else if (id == "alloc_free_64k") row_alloc_free(row);
    else if (id == "staging_per_op") row_staging_per_op(row);
    else if (id == "upload_48mb") row_upload_big(row);
    else if (id == "readback_48mb") row_readback_big(row);
    else if (id == "pipeline") row_pipeline(row);
    else if (id == "batched") row_batched(row);
    else if (id == "independent") row_independent(row);
    else if (id == "seed_readback_48mb") row_seed_readback(row, opt_.quick ? 4000000 : 48000000);
    else if (id == "seed_readback_64k") row_seed_readback(row, k64KiB);
    else if (id == "ml_matvec") row_ml_matvec(row);
    sync();
    return row;
}

constexpr VkBufferUsageFlags kDeviceUsage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
                                            VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                            VK_BUFFER_USAGE_TRANSFER_DST_BIT;

// "launch, empty timeline info", "launch, timeline-chained" and "launch, binary-chained":
// row_launch with the naive submissions chaining what such runtimes chain (Bench::submit).
void Bench::row_launch_decorated(RowResult& row, Decoration d) {
    VkSemaphoreTypeCreateInfo type{VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO};
    type.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
    VkSemaphoreCreateInfo sci{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, &type};
    if (d == Decoration::timeline_chain) VK_CHECK(vkCreateSemaphore(ctx_.device, &sci, nullptr, &chain_));
    VkSemaphoreCreateInfo binary{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
    if (d == Decoration::binary_chain)
        for (VkSemaphore& b : binaries_) VK_CHECK(vkCreateSemaphore(ctx_.device, &binary, nullptr, &b));
    chain_value_ = 0;
    decoration_ = d;
    row_launch(row, false);
    sync();
    if (chain_) {
        // The chain's last value, as such a runtime waits for its work (then the style's wait).
        VkSemaphoreWaitInfo wait{VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO};
        wait.semaphoreCount = 1;
        wait.pSemaphores = &chain_;
        wait.pValues = &chain_value_;
        VK_CHECK(vkWaitSemaphores(ctx_.device, &wait, UINT64_MAX));
        vkDestroySemaphore(ctx_.device, chain_, nullptr);
        chain_ = VK_NULL_HANDLE;
    }
    if (binaries_[0]) {
        // The last signal is never waited for: the device goes idle before they go.
        VK_CHECK(vkQueueWaitIdle(ctx_.queue));
        for (VkSemaphore& b : binaries_) {
            vkDestroySemaphore(ctx_.device, b, nullptr);
            b = VK_NULL_HANDLE;
        }
    }
    decoration_ = Decoration::none;
}

// "launch, back to back" and "launch + device sync".
void Bench::row_launch(RowResult& row, bool sync_each) {
    const int n = sync_each ? (opt_.quick ? 8 : 64) : (opt_.quick ? 32 : 256);
    row.ops_per_rep = n;
    Buf tiny = make_buffer(kTinyWords * 4, kDeviceUsage, MemPref::device);
    Buf check_buf = make_buffer(kTinyWords * 4, VK_BUFFER_USAGE_TRANSFER_DST_BIT, MemPref::readback_tuned);
    VkDescriptorSet set = make_set(add_, {tiny.buffer});

    measure(row, warmup(2), reps(20, 3), n,
        [&](int) { untimed([&](VkCommandBuffer cb) { vkCmdFillBuffer(cb, tiny.buffer, 0, VK_WHOLE_SIZE, 0); }); },
        [&](int r) {
            for (int i = 0; i < n; ++i) {
                VkCommandBuffer cb = begin_op();
                dispatch(cb, add_, set, uint32_t(r + 1), kTinyWords);
                end_op();
                if (sync_each) sync();
            }
            if (!sync_each) sync();
        },
        [&](int r) {
            untimed([&](VkCommandBuffer cb) {
                VkBufferCopy c{0, 0, kTinyWords * 4};
                vkCmdCopyBuffer(cb, tiny.buffer, check_buf.buffer, 1, &c);
            });
            const uint32_t want = uint32_t(n) * uint32_t(r + 1);
            bool ok = true;
            for (uint32_t i = 0; i < kTinyWords; ++i) ok &= check_buf.as<uint32_t>()[i] == want;
            check(row, ok, "rep " + std::to_string(r) + ": value after " + std::to_string(n) +
                               " launches is " + std::to_string(check_buf.as<uint32_t>()[0]) +
                               ", expected " + std::to_string(want));
        });
    row.gpu_what = "one dispatch of the tiny kernel (256 uints)";
    row.gpu_us = gpu_time_us([&](VkCommandBuffer cb) { dispatch(cb, add_, set, 1, kTinyWords); },
                             opt_.quick ? 3 : 20);
    sync();
    VK_CHECK(vkFreeDescriptorSets(ctx_.device, dpool_, 1, &set));
    free_buffer(tiny);
    free_buffer(check_buf);
}

// "launch + app spin" (and "..., no barrier"): submit, then the application polls the fence itself.
void Bench::row_launch_spin(RowResult& row, bool barrier) {
    const int n = opt_.quick ? 8 : 64;
    row.ops_per_rep = n;
    row.pattern = opt_.style == Style::naive ? "naive, app spins" : "tuned";
    Buf tiny = make_buffer(kTinyWords * 4, kDeviceUsage, MemPref::device);
    Buf check_buf = make_buffer(kTinyWords * 4, VK_BUFFER_USAGE_TRANSFER_DST_BIT, MemPref::readback_tuned);
    VkDescriptorSet set = make_set(add_, {tiny.buffer});
    Own own = make_own();
    measure(row, warmup(2), reps(20, 3), n,
        [&](int) { untimed([&](VkCommandBuffer c) { vkCmdFillBuffer(c, tiny.buffer, 0, VK_WHOLE_SIZE, 0); }); },
        [&](int r) {
            for (int i = 0; i < n; ++i) {
                submit_own(own, [&](VkCommandBuffer cb) {
                    if (barrier) record_style_barrier(cb);
                    dispatch(cb, add_, set, uint32_t(r + 1), kTinyWords);
                });
                spin_on_fence(own.fence);
                VK_CHECK(vkResetFences(ctx_.device, 1, &own.fence));
            }
        },
        [&](int r) { check_tiny(row, tiny, check_buf, uint32_t(n) * uint32_t(r + 1), r); });
    row.gpu_what = "one dispatch of the tiny kernel (256 uints)";
    row.gpu_us = gpu_time_us([&](VkCommandBuffer c) { dispatch(c, add_, set, 1, kTinyWords); }, opt_.quick ? 3 : 20);
    free_own(own);
    VK_CHECK(vkFreeDescriptorSets(ctx_.device, dpool_, 1, &set));
    free_buffer(tiny);
    free_buffer(check_buf);
}

// "launch + sync with a fresh fence": a fence created and destroyed around every launch, or kept.
void Bench::row_launch_sync_fresh_fence(RowResult& row) {
    const int n = opt_.quick ? 8 : 64;
    row.ops_per_rep = n;
    row.pattern = opt_.style == Style::naive ? "naive, fresh fence per launch" : "tuned, kept fence";
    Buf tiny = make_buffer(kTinyWords * 4, kDeviceUsage, MemPref::device);
    Buf check_buf = make_buffer(kTinyWords * 4, VK_BUFFER_USAGE_TRANSFER_DST_BIT, MemPref::readback_tuned);
    VkDescriptorSet set = make_set(add_, {tiny.buffer});
    Own own = make_own();  // its fence is the tuned style's kept one
    const VkFenceCreateInfo fi{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    measure(row, warmup(2), reps(20, 3), n,
        [&](int) { untimed([&](VkCommandBuffer c) { vkCmdFillBuffer(c, tiny.buffer, 0, VK_WHOLE_SIZE, 0); }); },
        [&](int r) {
            for (int i = 0; i < n; ++i) {
                Own op = own;
                if (opt_.style == Style::naive) VK_CHECK(vkCreateFence(ctx_.device, &fi, nullptr, &op.fence));
                submit_own(op, [&](VkCommandBuffer cb) {
                    // The same in both styles: only the fence's lifetime differs.
                    vkapp::barrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                                   VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                                   VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
                    dispatch(cb, add_, set, uint32_t(r + 1), kTinyWords);
                });
                VK_CHECK(vkWaitForFences(ctx_.device, 1, &op.fence, VK_TRUE, UINT64_MAX));
                if (opt_.style == Style::naive) vkDestroyFence(ctx_.device, op.fence, nullptr);
                else VK_CHECK(vkResetFences(ctx_.device, 1, &op.fence));
            }
        },
        [&](int r) { check_tiny(row, tiny, check_buf, uint32_t(n) * uint32_t(r + 1), r); });
    row.gpu_what = "one dispatch of the tiny kernel (256 uints)";
    row.gpu_us = gpu_time_us([&](VkCommandBuffer c) { dispatch(c, add_, set, 1, kTinyWords); }, opt_.quick ? 3 : 20);
    free_own(own);
    VK_CHECK(vkFreeDescriptorSets(ctx_.device, dpool_, 1, &set));
    free_buffer(tiny);
    free_buffer(check_buf);
}

// "launch + device sync, same command buffer re-submitted" and "..., re-recorded identically":
// a latency loop that submits the same work each time, what armed launches (VK_SLIPSTREAM_ARM=on)
// are for; the re-recorded row is the same work that a layer must recognise by its commands.
// The buffer is zeroed once and every dispatch adds 1, so the value counts the dispatches run:
// a layer that skipped or doubled a launch fails the check.
void Bench::row_launch_sync_same(RowResult& row, bool rerecord) {
    const int n = opt_.quick ? 8 : 64;
    row.ops_per_rep = n;
    row.pattern = std::string(opt_.style == Style::naive ? "naive" : "tuned") +
                  (rerecord ? ", re-recorded" : ", re-submitted");
    Buf tiny = make_buffer(kTinyWords * 4, kDeviceUsage, MemPref::device);
    Buf check_buf = make_buffer(kTinyWords * 4, VK_BUFFER_USAGE_TRANSFER_DST_BIT, MemPref::readback_tuned);
    VkDescriptorSet set = make_set(add_, {tiny.buffer});
    Own own = make_own();  // its fence is kept and reset after each wait, in both styles
    auto record = [&](VkCommandBuffer cb) {
        vkapp::barrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                       VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
        dispatch(cb, add_, set, 1, kTinyWords);  // a constant 1: the recording never changes
    };
    if (!rerecord) {
        // Not ONE_TIME_SUBMIT: the very same command buffer goes to the queue every time.
        VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
        VK_CHECK(vkBeginCommandBuffer(own.cb, &bi));
        record(own.cb);
        VK_CHECK(vkEndCommandBuffer(own.cb));
    }
    VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.commandBufferCount = 1;
    si.pCommandBuffers = &own.cb;
    uint32_t made = 0;  // dispatches submitted and waited for, warm-up included
    untimed([&](VkCommandBuffer c) { vkCmdFillBuffer(c, tiny.buffer, 0, VK_WHOLE_SIZE, 0); });
    measure(row, warmup(2), reps(20, 3), n, [&](int) {},
        [&](int) {
            for (int i = 0; i < n; ++i) {
                if (rerecord) submit_own(own, record);
                else VK_CHECK(vkQueueSubmit(ctx_.queue, 1, &si, own.fence));
                wait_device(own.fence);
                VK_CHECK(vkResetFences(ctx_.device, 1, &own.fence));
                ++made;
            }
        },
        [&](int r) { check_tiny(row, tiny, check_buf, made, r); });
    row.gpu_what = "one dispatch of the tiny kernel (256 uints)";
    row.gpu_us = gpu_time_us([&](VkCommandBuffer c) { dispatch(c, add_, set, 1, kTinyWords); }, opt_.quick ? 3 : 20);
    free_own(own);
    VK_CHECK(vkFreeDescriptorSets(ctx_.device, dpool_, 1, &set));
    free_buffer(tiny);
    free_buffer(check_buf);
}

// "16 dispatches with barriers, one command buffer + sync".
void Bench::row_barriers_16(RowResult& row) {
    constexpr int kDispatches = 16;
    const int n = opt_.quick ? 4 : 32;
    row.ops_per_rep = n * kDispatches;
    Buf tiny = make_buffer(kTinyWords * 4, kDeviceUsage, MemPref::device);
    Buf check_buf = make_buffer(kTinyWords * 4, VK_BUFFER_USAGE_TRANSFER_DST_BIT, MemPref::readback_tuned);
    VkDescriptorSet set = make_set(add_, {tiny.buffer});
    auto record_all = [&](VkCommandBuffer cb, uint32_t value) {
        for (int k = 0; k < kDispatches; ++k) {
            record_style_barrier(cb);
            dispatch(cb, add_, set, value, kTinyWords);
        }
    };
    measure(row, warmup(2), reps(20, 3), n * kDispatches,
        [&](int) { untimed([&](VkCommandBuffer cb) { vkCmdFillBuffer(cb, tiny.buffer, 0, VK_WHOLE_SIZE, 0); }); },
        [&](int r) {
            for (int i = 0; i < n; ++i) {
                Slot& s = acquire_slot();
                record_all(s.cb, uint32_t(r + 1));
                submit(s);
                sync();
            }
        },
        [&](int r) { check_tiny(row, tiny, check_buf, uint32_t(n * kDispatches) * uint32_t(r + 1), r); });
    row.gpu_what = "16 dispatches with the style's barriers, one command buffer";
    row.gpu_us = gpu_time_us([&](VkCommandBuffer cb) { record_all(cb, 1); }, opt_.quick ? 3 : 20) / kDispatches;
    sync();
    VK_CHECK(vkFreeDescriptorSets(ctx_.device, dpool_, 1, &set));
    free_buffer(tiny);
    free_buffer(check_buf);
}

// "seed runtime: chain of 10 stages".
void Bench::row_seed_chain(RowResult& row) {
    constexpr uint32_t kStages = 10;
    constexpr uint32_t kWords = 4096;
    constexpr VkDeviceSize kBytes = kWords * 4;
    row.ops_per_rep = 1;
    row.pattern = opt_.style == Style::naive ? "naive, queue-idle waits" : "tuned";
    const bool naive = opt_.style == Style::naive;
    VkBufferCreateInfo bci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    bci.size = kBytes;
    bci.usage = kDeviceUsage;
    bci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;

    // The runtime's big block, allocated once: region buffers are bound into it at offsets.
    VkDeviceSize slot = 0;
    VkDeviceMemory block = VK_NULL_HANDLE;
    {
        VkBuffer probe;
        VK_CHECK(vkCreateBuffer(ctx_.device, &bci, nullptr, &probe));
        VkMemoryRequirements req;
        vkGetBufferMemoryRequirements(ctx_.device, probe, &req);
        vkDestroyBuffer(ctx_.device, probe, nullptr);
        slot = (req.size + req.alignment - 1) / req.alignment * req.alignment;
        VkMemoryAllocateInfo mai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
        mai.allocationSize = std::max<VkDeviceSize>(slot * (kStages + 1), 4ull << 20);
        mai.memoryTypeIndex = candidate_types(ctx_.memory_properties, req.memoryTypeBits, MemPref::device).at(0);
        VK_CHECK(vkAllocateMemory(ctx_.device, &mai, nullptr, &block));
    }
    VkDescriptorPoolSize ps{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 2 * kStages};
    VkDescriptorPoolCreateInfo dpi{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    dpi.maxSets = kStages;
    dpi.poolSizeCount = 1;
    dpi.pPoolSizes = &ps;
    VkDescriptorPool dpool = VK_NULL_HANDLE;
    VK_CHECK(vkCreateDescriptorPool(ctx_.device, &dpi, nullptr, &dpool));
    std::vector<VkDescriptorSet> sets(kStages);
    std::vector<VkDescriptorSetLayout> layouts(kStages, step_.set_layout);
    VkDescriptorSetAllocateInfo dai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    dai.descriptorPool = dpool;
    dai.descriptorSetCount = kStages;
    dai.pSetLayouts = layouts.data();
    VK_CHECK(vkAllocateDescriptorSets(ctx_.device, &dai, sets.data()));
    Buf check_buf = make_buffer(kBytes, VK_BUFFER_USAGE_TRANSFER_DST_BIT, MemPref::readback_tuned);
    std::vector<VkBuffer> bufs;

    // One operation as the seed runtime submits it: a pool and a command buffer of its own,
    // a fence-less submit, vkQueueWaitIdle, the pool destroyed.
    auto seed_op = [&](const std::function<void(VkCommandBuffer)>& record) {
        VkCommandPool pool = vkapp::create_command_pool(ctx_);
        VkCommandBuffer cb = vkapp::begin_one_time(ctx_, pool);
        record_style_barrier(cb);
        record(cb);
        VK_CHECK(vkEndCommandBuffer(cb));
        VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
        si.commandBufferCount = 1;
        si.pCommandBuffers = &cb;
        VK_CHECK(vkQueueSubmit(ctx_.queue, 1, &si, VK_NULL_HANDLE));
        VK_CHECK(vkQueueWaitIdle(ctx_.queue));
        vkDestroyCommandPool(ctx_.device, pool, nullptr);
    };
    auto op = [&](const std::function<void(VkCommandBuffer)>& record) {
        if (naive) return seed_op(record);
        record(begin_op());
        end_op();
    };
    auto fill = [&](VkBuffer b) { op([&](VkCommandBuffer cb) { vkCmdFillBuffer(cb, b, 0, VK_WHOLE_SIZE, 0); }); };
    auto stage = [&](uint32_t k) { op([&](VkCommandBuffer cb) { dispatch(cb, step_, sets[k], k, kWords); }); };
    auto destroy_chain = [&] {
        for (VkBuffer b : bufs) vkDestroyBuffer(ctx_.device, b, nullptr);
        bufs.clear();
    };
    std::vector<uint32_t> want(kWords);
    for (uint32_t k = 0; k < kStages; ++k)
        for (uint32_t i = 0; i < kWords; ++i) want[i] = want[i] * 1664525u + 1013904223u + k;

    measure(row, warmup(2), reps(20, 3), 1.0, [&](int) {},
        [&](int) {
            destroy_chain();  // the last chain's buffers, after its pipeline
            for (uint32_t j = 0; j <= kStages; ++j) {
                VkBuffer b;
                VK_CHECK(vkCreateBuffer(ctx_.device, &bci, nullptr, &b));
                VkMemoryRequirements req;
                vkGetBufferMemoryRequirements(ctx_.device, b, &req);
                VK_CHECK(vkBindBufferMemory(ctx_.device, b, block, slot * j));
                bufs.push_back(b);
                fill(b);
            }
            for (uint32_t k = 0; k < kStages; ++k) vkapp::write_storage_buffers(ctx_, sets[k], {bufs[k], bufs[k + 1]});
            for (uint32_t k = 0; k < kStages; ++k) stage(k);
            if (!naive) sync();
        },
        [&](int r) {
            untimed([&](VkCommandBuffer cb) {
                VkBufferCopy c{0, 0, kBytes};
                vkCmdCopyBuffer(cb, bufs.back(), check_buf.buffer, 1, &c);
            });
            check(row, std::memcmp(check_buf.map, want.data(), kBytes) == 0,
                  "rep " + std::to_string(r) + ": result of the 10-stage chain differs");
        });
    row.gpu_what = "the 10 kernels in one command buffer, the style's barriers";
    row.gpu_us = gpu_time_us([&](VkCommandBuffer cb) {
        for (uint32_t k = 0; k < kStages; ++k) {
            if (k) record_style_barrier(cb);
            dispatch(cb, step_, sets[k], k, kWords);
        }
    }, opt_.quick ? 3 : 10);
    sync();
    destroy_chain();
    vkDestroyDescriptorPool(ctx_.device, dpool, nullptr);
    vkFreeMemory(ctx_.device, block, nullptr);
    free_buffer(check_buf);
}

// "independent: small kernels, one per command buffer".
void Bench::row_independent(RowResult& row) {
    const uint32_t n = opt_.quick ? 16 : 64;
    row.ops_per_rep = int(n);
    std::vector<Buf> bufs;
    std::vector<VkDescriptorSet> sets;
    VkDescriptorPoolSize ps{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, n};
    VkDescriptorPoolCreateInfo dpi{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    dpi.maxSets = n;
    dpi.poolSizeCount = 1;
    dpi.pPoolSizes = &ps;
    VkDescriptorPool pool = VK_NULL_HANDLE;
    VK_CHECK(vkCreateDescriptorPool(ctx_.device, &dpi, nullptr, &pool));
    for (uint32_t i = 0; i < n; ++i) {
        bufs.push_back(make_buffer(kTinyWords * 4, kDeviceUsage, MemPref::device));
        VkDescriptorSetAllocateInfo ai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
        ai.descriptorPool = pool;
        ai.descriptorSetCount = 1;
        ai.pSetLayouts = &add_.set_layout;
        VkDescriptorSet set;
        VK_CHECK(vkAllocateDescriptorSets(ctx_.device, &ai, &set));
        vkapp::write_storage_buffers(ctx_, set, {bufs.back().buffer});
        sets.push_back(set);
    }
    Buf check_buf = make_buffer(VkDeviceSize(n) * kTinyWords * 4, VK_BUFFER_USAGE_TRANSFER_DST_BIT, MemPref::readback_tuned);
    const VkPipelineStageFlags st = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
    auto serialize = [&](VkCommandBuffer cb) {
        vkapp::barrier(cb, st, VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT, st,
                       VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT |
                           VK_ACCESS_TRANSFER_WRITE_BIT);
    };
    // Kernel i adds (rep + 1) * (i + 1) to its buffer.
    auto record_all = [&](VkCommandBuffer cb, uint32_t rep, bool barriers) {
        for (uint32_t i = 0; i < n; ++i) {
            if (barriers && i) serialize(cb);
            dispatch(cb, add_, sets[i], (rep + 1) * (i + 1), kTinyWords);
        }
    };

    measure(row, warmup(2), reps(20, 3), n,
        [&](int) {
            untimed([&](VkCommandBuffer cb) {
                for (Buf& b : bufs) vkCmdFillBuffer(cb, b.buffer, 0, VK_WHOLE_SIZE, 0);
            });
        },
        [&](int r) {
            if (opt_.style == Style::naive) {
                for (uint32_t i = 0; i < n; ++i) {
                    Slot& s = acquire_slot();
                    dispatch(s.cb, add_, sets[i], uint32_t(r + 1) * (i + 1), kTinyWords);
                    submit(s);
                }
            } else {
                Slot& s = acquire_slot();
                record_all(s.cb, uint32_t(r), true);
                submit(s);
            }
            sync();
        },
        [&](int r) {
            untimed([&](VkCommandBuffer cb) {
                for (uint32_t i = 0; i < n; ++i) {
                    VkBufferCopy c{0, VkDeviceSize(i) * kTinyWords * 4, kTinyWords * 4};
                    vkCmdCopyBuffer(cb, bufs[i].buffer, check_buf.buffer, 1, &c);
                }
            });
            bool ok = true;
            uint32_t bad = 0;
            for (uint32_t i = 0; i < n && ok; ++i)
                for (uint32_t j = 0; j < kTinyWords && ok; ++j)
                    if (check_buf.as<uint32_t>()[i * kTinyWords + j] != uint32_t(r + 1) * (i + 1)) {
                        ok = false;
                        bad = i;
                    }
            check(row, ok, "rep " + std::to_string(r) + ": kernel " + std::to_string(bad) + "'s buffer is wrong");
        });
    row.gpu_what = "the " + std::to_string(n) + " dispatches in one command buffer" +
                   (opt_.style == Style::tuned ? ", a barrier between every two" : ", no barriers");
    row.gpu_us = gpu_time_us([&](VkCommandBuffer cb) { record_all(cb, 0, opt_.style == Style::tuned); },
                             opt_.quick ? 3 : 20);
    sync();
    vkDestroyDescriptorPool(ctx_.device, pool, nullptr);
    for (Buf& b : bufs) free_buffer(b);
    free_buffer(check_buf);
}

// "idle device sync".
void Bench::row_idle_sync(RowResult& row) {
    const int n = opt_.quick ? 50 : 1000;
    row.ops_per_rep = n;
    Buf tiny = make_buffer(kTinyWords * 4, kDeviceUsage, MemPref::device);
    Buf check_buf = make_buffer(kTinyWords * 4, VK_BUFFER_USAGE_TRANSFER_DST_BIT, MemPref::readback_tuned);
    VkDescriptorSet set = make_set(add_, {tiny.buffer});
    measure(row, warmup(2), reps(20, 3), n,
        [&](int r) {
            untimed([&](VkCommandBuffer cb) { vkCmdFillBuffer(cb, tiny.buffer, 0, VK_WHOLE_SIZE, 0); });
            VkCommandBuffer cb = begin_op();
            dispatch(cb, add_, set, uint32_t(r + 1), kTinyWords);
            end_op();
            sync();
        },
        [&](int) {
            for (int i = 0; i < n; ++i) sync();
        },
        [&](int r) {
            if (last_fence_)
                check(row, vkGetFenceStatus(ctx_.device, last_fence_) == VK_SUCCESS,
                      "rep " + std::to_string(r) + ": fence not signalled after sync");
            untimed([&](VkCommandBuffer cb) {
                VkBufferCopy c{0, 0, kTinyWords * 4};
                vkCmdCopyBuffer(cb, tiny.buffer, check_buf.buffer, 1, &c);
            });
            bool ok = true;
            for (uint32_t i = 0; i < kTinyWords; ++i) ok &= check_buf.as<uint32_t>()[i] == uint32_t(r + 1);
            check(row, ok, "rep " + std::to_string(r) + ": launch result wrong");
        });
    row.gpu_what = "";
    sync();
    VK_CHECK(vkFreeDescriptorSets(ctx_.device, dpool_, 1, &set));
    free_buffer(tiny);
    free_buffer(check_buf);
}

// "upload 64 KiB".
void Bench::row_upload_64k(RowResult& row) {
    const int n = opt_.quick ? 16 : 128;
    row.ops_per_rep = n;
    row.bytes = k64KiB;
    const VkDeviceSize total = k64KiB * VkDeviceSize(n);
    std::vector<uint32_t> src(size_t(n) * k64KiBWords);
    Buf staging = make_staging("upload_64k", total, VK_BUFFER_USAGE_TRANSFER_SRC_BIT, MemPref::staging_naive);
    Buf dst = make_buffer(total, kDeviceUsage, MemPref::device);
    Buf check_buf = make_buffer(total, VK_BUFFER_USAGE_TRANSFER_DST_BIT, MemPref::readback_tuned);
    measure(row, warmup(2), reps(20, 3), n,
        [&](int r) {
            for (size_t i = 0; i < src.size(); ++i) src[i] = pattern(uint32_t(r + 1), uint32_t(i));
        },
        [&](int) {
            for (int i = 0; i < n; ++i) {
                const VkDeviceSize off = k64KiB * VkDeviceSize(i);
                std::memcpy(staging.as<char>() + off, src.data() + size_t(i) * k64KiBWords, k64KiB);
                VkCommandBuffer cb = begin_op();
                VkBufferCopy c{off, off, k64KiB};
                vkCmdCopyBuffer(cb, staging.buffer, dst.buffer, 1, &c);
                end_op();
            }
            sync();
        },
        [&](int r) {
            untimed([&](VkCommandBuffer cb) {
                VkBufferCopy c{0, 0, total};
                vkCmdCopyBuffer(cb, dst.buffer, check_buf.buffer, 1, &c);
            });
            check(row, std::memcmp(check_buf.map, src.data(), size_t(total)) == 0,
                  "rep " + std::to_string(r) + ": uploaded data differs");
        });
    row.gpu_what = "one 64 KiB staging->device copy";
    row.gpu_us = gpu_time_us([&](VkCommandBuffer cb) {
        VkBufferCopy c{0, 0, k64KiB};
        vkCmdCopyBuffer(cb, staging.buffer, dst.buffer, 1, &c);
    }, opt_.quick ? 3 : 20);
    sync();
    free_buffer(staging);
    free_buffer(dst);
    free_buffer(check_buf);
}

// "staging per operation": the naive style allocates its staging per transfer.
void Bench::row_staging_per_op(RowResult& row) {
    const int n = opt_.quick ? 8 : 64;
    row.ops_per_rep = 2 * n;
    row.bytes = k64KiB;
    const bool naive = opt_.style == Style::naive;
    std::vector<uint32_t> got(size_t(n) * k64KiBWords), want(size_t(n) * k64KiBWords);
    Buf dst = make_buffer(k64KiB, kDeviceUsage, MemPref::device);
    Buf up_kept, down_kept;
    if (!naive) {
        up_kept = make_staging("staging_per_op upload", k64KiB, VK_BUFFER_USAGE_TRANSFER_SRC_BIT,
                               MemPref::staging_naive);
        down_kept = make_staging("staging_per_op readback", k64KiB, VK_BUFFER_USAGE_TRANSFER_DST_BIT, readback_pref());
    }
    measure(row, warmup(2), reps(20, 3), 2.0 * n,
        [&](int r) {
            for (size_t i = 0; i < want.size(); ++i) want[i] = pattern(uint32_t(r + 1), uint32_t(i));
        },
        [&](int) {
            for (int i = 0; i < n; ++i) {
                Buf up = naive ? make_buffer(k64KiB, VK_BUFFER_USAGE_TRANSFER_SRC_BIT, MemPref::staging_naive) : up_kept;
                std::memcpy(up.map, want.data() + size_t(i) * k64KiBWords, k64KiB);
                VkBufferCopy c{0, 0, k64KiB};
                vkCmdCopyBuffer(begin_op(), up.buffer, dst.buffer, 1, &c);
                end_op();
                sync();
                if (naive) free_buffer(up);
                Buf down = naive ? make_buffer(k64KiB, VK_BUFFER_USAGE_TRANSFER_DST_BIT, readback_pref()) : down_kept;
                VkCommandBuffer cb = begin_op();
                vkCmdCopyBuffer(cb, dst.buffer, down.buffer, 1, &c);
                host_read_barrier(cb);
                end_op();
                sync();
                if (!(ctx_.memory_properties.memoryTypes[down.type].propertyFlags & VK_MEMORY_PROPERTY_HOST_COHERENT_BIT)) {
                    VkMappedMemoryRange range{VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE};
                    range.memory = down.memory;
                    range.size = VK_WHOLE_SIZE;
                    VK_CHECK(vkInvalidateMappedMemoryRanges(ctx_.device, 1, &range));
                }
                std::memcpy(got.data() + size_t(i) * k64KiBWords, down.map, k64KiB);
                if (naive) free_buffer(down);
            }
        },
        [&](int r) {
            check(row, got == want, "rep " + std::to_string(r) + ": read back data differs from the upload");
        });
    Buf gpu_src = make_buffer(k64KiB, VK_BUFFER_USAGE_TRANSFER_SRC_BIT, MemPref::staging_naive);
    row.gpu_what = "one 64 KiB copy";
    row.gpu_us = gpu_time_us([&](VkCommandBuffer cb) {
        VkBufferCopy c{0, 0, k64KiB};
        vkCmdCopyBuffer(cb, gpu_src.buffer, dst.buffer, 1, &c);
    }, opt_.quick ? 3 : 20);
    sync();
    free_buffer(gpu_src);
    free_buffer(dst);
    if (!naive) {
        free_buffer(up_kept);
        free_buffer(down_kept);
    }
}

// "upload 64 KiB + launch".
void Bench::row_upload_launch(RowResult& row) {
    const int n = opt_.quick ? 8 : 64;
    row.ops_per_rep = n;
    row.bytes = k64KiB;
    std::vector<uint32_t> src(size_t(n) * k64KiBWords), want(k64KiBWords);
    Buf staging = make_staging("upload_launch", k64KiB * VkDeviceSize(n), VK_BUFFER_USAGE_TRANSFER_SRC_BIT,
                               MemPref::staging_naive);
    Buf in = make_buffer(k64KiB, kDeviceUsage, MemPref::device);
    Buf acc = make_buffer(k64KiB, kDeviceUsage, MemPref::device);
    Buf check_buf = make_buffer(k64KiB, VK_BUFFER_USAGE_TRANSFER_DST_BIT, MemPref::readback_tuned);
    VkDescriptorSet set = make_set(accum_, {in.buffer, acc.buffer});
    measure(row, warmup(2), reps(20, 3), n,
        [&](int r) {
            std::fill(want.begin(), want.end(), 0u);
            for (size_t i = 0; i < src.size(); ++i) {
                src[i] = pattern(uint32_t(r + 101), uint32_t(i));
                want[i % k64KiBWords] += src[i];
            }
            untimed([&](VkCommandBuffer cb) { vkCmdFillBuffer(cb, acc.buffer, 0, VK_WHOLE_SIZE, 0); });
        },
        [&](int) {
            for (int i = 0; i < n; ++i) {
                const VkDeviceSize off = k64KiB * VkDeviceSize(i);
                std::memcpy(staging.as<char>() + off, src.data() + size_t(i) * k64KiBWords, k64KiB);
                VkCommandBuffer cb = begin_op();
                VkBufferCopy c{off, 0, k64KiB};
                vkCmdCopyBuffer(cb, staging.buffer, in.buffer, 1, &c);
                end_op();
                cb = begin_op();
                dispatch(cb, accum_, set, 0, k64KiBWords);
                end_op();
            }
            sync();
        },
        [&](int r) {
            untimed([&](VkCommandBuffer cb) {
                VkBufferCopy c{0, 0, k64KiB};
                vkCmdCopyBuffer(cb, acc.buffer, check_buf.buffer, 1, &c);
            });
            check(row, std::memcmp(check_buf.map, want.data(), k64KiB) == 0,
                  "rep " + std::to_string(r) + ": accumulated sum of the uploads differs");
        });
    row.gpu_what = "one 64 KiB copy + barrier + dispatch";
    row.gpu_us = gpu_time_us([&](VkCommandBuffer cb) {
        VkBufferCopy c{0, 0, k64KiB};
        vkCmdCopyBuffer(cb, staging.buffer, in.buffer, 1, &c);
        record_style_barrier(cb);
        dispatch(cb, accum_, set, 0, k64KiBWords);
    }, opt_.quick ? 3 : 20);
    sync();
    VK_CHECK(vkFreeDescriptorSets(ctx_.device, dpool_, 1, &set));
    free_buffer(staging);
    free_buffer(in);
    free_buffer(acc);
    free_buffer(check_buf);
}

// "allocate + free 64 KiB".
void Bench::row_alloc_free(RowResult& row) {
    const int n = opt_.quick ? 32 : 256;
    row.ops_per_rep = n;
    row.bytes = k64KiB;
    VkBufferCreateInfo bci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    bci.size = k64KiB;
    bci.usage = kDeviceUsage;
    bci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;

    // Tuned: one pooled block of kSlots slots, each big enough for one 64 KiB buffer.
    constexpr uint32_t kSlots = 16;
    VkDeviceMemory block = VK_NULL_HANDLE;
    VkDeviceSize slot_size = 0;
    uint32_t block_type = 0;
    std::vector<uint32_t> free_slots;
    {
        VkBuffer probe;
        VK_CHECK(vkCreateBuffer(ctx_.device, &bci, nullptr, &probe));
        VkMemoryRequirements req;
        vkGetBufferMemoryRequirements(ctx_.device, probe, &req);
        vkDestroyBuffer(ctx_.device, probe, nullptr);
        slot_size = (req.size + req.alignment - 1) / req.alignment * req.alignment;
        block_type = candidate_types(ctx_.memory_properties, req.memoryTypeBits, MemPref::device).at(0);
        if (opt_.style == Style::tuned) {
            VkMemoryAllocateInfo mai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
            mai.allocationSize = slot_size * kSlots;
            mai.memoryTypeIndex = block_type;
            VK_CHECK(vkAllocateMemory(ctx_.device, &mai, nullptr, &block));
            for (uint32_t s = kSlots; s-- > 0;) free_slots.push_back(s);
        }
    }
    struct Alloc {
        VkBuffer buffer = VK_NULL_HANDLE;
        VkDeviceMemory memory = VK_NULL_HANDLE;  // naive: its own; tuned: none
        uint32_t slot = 0;
    };
    auto allocate = [&]() {
        Alloc a;
        VK_CHECK(vkCreateBuffer(ctx_.device, &bci, nullptr, &a.buffer));
        VkMemoryRequirements req;
        vkGetBufferMemoryRequirements(ctx_.device, a.buffer, &req);
        if (opt_.style == Style::tuned && !free_slots.empty() && req.size <= slot_size &&
            (req.memoryTypeBits & (1u << block_type))) {
            a.slot = free_slots.back();
            free_slots.pop_back();
            VK_CHECK(vkBindBufferMemory(ctx_.device, a.buffer, block, slot_size * a.slot));
            return a;
        }
        VkMemoryAllocateInfo mai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
        mai.allocationSize = req.size;
        mai.memoryTypeIndex =
            candidate_types(ctx_.memory_properties, req.memoryTypeBits, MemPref::device).at(0);
        VK_CHECK(vkAllocateMemory(ctx_.device, &mai, nullptr, &a.memory));
        VK_CHECK(vkBindBufferMemory(ctx_.device, a.buffer, a.memory, 0));
        return a;
    };
    auto release = [&](Alloc& a) {
        vkDestroyBuffer(ctx_.device, a.buffer, nullptr);
        if (a.memory) vkFreeMemory(ctx_.device, a.memory, nullptr);
        else free_slots.push_back(a.slot);
        a = Alloc{};
    };

    constexpr int kCheck = 3;
    Buf check_buf = make_buffer(k64KiB * kCheck, VK_BUFFER_USAGE_TRANSFER_DST_BIT, MemPref::readback_tuned);
    measure(row, warmup(2), reps(20, 3), n, [&](int) {},
        [&](int) {
            for (int i = 0; i < n; ++i) {
                Alloc a = allocate();
                release(a);
            }
        },
        [&](int r) {
            // Several live at once (distinct memory), each written by the GPU and read back.
            Alloc live[kCheck];
            for (Alloc& a : live) a = allocate();
            untimed([&](VkCommandBuffer cb) {
                for (int j = 0; j < kCheck; ++j)
                    vkCmdFillBuffer(cb, live[j].buffer, 0, VK_WHOLE_SIZE, uint32_t(r * 16 + j + 1));
                vkapp::barrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                               VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT);
                for (int j = 0; j < kCheck; ++j) {
                    VkBufferCopy c{0, k64KiB * VkDeviceSize(j), k64KiB};
                    vkCmdCopyBuffer(cb, live[j].buffer, check_buf.buffer, 1, &c);
                }
            });
            bool ok = true;
            for (int j = 0; j < kCheck; ++j)
                for (uint32_t i = 0; i < k64KiBWords; ++i)
                    ok &= check_buf.as<uint32_t>()[size_t(j) * k64KiBWords + i] == uint32_t(r * 16 + j + 1);
            check(row, ok, "rep " + std::to_string(r) + ": allocated buffers did not hold their data");
            for (Alloc& a : live) release(a);
        });
    row.gpu_what = "";
    if (block) vkFreeMemory(ctx_.device, block, nullptr);
    free_buffer(check_buf);
}

// "upload 48 MB".
void Bench::row_upload_big(RowResult& row) {
    const VkDeviceSize bytes = opt_.quick ? 4000000 : 48000000;
    const size_t words = size_t(bytes / 4);
    row.ops_per_rep = 1;
    row.bytes = bytes;
    row.title = opt_.quick ? "upload 4 MB (quick)" : "upload 48 MB";
    std::vector<uint32_t> src(words);
    for (size_t i = 0; i < words; ++i) src[i] = pattern(7, uint32_t(i));
    Buf staging = make_staging("upload_48mb", bytes, VK_BUFFER_USAGE_TRANSFER_SRC_BIT, MemPref::staging_naive);
    Buf dst = make_buffer(bytes, kDeviceUsage, MemPref::device);
    Buf check_buf = make_buffer(bytes, VK_BUFFER_USAGE_TRANSFER_DST_BIT, MemPref::readback_tuned);
    measure(row, warmup(1), reps(10, 2), 1000.0,
        [&](int r) {
            src.front() = 0xA0000000u + uint32_t(r);
            src.back() = 0xB0000000u + uint32_t(r);
        },
        [&](int) {
            std::memcpy(staging.map, src.data(), size_t(bytes));
            VkCommandBuffer cb = begin_op();
            VkBufferCopy c{0, 0, bytes};
            vkCmdCopyBuffer(cb, staging.buffer, dst.buffer, 1, &c);
            end_op();
            sync();
        },
        [&](int r) {
            untimed([&](VkCommandBuffer cb) {
                VkBufferCopy c{0, 0, bytes};
                vkCmdCopyBuffer(cb, dst.buffer, check_buf.buffer, 1, &c);
            });
            check(row, std::memcmp(check_buf.map, src.data(), size_t(bytes)) == 0,
                  "rep " + std::to_string(r) + ": uploaded data differs");
        });
    row.gpu_what = "the staging->device copy";
    row.gpu_us = gpu_time_us([&](VkCommandBuffer cb) {
        VkBufferCopy c{0, 0, bytes};
        vkCmdCopyBuffer(cb, staging.buffer, dst.buffer, 1, &c);
    }, 3);
    sync();
    free_buffer(staging);
    free_buffer(dst);
    free_buffer(check_buf);
}

// "readback 48 MB".
void Bench::row_readback_big(RowResult& row) {
    const VkDeviceSize bytes = opt_.quick ? 4000000 : 48000000;
    const size_t words = size_t(bytes / 4);
    row.ops_per_rep = 1;
    row.bytes = bytes;
    row.title = opt_.quick ? "readback 4 MB (quick)" : "readback 48 MB";
    std::vector<uint32_t> want(words), out(words);
    for (size_t i = 0; i < words; ++i) want[i] = pattern(11, uint32_t(i));
    Buf src = make_buffer(bytes, kDeviceUsage, MemPref::device);
    {
        Buf init = make_buffer(bytes, VK_BUFFER_USAGE_TRANSFER_SRC_BIT, MemPref::staging_naive);
        std::memcpy(init.map, want.data(), size_t(bytes));
        untimed([&](VkCommandBuffer cb) {
            VkBufferCopy c{0, 0, bytes};
            vkCmdCopyBuffer(cb, init.buffer, src.buffer, 1, &c);
        });
        free_buffer(init);
    }
    Buf staging = make_staging("readback_48mb", bytes, VK_BUFFER_USAGE_TRANSFER_DST_BIT, readback_pref());
    measure(row, warmup(1), reps(10, 2), 1000.0,
        [&](int r) {
            // New values at both ends each repetition, so stale data cannot pass.
            want.front() = 0xC0000000u + uint32_t(r);
            want.back() = 0xD0000000u + uint32_t(r);
            untimed([&](VkCommandBuffer cb) {
                vkCmdUpdateBuffer(cb, src.buffer, 0, 4, &want.front());
                vkCmdUpdateBuffer(cb, src.buffer, bytes - 4, 4, &want.back());
            });
            std::fill(out.begin(), out.end(), 0u);
        },
        [&](int) {
            VkCommandBuffer cb = begin_op();
            VkBufferCopy c{0, 0, bytes};
            vkCmdCopyBuffer(cb, src.buffer, staging.buffer, 1, &c);
            host_read_barrier(cb);
            end_op();
            sync();
            std::memcpy(out.data(), staging.map, size_t(bytes));
        },
        [&](int r) {
            check(row, std::memcmp(out.data(), want.data(), size_t(bytes)) == 0,
                  "rep " + std::to_string(r) + ": read-back data differs");
        });
    row.gpu_what = "the device->readback-staging copy";
    row.gpu_us = gpu_time_us([&](VkCommandBuffer cb) {
        VkBufferCopy c{0, 0, bytes};
        vkCmdCopyBuffer(cb, src.buffer, staging.buffer, 1, &c);
    }, 3);
    sync();
    free_buffer(src);
    free_buffer(staging);
}

// "pipeline": a chain of dependent kernels, then one readback.
void Bench::row_pipeline(RowResult& row) {
    constexpr int kKernels = 100;
    constexpr uint32_t kWords = 16384;
    constexpr VkDeviceSize kBytes = kWords * 4;
    row.ops_per_rep = 1;
    row.bytes = kBytes;
    std::vector<uint32_t> want(kWords), out(kWords);
    Buf a = make_buffer(kBytes, kDeviceUsage, MemPref::device);
    Buf b = make_buffer(kBytes, kDeviceUsage, MemPref::device);
    Buf init = make_buffer(kBytes, VK_BUFFER_USAGE_TRANSFER_SRC_BIT, MemPref::staging_naive);
    Buf staging = make_staging("pipeline_readback", kBytes, VK_BUFFER_USAGE_TRANSFER_DST_BIT, readback_pref());
    VkDescriptorSet ab = make_set(step_, {a.buffer, b.buffer});
    VkDescriptorSet ba = make_set(step_, {b.buffer, a.buffer});
    Buf& last = (kKernels % 2 == 1) ? b : a;  // kernel k reads a (k even) or b (k odd)

    auto record_chain = [&](VkCommandBuffer cb, int k) {
        dispatch(cb, step_, (k % 2 == 0) ? ab : ba, uint32_t(k), kWords);
    };
    measure(row, warmup(2), reps(20, 3), 1.0,
        [&](int r) {
            for (uint32_t i = 0; i < kWords; ++i) want[i] = init.as<uint32_t>()[i] = pattern(uint32_t(r + 31), i);
            untimed([&](VkCommandBuffer cb) {
                VkBufferCopy c{0, 0, kBytes};
                vkCmdCopyBuffer(cb, init.buffer, a.buffer, 1, &c);
            });
            for (int k = 0; k < kKernels; ++k)
                for (uint32_t i = 0; i < kWords; ++i) want[i] = want[i] * 1664525u + 1013904223u + uint32_t(k);
            std::fill(out.begin(), out.end(), 0u);
        },
        [&](int) {
            for (int k = 0; k < kKernels; ++k) {
                VkCommandBuffer cb = begin_op();
                record_chain(cb, k);
                end_op();
            }
            VkCommandBuffer cb = begin_op();
            VkBufferCopy c{0, 0, kBytes};
            vkCmdCopyBuffer(cb, last.buffer, staging.buffer, 1, &c);
            host_read_barrier(cb);
            end_op();
            sync();
            std::memcpy(out.data(), staging.map, kBytes);
        },
        [&](int r) {
            check(row, std::memcmp(out.data(), want.data(), kBytes) == 0,
                  "rep " + std::to_string(r) + ": result of the kernel chain differs");
        });
    row.gpu_what = "100 dispatches + copy in one command buffer, the style's barriers";
    row.gpu_us = gpu_time_us([&](VkCommandBuffer cb) {
        for (int k = 0; k < kKernels; ++k) {
            if (k) record_style_barrier(cb);
            record_chain(cb, k);
        }
        record_style_barrier(cb);
        VkBufferCopy c{0, 0, kBytes};
        vkCmdCopyBuffer(cb, last.buffer, staging.buffer, 1, &c);
    }, opt_.quick ? 3 : 10);
    sync();
    VkDescriptorSet sets[2] = {ab, ba};
    VK_CHECK(vkFreeDescriptorSets(ctx_.device, dpool_, 2, sets));
    free_buffer(a);
    free_buffer(b);
    free_buffer(init);
    free_buffer(staging);
}

// "batched": the batched pattern (see the top of the file), whatever --style and --wait say.
void Bench::row_batched(RowResult& row) {
    const int n = opt_.quick ? 4 : 32;  // command buffers per repetition
    row.ops_per_rep = n;
    row.pattern = "batched";
    Buf tiny = make_buffer(kTinyWords * 4, kDeviceUsage, MemPref::device);
    Buf check_buf = make_buffer(kTinyWords * 4, VK_BUFFER_USAGE_TRANSFER_DST_BIT, MemPref::readback_tuned);
    VkDescriptorSet set = make_set(add_, {tiny.buffer});
    // The runtime's own command buffer and fence, not the ring's: it waits for every submission
    // before recording the next, so one of each is all it needs, and the ring's use of fences
    // depends on --style and --wait.
    Own own = make_own();

    auto record_nodes = [&](VkCommandBuffer c, uint32_t value) {
        for (uint32_t k = 0; k < kBatchedDispatches; ++k) {
            vkapp::barrier(c, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                           VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                           VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
            dispatch(c, add_, set, value, kTinyWords);
        }
    };
    measure(row, warmup(2), reps(20, 3), n,
        [&](int) { untimed([&](VkCommandBuffer c) { vkCmdFillBuffer(c, tiny.buffer, 0, VK_WHOLE_SIZE, 0); }); },
        [&](int r) {
            for (int i = 0; i < n; ++i) {
                submit_own(own, [&](VkCommandBuffer c) { record_nodes(c, uint32_t(r + 1)); });
                VK_CHECK(vkWaitForFences(ctx_.device, 1, &own.fence, VK_TRUE, UINT64_MAX));
                VK_CHECK(vkResetFences(ctx_.device, 1, &own.fence));
            }
        },
        [&](int r) { check_tiny(row, tiny, check_buf, uint32_t(n) * kBatchedDispatches * uint32_t(r + 1), r); });
    row.gpu_what = "100 dispatches of the tiny kernel with their barriers, one command buffer";
    row.gpu_us = gpu_time_us([&](VkCommandBuffer c) { record_nodes(c, 1); }, opt_.quick ? 3 : 10);
    free_own(own);
    VK_CHECK(vkFreeDescriptorSets(ctx_.device, dpool_, 1, &set));
    free_buffer(tiny);
    free_buffer(check_buf);
}

// "seed_readback_*": the seed runtime's block allocator and readback, as BACKGROUND.md and
// issue 9 describe it.
void Bench::row_seed_readback(RowResult& row, VkDeviceSize bytes) {
    constexpr VkBufferUsageFlags kStagingUsage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    constexpr VkDeviceSize kMinBlock = 32ull << 20;
    row.ops_per_rep = 1;
    row.bytes = bytes;
    const bool ms = std::string(row.info->unit) == "ms";
    const uint32_t words = uint32_t(bytes / 4);
    Buf src = make_buffer(bytes, kDeviceUsage, MemPref::device);
    Buf init = make_buffer(bytes, VK_BUFFER_USAGE_TRANSFER_SRC_BIT, MemPref::staging_naive);

    // The block allocator: a throwaway buffer of the request's usage says which types fit.
    VkBufferCreateInfo bci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    bci.size = bytes;
    bci.usage = kStagingUsage;
    bci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    VkBuffer probe;
    VK_CHECK(vkCreateBuffer(ctx_.device, &bci, nullptr, &probe));
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(ctx_.device, probe, &req);
    vkDestroyBuffer(ctx_.device, probe, nullptr);
    const MemPref pref = readback_pref();
    const VkDeviceSize block_size = std::max(kMinBlock, (req.size + req.alignment - 1) / req.alignment * req.alignment);
    VkDeviceMemory block = VK_NULL_HANDLE;
    int type = -1;
    for (uint32_t t : candidate_types(ctx_.memory_properties, req.memoryTypeBits, pref)) {
        VkMemoryAllocateInfo mai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
        mai.allocationSize = block_size;
        mai.memoryTypeIndex = t;
        if (vkAllocateMemory(ctx_.device, &mai, nullptr, &block) == VK_SUCCESS) {
            type = int(t);
            break;
        }
    }
    if (type < 0) vkapp::fail("vkAllocateMemory (seed block)", VK_ERROR_OUT_OF_DEVICE_MEMORY, __FILE__, __LINE__);
    const std::string name = ms ? "seed_readback_48mb" : "seed_readback_64k";
    bool known = false;
    for (const StagingUse& s : staging_) known |= s.name == name;
    if (!known) staging_.push_back({name, pref_name(pref), type, block_size});
    // One region buffer, bound once and reused by every copy.
    VkBuffer region;
    VK_CHECK(vkCreateBuffer(ctx_.device, &bci, nullptr, &region));
    vkGetBufferMemoryRequirements(ctx_.device, region, &req);
    VK_CHECK(vkBindBufferMemory(ctx_.device, region, block, 0));

    std::vector<uint32_t> want(words), out(words);
    measure(row, warmup(ms ? 1 : 2), ms ? reps(10, 2) : reps(20, 3), ms ? 1000.0 : 1.0,
        [&](int r) {
            for (uint32_t i = 0; i < words; ++i) want[i] = init.as<uint32_t>()[i] = pattern(uint32_t(r + 71), i);
            untimed([&](VkCommandBuffer cb) {
                VkBufferCopy c{0, 0, bytes};
                vkCmdCopyBuffer(cb, init.buffer, src.buffer, 1, &c);
            });
            std::fill(out.begin(), out.end(), 0u);
        },
        [&](int) {
            VkCommandBuffer cb = begin_op();
            VkBufferCopy c{0, 0, bytes};
            vkCmdCopyBuffer(cb, src.buffer, region, 1, &c);
            host_read_barrier(cb);
            end_op();
            sync();
            void* p = nullptr;
            VK_CHECK(vkMapMemory(ctx_.device, block, 0, bytes, 0, &p));
            std::memcpy(out.data(), p, size_t(bytes));
            vkUnmapMemory(ctx_.device, block);
        },
        [&](int r) {
            check(row, std::memcmp(out.data(), want.data(), size_t(bytes)) == 0,
                  "rep " + std::to_string(r) + ": read-back data differs");
        });
    row.gpu_what = "the device->region copy";
    row.gpu_us = gpu_time_us([&](VkCommandBuffer cb) {
        VkBufferCopy c{0, 0, bytes};
        vkCmdCopyBuffer(cb, src.buffer, region, 1, &c);
    }, 3);
    sync();
    vkDestroyBuffer(ctx_.device, region, nullptr);
    vkFreeMemory(ctx_.device, block, nullptr);
    free_buffer(src);
    free_buffer(init);
}

// "ml_matvec": an ML runtime's device buffers in host-visible VRAM, read by a kernel.
void Bench::row_ml_matvec(RowResult& row) {
    const uint32_t rows = opt_.quick ? 256 : 4096, cols = opt_.quick ? 1024 : 14336;
    constexpr int kKernels = 16;
    row.ops_per_rep = kKernels;
    const VkDeviceSize a_bytes = VkDeviceSize(rows) * cols * 4, x_bytes = VkDeviceSize(cols) * 4,
                       y_bytes = VkDeviceSize(rows) * 4;
    row.bytes = a_bytes;
    // Small integers: every sum is exact in f32, whatever order the GPU adds in.
    std::vector<float> a(size_t(rows) * cols), x(cols), want(rows), got(rows);
    for (size_t i = 0; i < a.size(); ++i) a[i] = float(int(pattern(5, uint32_t(i)) % 5) - 2);
    for (uint32_t i = 0; i < cols; ++i) x[i] = float(int(pattern(6, i) % 5) - 2);
    for (uint32_t r = 0; r < rows; ++r) {
        double s = 0;
        for (uint32_t k = 0; k < cols; ++k) s += double(a[size_t(r) * cols + k]) * x[k];
        want[r] = float(s);
    }
    // The device buffers, sub-allocated from one block.
    VkBuffer bufs[3];
    VkMemoryRequirements reqs[3];
    const VkDeviceSize sizes[3] = {a_bytes, x_bytes, y_bytes};
    uint32_t bits = ~0u;
    for (int i = 0; i < 3; ++i) {
        VkBufferCreateInfo bci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
        bci.size = sizes[i];
        bci.usage = kDeviceUsage;
        bci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
        VK_CHECK(vkCreateBuffer(ctx_.device, &bci, nullptr, &bufs[i]));
        vkGetBufferMemoryRequirements(ctx_.device, bufs[i], &reqs[i]);
        bits &= reqs[i].memoryTypeBits;
    }
    VkDeviceSize offsets[3], total = 0;
    for (int i = 0; i < 3; ++i) {
        offsets[i] = (total + reqs[i].alignment - 1) / reqs[i].alignment * reqs[i].alignment;
        total = offsets[i] + reqs[i].size;
    }
    const MemPref pref = opt_.style == Style::naive ? MemPref::staging_naive : MemPref::device;
    const uint32_t type = candidate_types(ctx_.memory_properties, bits, pref).at(0);
    VkMemoryAllocateInfo mai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    mai.allocationSize = total;
    mai.memoryTypeIndex = type;
    VkDeviceMemory block;
    VK_CHECK(vkAllocateMemory(ctx_.device, &mai, nullptr, &block));
    for (int i = 0; i < 3; ++i) VK_CHECK(vkBindBufferMemory(ctx_.device, bufs[i], block, offsets[i]));
    bool known = false;
    for (const StagingUse& s : staging_) known |= s.name == "ml_matvec_weights";
    if (!known) staging_.push_back({"ml_matvec_weights", pref_name(pref), int(type), total});
    if (opt_.style == Style::naive) {
        // Host-visible device memory: the runtime writes the weights straight in.
        void* p = nullptr;
        VK_CHECK(vkMapMemory(ctx_.device, block, 0, VK_WHOLE_SIZE, 0, &p));
        std::memcpy(static_cast<char*>(p) + offsets[0], a.data(), size_t(a_bytes));
        std::memcpy(static_cast<char*>(p) + offsets[1], x.data(), size_t(x_bytes));
        vkUnmapMemory(ctx_.device, block);
    } else {
        Buf up = make_buffer(a_bytes + x_bytes, VK_BUFFER_USAGE_TRANSFER_SRC_BIT, MemPref::staging_naive);
        std::memcpy(up.as<char>(), a.data(), size_t(a_bytes));
        std::memcpy(up.as<char>() + a_bytes, x.data(), size_t(x_bytes));
        untimed([&](VkCommandBuffer cb) {
            VkBufferCopy ca{0, 0, a_bytes}, cx{a_bytes, 0, x_bytes};
            vkCmdCopyBuffer(cb, up.buffer, bufs[0], 1, &ca);
            vkCmdCopyBuffer(cb, up.buffer, bufs[1], 1, &cx);
        });
        free_buffer(up);
    }
    Buf out = make_buffer(y_bytes, VK_BUFFER_USAGE_TRANSFER_DST_BIT, MemPref::readback_tuned);
    VkDescriptorSet set = make_set(matvec_, {bufs[0], bufs[1], bufs[2]});
    auto record = [&](VkCommandBuffer cb) {
        vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, matvec_.pipeline);
        vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, matvec_.layout, 0, 1, &set, 0, nullptr);
        const uint32_t push[2] = {rows, cols};
        vkCmdPushConstants(cb, matvec_.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof push, push);
        vkCmdDispatch(cb, rows, 1, 1);
    };
    measure(row, warmup(2), reps(20, 3), kKernels,
        [&](int) { untimed([&](VkCommandBuffer cb) { vkCmdFillBuffer(cb, bufs[2], 0, VK_WHOLE_SIZE, 0); }); },
        [&](int) {
            // One command buffer in both styles: this row measures memory placement.
            Slot& s = acquire_slot();
            VkCommandBuffer cb = s.cb;
            for (int k = 0; k < kKernels; ++k) {
                if (k) record_style_barrier(cb);
                record(cb);
            }
            submit(s);
            sync();
        },
        [&](int r) {
            untimed([&](VkCommandBuffer cb) {
                VkBufferCopy c{0, 0, y_bytes};
                vkCmdCopyBuffer(cb, bufs[2], out.buffer, 1, &c);
            });
            std::memcpy(got.data(), out.map, size_t(y_bytes));
            check(row, std::memcmp(got.data(), want.data(), size_t(y_bytes)) == 0,
                  "rep " + std::to_string(r) + ": matrix-vector product differs");
        });
    row.gpu_what = "one matrix-vector product";
    row.gpu_us = gpu_time_us(record, opt_.quick ? 3 : 20);
    sync();
    VK_CHECK(vkFreeDescriptorSets(ctx_.device, dpool_, 1, &set));
    free_buffer(out);
    for (VkBuffer b : bufs) vkDestroyBuffer(ctx_.device, b, nullptr);
    vkFreeMemory(ctx_.device, block, nullptr);
}

// ---------------------------------------------------------------------------------------------
std::string version_str(uint32_t v) {
    return std::to_string(VK_API_VERSION_MAJOR(v)) + "." + std::to_string(VK_API_VERSION_MINOR(v)) +
           "." + std::to_string(VK_API_VERSION_PATCH(v));
}

std::string driver_version_str(const VkPhysicalDeviceProperties& p) {
    const uint32_t v = p.driverVersion;
    if (p.vendorID == 0x10DE)  // NVIDIA: 10.8.8.6 bits
        return std::to_string((v >> 22) & 0x3ff) + "." + std::to_string((v >> 14) & 0xff) + "." +
               std::to_string((v >> 6) & 0xff) + "." + std::to_string(v & 0x3f);
    return version_str(v);
}

struct DriverInfo {
    std::string name, info;
};

DriverInfo driver_info(const Context& ctx) {
    DriverInfo d;
    if (ctx.properties.apiVersion < VK_API_VERSION_1_2) return d;
    VkPhysicalDeviceDriverProperties dp{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
    VkPhysicalDeviceProperties2 p2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
    p2.pNext = &dp;
    vkGetPhysicalDeviceProperties2(ctx.physical_device, &p2);
    d.name = dp.driverName;
    d.info = dp.driverInfo;
    return d;
}

std::string commit_id() {
    const char* env = std::getenv("SLIPSTREAM_COMMIT");
    if (env && *env) return env;
    return SLIPSTREAM_BUILD_COMMIT;
}

std::string utc_now() {
    std::time_t t = std::time(nullptr);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
    return buf;
}

bool is_software(const Context& ctx) {
    return ctx.properties.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU ||
           std::strstr(ctx.properties.deviceName, "llvmpipe") != nullptr;
}

struct Stats {
    double median, min, p10, p90, max;
};

Stats stats_of(const std::vector<double>& s) {
    if (s.empty()) return {NAN, NAN, NAN, NAN, NAN};
    return {percentile(s, 0.5), *std::min_element(s.begin(), s.end()), percentile(s, 0.1),
            percentile(s, 0.9), *std::max_element(s.begin(), s.end())};
}

void write_json(const std::string& path, const Context& ctx, const Options& opt,
                const std::vector<StagingUse>& st, const std::vector<RowResult>& rows,
                int validation_messages, double state_probe_us, double state_probe_end_us) {
    std::ofstream f(path);
    if (!f) {
        std::fprintf(stderr, "slipstream-bench: cannot write %s\n", path.c_str());
        std::exit(2);
    }
    const DriverInfo di = driver_info(ctx);
    const auto& p = ctx.properties;
    const auto& mp = ctx.memory_properties;
    f << "{\n";
    f << "  \"tool\": \"slipstream-bench\",\n";
    f << "  \"format\": 1,\n";
    f << "  \"date\": " << json_str(utc_now()) << ",\n";
    f << "  \"commit\": " << json_str(commit_id()) << ",\n";
    f << "  \"device\": {\"name\": " << json_str(p.deviceName) << ", \"vendor_id\": " << p.vendorID
      << ", \"device_id\": " << p.deviceID << ", \"type\": " << int(p.deviceType)
      << ", \"software\": " << (is_software(ctx) ? "true" : "false")
      << ",\n    \"driver_version\": " << json_str(driver_version_str(p))
      << ", \"driver_version_raw\": " << p.driverVersion << ", \"driver_name\": " << json_str(di.name)
      << ", \"driver_info\": " << json_str(di.info) << ",\n    \"api_version\": "
      << json_str(version_str(p.apiVersion)) << ", \"timestamp_period_ns\": "
      << json_num(p.limits.timestampPeriod) << ", \"queue_family\": " << ctx.queue_family
      << ", \"queue_flags\": " << ctx.queue_family_properties.queueFlags
      << ", \"timestamp_valid_bits\": " << ctx.queue_family_properties.timestampValidBits << "},\n";
    f << "  \"memory_heaps\": [";
    for (uint32_t i = 0; i < mp.memoryHeapCount; ++i)
        f << (i ? ", " : "") << "{\"index\": " << i << ", \"size\": " << mp.memoryHeaps[i].size
          << ", \"device_local\": "
          << ((mp.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) ? "true" : "false") << "}";
    f << "],\n  \"memory_types\": [\n";
    for (uint32_t i = 0; i < mp.memoryTypeCount; ++i)
        f << "    {\"index\": " << i << ", \"flags\": " << json_str(memory_flags_str(mp.memoryTypes[i].propertyFlags))
          << ", \"flags_raw\": " << mp.memoryTypes[i].propertyFlags << ", \"heap\": " << mp.memoryTypes[i].heapIndex
          << ", \"heap_size\": " << mp.memoryHeaps[mp.memoryTypes[i].heapIndex].size << "}"
          << (i + 1 < mp.memoryTypeCount ? ",\n" : "\n");
    f << "  ],\n  \"staging\": [";
    for (size_t i = 0; i < st.size(); ++i)
        f << (i ? ", " : "") << "\n    {\"name\": " << json_str(st[i].name) << ", \"preference\": "
          << json_str(st[i].preference) << ", \"memory_type\": " << st[i].type << ", \"flags\": "
          << json_str(memory_flags_str(mp.memoryTypes[st[i].type].propertyFlags)) << ", \"bytes\": " << st[i].bytes
          << "}";
    f << "],\n";
    f << "  \"settings\": {\"style\": " << json_str(opt.style == Style::naive ? "naive" : "tuned")
      << ", \"wait\": " << json_str(opt.wait == WaitMode::fence ? "fence" : "queue-idle")
      << ", \"quick\": " << (opt.quick ? "true" : "false") << ", \"reps_override\": " << opt.reps
      << ", \"warmup_override\": " << opt.warmup << ", \"max_row_seconds\": " << json_num(opt.max_row_seconds)
      << ", \"batch_limit\": " << kBatchLimit << ", \"batched_dispatches\": " << kBatchedDispatches
      << ", \"spin_us\": " << json_num(kSpinMicros)
      << ", \"ring_size\": " << kRingSize << "},\n";
    f << "  \"slipstream_env\": {";
    bool first = true;
    for (char** e = environ; e && *e; ++e) {
        std::string kv = *e;
        if (kv.rfind("VK_SLIPSTREAM_", 0) != 0) continue;
        size_t eq = kv.find('=');
        f << (first ? "" : ", ") << json_str(kv.substr(0, eq)) << ": " << json_str(eq == std::string::npos ? "" : kv.substr(eq + 1));
        first = false;
    }
    f << "},\n  \"loader_env\": {";
    first = true;
    for (const char* k : {"VK_INSTANCE_LAYERS", "VK_ADD_LAYER_PATH", "VK_LAYER_PATH", "DISABLE_SLIPSTREAM",
                          "ENABLE_SLIPSTREAM", "VK_LOADER_LAYERS_ENABLE", "VK_LOADER_LAYERS_DISABLE",
                          "VK_LAYER_ENABLES", "VK_DRIVER_FILES", "VK_ICD_FILENAMES"}) {
        const char* v = std::getenv(k);
        if (!v) continue;
        f << (first ? "" : ", ") << json_str(k) << ": " << json_str(v);
        first = false;
    }
    f << "},\n";
    f << "  \"validation_messages\": " << validation_messages << ",\n";
    f << "  \"state_probe_us\": " << json_num(state_probe_us) << ",\n";
    f << "  \"state_probe_end_us\": " << json_num(state_probe_end_us) << ",\n";
    f << "  \"rows\": [\n";
    for (size_t i = 0; i < rows.size(); ++i) {
        const RowResult& r = rows[i];
        const Stats s = stats_of(r.samples);
        f << "    {\"name\": " << json_str(r.info->id) << ", \"title\": " << json_str(r.title)
          << ", \"unit\": " << json_str(r.info->unit) << ", \"pattern\": " << json_str(r.pattern) << ",\n     \"median\": " << json_num(s.median)
          << ", \"min\": " << json_num(s.min) << ", \"p10\": " << json_num(s.p10) << ", \"p90\": "
          << json_num(s.p90) << ", \"max\": " << json_num(s.max) << ", \"reps\": " << r.samples.size()
          << ", \"warmup\": " << r.warmup << ", \"ops_per_rep\": " << r.ops_per_rep
          << ", \"truncated\": " << (r.truncated ? "true" : "false") << ", \"bytes\": " << r.bytes
          << ",\n     \"gpu_time_us\": " << json_num(r.gpu_us) << ", \"gpu_time_what\": " << json_str(r.gpu_what)
          << ",\n     \"verified\": " << (r.verify_failures == 0 ? "true" : "false")
          << ", \"verify_checks\": " << r.verify_checks << ", \"verify_failures\": " << r.verify_failures
          << ", \"first_failure\": " << json_str(r.first_failure) << ",\n     \"samples\": [";
        for (size_t j = 0; j < r.samples.size(); ++j) f << (j ? ", " : "") << json_num(r.samples[j]);
        f << "]}" << (i + 1 < rows.size() ? ",\n" : "\n");
    }
    f << "  ]\n}\n";
    if (!f.good()) {
        std::fprintf(stderr, "slipstream-bench: error writing %s\n", path.c_str());
        std::exit(2);
    }
}

}  // namespace

int main(int argc, char** argv) {
    const Options opt = parse_options(argc, argv);
    std::vector<const RowInfo*> rows;
    if (opt.rows.empty()) {
        for (const RowInfo& r : kRows) rows.push_back(&r);
    } else {
        for (const RowInfo& r : kRows)
            if (std::find(opt.rows.begin(), opt.rows.end(), std::string(r.id)) != opt.rows.end())
                rows.push_back(&r);
    }

    vkapp::ContextOptions context_options;
    context_options.timeline_semaphores = true;  // the launch_timeline_* rows
    Context ctx = vkapp::create_context("slipstream-bench", context_options);
    if (opt.probe_device) {
        std::printf("software: %s\ndevice: %s\n", is_software(ctx) ? "yes" : "no", ctx.properties.deviceName);
        vkapp::destroy_context(ctx);
        return 0;
    }
    const DriverInfo di = driver_info(ctx);
    std::printf("slipstream-bench: style=%s wait=%s%s commit=%s\n",
                opt.style == Style::naive ? "naive" : "tuned",
                opt.wait == WaitMode::fence ? "fence" : "queue-idle", opt.quick ? " (quick)" : "",
                commit_id().c_str());
    std::printf("device: %s, driver %s %s (%s), Vulkan %s\n", ctx.properties.deviceName,
                di.name.c_str(), driver_version_str(ctx.properties).c_str(), di.info.c_str(),
                version_str(ctx.properties.apiVersion).c_str());
    if (is_software(ctx))
        std::printf("NOTE: this is a software (CPU) Vulkan device; the numbers only show that the "
                    "benchmark works.\n");
    std::fflush(stdout);

    std::vector<RowResult> results;
    std::vector<StagingUse> staging;
    int failures = 0;
    double state_probe = 0, state_probe_end = 0;
    {
        Bench bench(ctx, opt);
        bench.init();
        state_probe = bench.state_probe_us();
        std::printf("state probe: %.3f us (an empty command buffer submitted and spun on)\n", state_probe);
        int title_width = 34;
        for (const RowInfo* info : rows) title_width = std::max(title_width, int(std::strlen(info->title)));
        std::printf("\n%-*s %4s %10s %10s %10s %10s %10s %5s %10s  %s\n", title_width, "row", "unit", "median",
                    "min", "p10", "p90", "max", "reps", "gpu_us", "check");
        for (const RowInfo* info : rows) {
            RowResult r = bench.run(*info);
            const Stats s = stats_of(r.samples);
            char gpu[32] = "-";
            if (std::isfinite(r.gpu_us)) std::snprintf(gpu, sizeof gpu, "%.2f", r.gpu_us);
            std::printf("%-*s %4s %10.3f %10.3f %10.3f %10.3f %10.3f %5zu %10s  %s\n", title_width, r.title.c_str(),
                        info->unit, s.median, s.min, s.p10, s.p90, s.max, r.samples.size(), gpu,
                        r.verify_failures ? "FAILED" : "ok");
            if (r.verify_failures) {
                std::printf("  VERIFICATION FAILED (%d of %d checks): %s\n", r.verify_failures,
                            r.verify_checks, r.first_failure.c_str());
                ++failures;
            }
            std::fflush(stdout);
            results.push_back(std::move(r));
        }
        std::printf("\nstaging memory:\n");
        for (const StagingUse& s : bench.staging())
            std::printf("  %-18s type %d (%s)  [%s]\n", s.name.c_str(), s.type,
                        memory_flags_str(ctx.memory_properties.memoryTypes[s.type].propertyFlags).c_str(),
                        s.preference.c_str());
        staging = bench.staging();
        // Again after the rows: whether what they did (armed replays waiting on the GPU, say)
        // left the process's round trips slower than they began (tools/device/arm_state.sh).
        state_probe_end = bench.state_probe_us();
        std::printf("state probe after the rows: %.3f us\n", state_probe_end);
        bench.destroy();
    }
    const int validation = vkapp::g_validation_messages.load();
    if (!opt.json_path.empty()) write_json(opt.json_path, ctx, opt, staging, results, validation, state_probe, state_probe_end);
    vkapp::destroy_context(ctx);
    const int after = vkapp::g_validation_messages.load();
    if (after) std::fprintf(stderr, "slipstream-bench: %d validation message(s)\n", after);
    if (failures) std::fprintf(stderr, "slipstream-bench: %d row(s) FAILED verification\n", failures);
    return (failures || after) ? 1 : 0;
}
