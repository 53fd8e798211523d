// A preload (LD_PRELOAD) that samples the process's malloc heap (mallinfo2: bytes in use in
// arenas plus mmapped chunks) every SLIPSTREAM_HEAP_INTERVAL_MS (default 50) and writes, at exit,
// to SLIPSTREAM_HEAP_LOG: {"samples": N, "peak": B, "end": B, "series": [[ms, B], ...]} with at
// most 256 points (every other one dropped when full). The reliability report runs a long stress
// program with and without Slipstream under it: the difference is Slipstream's heap (and the
// driver's for Slipstream's objects), and its growth from half time to the end says whether it
// is bounded. Not instrumented, never installed.
#define _GNU_SOURCE
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

enum { kMaxPoints = 256 };
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long long series_ms[kMaxPoints], series_bytes[kMaxPoints];
static unsigned points, stride = 1, since_kept;
static unsigned long long samples, peak, last;
static struct timespec start;
static atomic_int stop;
static pthread_t sampler;
static int running;

static unsigned long long now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (unsigned long long)(t.tv_sec - start.tv_sec) * 1000ull + (unsigned long long)(t.tv_nsec / 1000000) -
           (unsigned long long)(start.tv_nsec / 1000000);
}

static void sample(void) {
    const struct mallinfo2 m = mallinfo2();
    const unsigned long long used = (unsigned long long)(m.uordblks + m.hblkhd);
    pthread_mutex_lock(&lock);
    ++samples;
    last = used;
    if (used > peak) peak = used;
    if (++since_kept >= stride) {
        since_kept = 0;
        if (points == kMaxPoints) {  // keep every other point, sample half as often from now on
            for (unsigned i = 0; i < kMaxPoints / 2; ++i) {
                series_ms[i] = series_ms[2 * i];
                series_bytes[i] = series_bytes[2 * i];
            }
            points = kMaxPoints / 2;
            stride *= 2;
        }
        series_ms[points] = now_ms();
        series_bytes[points] = used;
        ++points;
    }
    pthread_mutex_unlock(&lock);
}

static void* run(void* arg) {
    const long interval_ms = (long)(size_t)arg;
    const struct timespec pause = {interval_ms / 1000, (interval_ms % 1000) * 1000000L};
    while (!atomic_load(&stop)) {
        sample();
        nanosleep(&pause, NULL);
    }
    return NULL;
}

__attribute__((constructor)) static void heap_sampler_start(void) {
    if (!getenv("SLIPSTREAM_HEAP_LOG")) return;
    clock_gettime(CLOCK_MONOTONIC, &start);
    long interval_ms = 50;
    const char* text = getenv("SLIPSTREAM_HEAP_INTERVAL_MS");
    if (text) {
        const long v = strtol(text, NULL, 10);
        if (v >= 1 && v <= 60000) interval_ms = v;
    }
    running = pthread_create(&sampler, NULL, run, (void*)(size_t)interval_ms) == 0;
}

__attribute__((destructor)) static void heap_sampler_end(void) {
    const char* path = getenv("SLIPSTREAM_HEAP_LOG");
    if (!path || !running) return;
    atomic_store(&stop, 1);
    pthread_join(sampler, NULL);
    sample();  // the end, after the program's own teardown
    FILE* f = fopen(path, "w");
    if (!f) return;
    pthread_mutex_lock(&lock);
    fprintf(f, "{\"samples\": %llu, \"peak\": %llu, \"end\": %llu, \"series\": [", samples, peak, last);
    for (unsigned i = 0; i < points; ++i)
        fprintf(f, "%s[%llu, %llu]", i ? ", " : "", series_ms[i], series_bytes[i]);
    fprintf(f, "]}\n");
    pthread_mutex_unlock(&lock);
    fclose(f);
}
