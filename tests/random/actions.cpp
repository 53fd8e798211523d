#include "actions.h"

namespace rnd {

const char* kind_name(Kind k) {
    switch (k) {
        case Kind::dispatch: return "dispatch";
        case Kind::copy: return "copy";
        case Kind::fill: return "fill";
        case Kind::update: return "update";
        case Kind::barrier: return "barrier";
        case Kind::timestamp: return "timestamp";
        case Kind::end_cb: return "end_cb";
        case Kind::submit: return "submit";
        case Kind::queue: return "queue";
        case Kind::host_read: return "host_read";
        case Kind::host_write: return "host_write";
        case Kind::read_back: return "read_back";
        case Kind::wait: return "wait";
        case Kind::realloc: return "realloc";
        case Kind::resubmit: return "resubmit";
    }
    return "?";
}

uint32_t random_words(Rng& rng) {
    static const uint32_t sizes[] = {64, 256, 1000, 1024, 4096, 6000};
    return sizes[rng.below(sizeof(sizes) / sizeof(sizes[0]))];
}

Program generate(uint64_t seed, uint32_t ops) {
    Rng rng(seed * 0x2545f4914f6cdd1dull + 0x1234567ull);
    Program p;
    const uint32_t slots = 4 + rng.below(5);  // 4..8 buffers
    for (uint32_t i = 0; i < slots; ++i) {
        SlotSpec s;
        // The first two are host-visible, the third device-local; the rest either.
        s.host_visible = i < 2 ? true : i == 2 ? false : rng.chance(50);
        s.cached = s.host_visible && rng.chance(40);
        s.words = random_words(rng);
        p.slots.push_back(s);
    }
    struct Weight {
        Kind kind;
        uint32_t weight;
    };
    static const Weight weights[] = {
        {Kind::dispatch, 20}, {Kind::copy, 10},     {Kind::fill, 5},       {Kind::update, 5},
        {Kind::barrier, 5},   {Kind::timestamp, 3}, {Kind::end_cb, 7},     {Kind::submit, 10},
        {Kind::queue, 4},     {Kind::host_read, 5}, {Kind::host_write, 4}, {Kind::read_back, 3},
        {Kind::wait, 5},      {Kind::realloc, 2},   {Kind::resubmit, 5},
    };
    uint32_t total = 0;
    for (const Weight& w : weights) total += w.weight;
    for (uint32_t i = 0; i < ops; ++i) {
        uint32_t pick = rng.below(total);
        Kind kind = Kind::dispatch;
        for (const Weight& w : weights) {
            if (pick < w.weight) {
                kind = w.kind;
                break;
            }
            pick -= w.weight;
        }
        p.actions.push_back({kind, rng.next()});
    }
    return p;
}

}  // namespace rnd
