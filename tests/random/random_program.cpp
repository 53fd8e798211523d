// random_program: a valid Vulkan program of compute and transfer work, generated from a seed
// (tests/random/actions.h), lowered with the synchronization it needs (hazards.h, runner.h),
// run, and digested: `checksum: <16 hex>` covers every byte the host read, in order, and the
// final contents of every buffer. random_test.py runs it without the layer and under it in
// every fusion mode and compares.
//
//   random_program --seed N [--count C] [--ops K] [--drop i,j,...] [--queues Q] [--share-queues]
//                  [--repeat-resubmits] [--print] [--dump FILE]
//
// --count C    the programs of seeds N .. N+C-1, one after another on one device (runner.h's
//              run_batch); not with --drop or --dump
// --ops K      generate K actions (default 60); the first K of a seed are the same for any K
// --drop LIST  leave these actions out (indices, comma-separated; ranges a-b too)
// --queues Q   use at most Q queues of the family (default 2; the device may have fewer)
// --share-queues  where the device has fewer than Q, the others share its last queue
// --repeat-resubmits  a resubmit action submits its command buffer 1-5 times, waiting for it
//              each time (another program than without: compare like with like)
// --print      print every lowered step (which Vulkan calls each action became)
// --dump FILE  write the raw bytes of every host read, in order, with a header line each
#include "actions.h"
#include "runner.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

[[noreturn]] void usage(const char* argv0) {
    std::fprintf(stderr,
                 "usage: %s --seed N [--count C] [--ops K] [--drop i,j,a-b] [--queues Q] [--share-queues] [--repeat-resubmits] "
                 "[--print] [--dump FILE]\n", argv0);
    std::exit(2);
}

uint64_t number(const char* argv0, const char* text) {
    char* end = nullptr;
    const unsigned long long v = std::strtoull(text, &end, 0);
    if (!end || *end || !*text) usage(argv0);
    return v;
}

}  // namespace

int main(int argc, char** argv) {
    rnd::RunOptions opt;
    uint32_t ops = 60, count = 1;
    bool have_seed = false;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        const bool more = i + 1 < argc;
        if (a == "--seed" && more) {
            opt.seed = number(argv[0], argv[++i]);
            have_seed = true;
        } else if (a == "--count" && more) {
            count = uint32_t(number(argv[0], argv[++i]));
            if (count < 1) usage(argv[0]);
        } else if (a == "--ops" && more) {
            ops = uint32_t(number(argv[0], argv[++i]));
        } else if (a == "--queues" && more) {
            opt.queues = uint32_t(number(argv[0], argv[++i]));
            if (opt.queues < 1) usage(argv[0]);
        } else if (a == "--share-queues") {
            opt.share_queues = true;
        } else if (a == "--repeat-resubmits") {
            opt.repeat_resubmits = true;
        } else if (a == "--drop" && more) {
            std::string list = argv[++i];
            size_t start = 0;
            while (start < list.size()) {
                size_t comma = list.find(',', start);
                if (comma == std::string::npos) comma = list.size();
                const std::string item = list.substr(start, comma - start);
                const size_t dash = item.find('-');
                if (dash == std::string::npos) {
                    opt.drop.insert(uint32_t(number(argv[0], item.c_str())));
                } else {
                    const uint64_t lo = number(argv[0], item.substr(0, dash).c_str());
                    const uint64_t hi = number(argv[0], item.substr(dash + 1).c_str());
                    for (uint64_t k = lo; k <= hi; ++k) opt.drop.insert(uint32_t(k));
                }
                start = comma + 1;
            }
        } else if (a == "--print") {
            opt.print = true;
        } else if (a == "--dump" && more) {
            opt.dump = argv[++i];
        } else {
            usage(argv[0]);
        }
    }
    if (!have_seed || (count > 1 && (!opt.drop.empty() || !opt.dump.empty()))) usage(argv[0]);
    // With --print, lines go out as they are made, interleaved with messages on stderr.
    if (opt.print) std::setvbuf(stdout, nullptr, _IOLBF, 0);
    if (count > 1) return rnd::run_batch(opt.seed, count, ops, opt);
    const rnd::Program program = rnd::generate(opt.seed, ops);
    return rnd::run(program, opt);
}
