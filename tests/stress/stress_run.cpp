#include "stress_run.h"

#include "vk_app.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>

namespace stress {

namespace {
const auto g_start = std::chrono::steady_clock::now();

[[noreturn]] void usage(const char* argv0, const Options& o) {
    std::fprintf(stderr,
                 "usage: %s [--submissions N] [--seconds S] [--threads T] [--watchdog S] [--stall S] [--report FILE]",
                 argv0);
    for (const Options::Extra& e : o.extras) std::fprintf(stderr, " [--%s N]", e.name);
    std::fprintf(stderr, "\n");
    for (const Options::Extra& e : o.extras)
        std::fprintf(stderr, "  --%s: %s (default %llu)\n", e.name, e.help, static_cast<unsigned long long>(e.value));
    std::exit(2);
}

bool parse_number(const char* text, double* out) {
    char* end = nullptr;
    *out = std::strtod(text, &end);
    return end && end != text && *end == 0 && *out >= 0;
}

std::string json_escape(const std::string& s) {
    std::string out;
    for (char c : s) {
        if (c == '"' || c == '\\') out += '\\';
        if (static_cast<unsigned char>(c) < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", c);
            out += buf;
        } else {
            out += c;
        }
    }
    return out;
}
}  // namespace

double elapsed_s() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - g_start).count();
}

uint64_t Options::extra(const char* name) const {
    for (const Extra& e : extras)
        if (std::strcmp(e.name, name) == 0) return e.value;
    std::fprintf(stderr, "stress: no option --%s declared\n", name);
    std::abort();
}

void parse(int argc, char** argv, Options& o) {
    for (int i = 1; i < argc; ++i) {
        const char* a = argv[i];
        if (std::strcmp(a, "--report") == 0 && i + 1 < argc) {
            o.report = argv[++i];
            continue;
        }
        double v = 0;
        if (std::strncmp(a, "--", 2) != 0 || i + 1 >= argc || !parse_number(argv[i + 1], &v)) usage(argv[0], o);
        ++i;
        if (std::strcmp(a, "--submissions") == 0 && v >= 1) o.submissions = uint64_t(v);
        else if (std::strcmp(a, "--seconds") == 0) o.seconds = v;
        else if (std::strcmp(a, "--threads") == 0 && v >= 1 && v <= 256) o.threads = uint32_t(v);
        else if (std::strcmp(a, "--watchdog") == 0 && v > 0) o.watchdog_s = v;
        else if (std::strcmp(a, "--stall") == 0 && v > 0) o.stall_s = v;
        else {
            bool known = false;
            for (Options::Extra& e : o.extras)
                if (std::strcmp(a + 2, e.name) == 0) {
                    e.value = uint64_t(v);
                    known = true;
                }
            if (!known) usage(argv[0], o);
        }
    }
    if (o.watchdog_s == 0) o.watchdog_s = o.seconds > 0 ? o.seconds + 60 : 45 + double(o.submissions) / 500;
}

void write_report(const std::string& path, const std::vector<CaseResult>& cases) {
    if (path.empty()) return;
    const std::string tmp = path + ".tmp";
    FILE* f = std::fopen(tmp.c_str(), "w");
    if (!f) {
        std::fprintf(stderr, "stress: cannot write the report %s\n", tmp.c_str());
        return;
    }
    std::fprintf(f, "{\"kind\": \"threads\", \"cases\": [");
    for (size_t i = 0; i < cases.size(); ++i) {
        const CaseResult& c = cases[i];
        std::fprintf(f,
                     "%s\n  {\"name\": \"%s\", \"passed\": %s, \"hang\": %s, \"crash\": %s, \"wrong_result\": %s, "
                     "\"detail\": \"%s\", \"threads\": %llu, \"submissions\": %llu, \"waits\": %llu}",
                     i ? "," : "", json_escape(c.name).c_str(), c.passed ? "true" : "false",
                     c.hang ? "true" : "false", c.crash ? "true" : "false", c.wrong_result ? "true" : "false",
                     json_escape(c.detail).c_str(), static_cast<unsigned long long>(c.threads),
                     static_cast<unsigned long long>(c.submissions), static_cast<unsigned long long>(c.waits));
    }
    std::fprintf(f, "\n]}\n");
    std::fclose(f);
    std::rename(tmp.c_str(), path.c_str());  // whole or not at all, even if a watchdog races it
}

struct Watchdog::State {
    std::mutex mutex;
    std::condition_variable cv;
    bool stop = false;
    std::string program, report, name;
    Progress* progress = nullptr;
    std::vector<CaseResult>* cases = nullptr;
    size_t index = 0;
    double limit_s = 0, stall_s = 0;
    std::thread thread;
};

Watchdog::Watchdog(const Options& o, const char* program) : s_(new State) {
    s_->program = program;
    s_->report = o.report;
    s_->limit_s = o.watchdog_s;
    s_->stall_s = o.stall_s;
    s_->thread = std::thread([s = s_] {
        std::unique_lock lock(s->mutex);
        using Clock = std::chrono::steady_clock;
        const Clock::time_point deadline =
            g_start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s->limit_s));
        uint64_t last = UINT64_MAX;
        double still_since = elapsed_s();
        bool stalled = false;
        for (;;) {
            const Clock::time_point next = std::min(deadline, Clock::time_point(Clock::now() + std::chrono::seconds(1)));
            if (s->cv.wait_until(lock, next, [s] { return s->stop; })) return;
            if (Clock::now() >= deadline) break;
            const uint64_t now = s->progress ? s->progress->submissions.load() + s->progress->waits.load() : 0;
            if (now != last || !s->progress) {
                last = now;
                still_since = elapsed_s();
            } else if (elapsed_s() - still_since >= s->stall_s) {
                stalled = true;
                break;
            }
        }
        const uint64_t subs = s->progress ? s->progress->submissions.load() : 0;
        const uint64_t waits = s->progress ? s->progress->waits.load() : 0;
        char why[96];
        if (stalled) std::snprintf(why, sizeof why, "made no submission and no wait for %g s", s->stall_s);
        else std::snprintf(why, sizeof why, "did not finish within the watchdog's %g s", s->limit_s);
        std::fprintf(stderr, "stress %s: HANG: case %s %s (%llu submissions and %llu waits made so far); aborting\n",
                     s->program.c_str(), s->name.empty() ? "(setup)" : s->name.c_str(), why,
                     static_cast<unsigned long long>(subs), static_cast<unsigned long long>(waits));
        if (s->cases && s->index < s->cases->size()) {
            CaseResult& c = (*s->cases)[s->index];
            c.passed = false;
            c.hang = true;
            c.crash = false;
            c.submissions = subs;
            c.waits = waits;
            c.threads = s->progress ? s->progress->threads.load() : 0;
            c.detail = std::string("hang: ") + why;
            write_report(s->report, *s->cases);
        }
        std::fflush(stdout);
        std::abort();
    });
}

Watchdog::~Watchdog() {
    {
        std::lock_guard lock(s_->mutex);
        s_->stop = true;
    }
    s_->cv.notify_one();
    s_->thread.join();
    delete s_;
}

void Watchdog::enter(const std::string& name, Progress* progress, std::vector<CaseResult>* cases, size_t index) {
    std::lock_guard lock(s_->mutex);
    s_->name = name;
    s_->progress = progress;
    s_->cases = cases;
    s_->index = index;
}

void print_case(const char* program, const CaseResult& c, double seconds) {
    std::printf("stress %s %s: %s: %llu threads, %llu submissions (%.0f/s), %llu waits, %.2f s%s%s\n", program,
                c.name.c_str(), c.passed ? "PASS" : "FAIL", static_cast<unsigned long long>(c.threads),
                static_cast<unsigned long long>(c.submissions), seconds > 0 ? double(c.submissions) / seconds : 0.0,
                static_cast<unsigned long long>(c.waits), seconds, c.detail.empty() ? "" : ": ", c.detail.c_str());
    std::fflush(stdout);
}

int run_program(int argc, char** argv, const char* program, const char* case_name, Options& options,
                const std::function<CaseOutcome(const Options&, Progress&)>& body) {
    parse(argc, argv, options);
    std::vector<CaseResult> cases(1);
    cases[0].name = case_name;
    cases[0].crash = true;
    cases[0].detail = "did not finish: crashed or was killed";
    write_report(options.report, cases);
    Progress progress;
    Watchdog watchdog(options, program);
    watchdog.enter(case_name, &progress, &cases, 0);
    const double start = elapsed_s();
    CaseOutcome out = body(options, progress);
    const double seconds = elapsed_s() - start;
    out.result.name = case_name;
    if (const int messages = vkapp::g_validation_messages.load()) {
        out.result.passed = false;
        if (out.result.detail.empty()) out.result.detail = std::to_string(messages) + " validation message(s)";
    }
    watchdog.enter(case_name, nullptr, nullptr, 0);  // done: the report below is the last word
    cases[0] = out.result;
    print_case(program, out.result, seconds);
    std::printf("checksum: %016llx\n", static_cast<unsigned long long>(out.checksum));
    std::fflush(stdout);
    write_report(options.report, cases);
    return out.result.passed ? 0 : 1;
}

}  // namespace stress
