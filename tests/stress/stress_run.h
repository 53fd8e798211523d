// What every stress program shares around its work: the command line, the watchdog that turns
// a hang into a clear failure, and the report (REPORT_FORMAT.md, kind "threads").
//
//   <program> [--submissions N] [--seconds S] [--threads T] [--watchdog S] [--report FILE]
//             [program options]
//
// --submissions: the vkQueueSubmit calls to make in all (the CI forms are small; the long
// forms make 10^6 and more); --seconds: stop making new ones after S seconds even if fewer
// were made (0: no limit; the checksum then depends on how far it got, so the suite's
// comparison across modes uses --submissions only); --threads: the submitting threads (the
// waiting, signalling and polling threads come on top); --watchdog: the time after which the
// program reports a hang and aborts (default: 45 s plus 1 s per 500 submissions, or --seconds
// plus 60 s); --stall: the same when no submission or wait was made for that long (default 20 s).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace stress {

struct Options {
    uint64_t submissions = 2000;
    double seconds = 0;
    uint32_t threads = 4;
    double watchdog_s = 0;  // 0: the default
    double stall_s = 20;
    std::string report;
    // Program options: name -> value (integers), declared with their defaults before parsing.
    struct Extra {
        const char* name;
        uint64_t value;
        const char* help;
    };
    std::vector<Extra> extras;
    uint64_t extra(const char* name) const;
};

// Parses the command line into `o` (its fields hold the program's defaults); exits 2 on a bad one.
void parse(int argc, char** argv, Options& o);

// One case of the report.
struct CaseResult {
    std::string name;
    bool passed = false, hang = false, crash = false, wrong_result = false;
    std::string detail;
    uint64_t threads = 0, submissions = 0, waits = 0;
};

// Counters the work bumps while it runs, read by the watchdog for its message and report.
struct Progress {
    std::atomic<uint64_t> submissions{0};
    std::atomic<uint64_t> waits{0};
    std::atomic<uint32_t> threads{0};
};

// Writes the report (a no-op without --report). A program calls it once at start with its
// cases marked "crash" (so a run that dies leaves that behind), then once at the end.
void write_report(const std::string& path, const std::vector<CaseResult>& cases);

// The watchdog: from construction, a thread that prints "stress: HANG ...", writes the report
// with the current case marked hang, and aborts once the limit passes, or once the current
// case's counters stood still for the stall limit. `cases` is what the
// report says besides (finished cases, ones not started yet).
class Watchdog {
public:
    Watchdog(const Options& o, const char* program);
    ~Watchdog();  // stops the thread
    // The case now running (its counters feed the message and the report).
    void enter(const std::string& name, Progress* progress, std::vector<CaseResult>* cases, size_t index);
    Watchdog(const Watchdog&) = delete;
    Watchdog& operator=(const Watchdog&) = delete;

private:
    struct State;
    State* s_;
};

// Seconds since the program started (steady clock).
double elapsed_s();

// Prints the one line a case ends with, e.g.
//   stress one_queue: PASS: 8 threads, 2000 submissions (41234/s), 5321 waits, 0.05 s
void print_case(const char* program, const CaseResult& c, double seconds);

// A program of one case: parses the command line, starts the watchdog, writes the "crash"
// report, runs `body` (which fills in everything but the name, and returns the results'
// checksum), counts validation messages as a failure, prints the case's line and
// "checksum: <hex>", writes the report. Returns the exit status: 0 when the case passed.
struct CaseOutcome {
    CaseResult result;
    uint64_t checksum = 0;
};
int run_program(int argc, char** argv, const char* program, const char* case_name, Options& options,
                const std::function<CaseOutcome(const Options&, Progress&)>& body);

}  // namespace stress
