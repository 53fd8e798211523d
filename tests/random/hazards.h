// random_program's hazard model: which buffer each queue's recorded work reads and writes,
// and what has synchronized it since. Pure (no Vulkan); the runner asks it, before every
// command, which barrier or semaphore wait the command needs, and before every host access,
// which work must be complete (and made visible to the host) first.
//
// Positions: every buffer access a queue's work makes gets the next position of that queue's
// stream (1, 2, ...), in submission order (the runner submits a queue's command buffers in the
// order it recorded them). Within a queue, an access is *unsynced* until a barrier (or event)
// whose source stages include its stage covers it; a new access conflicts with an unsynced
// write, or (if it writes) with an unsynced read. Across queues, an access conflicts with the
// other queue's accesses above the position the queue has waited for through a semaphore;
// completion seen by the host is not taken as a device-to-device dependency (the specification
// gives none). For the host: a read needs the buffer's last write on every queue complete and
// followed by a barrier to HOST; a write or a free needs every access complete.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace rnd {

constexpr uint8_t kCompute = 1;
constexpr uint8_t kTransfer = 2;
constexpr uint8_t kAllStages = kCompute | kTransfer;

class HazardModel {
public:
    explicit HazardModel(int queues) : queues_(queues) {
        for (int q = 0; q < queues; ++q) {
            streams_.push_back(Stream{});
            streams_.back().sync_from.assign(size_t(queues), 0);
        }
    }

    int queues() const { return queues_; }
    uint64_t position(int q) const { return streams_[size_t(q)].pos; }
    uint64_t done(int q) const { return streams_[size_t(q)].done; }

    // Stages of the unsynced accesses on q that an access (slot, write) conflicts with; 0: none.
    uint8_t conflict_stages(int q, int slot, bool write) const {
        uint8_t stages = 0;
        const Stream& s = streams_[size_t(q)];
        if (size_t(slot) >= s.slots.size()) return 0;
        for (const Access& a : s.slots[size_t(slot)].unsynced)
            if (a.write || write) stages |= a.stage;
        return stages;
    }
    // Stages of every unsynced access on q (of `slot` only when slot >= 0).
    uint8_t unsynced_stages(int q, int slot = -1) const {
        uint8_t stages = 0;
        const Stream& s = streams_[size_t(q)];
        for (size_t i = 0; i < s.slots.size(); ++i)
            if (slot < 0 || size_t(slot) == i)
                for (const Access& a : s.slots[i].unsynced) stages |= a.stage;
        return stages;
    }

    // A barrier on q whose source stages are `src`: it covers the unsynced accesses of those
    // stages, of every buffer (global) or of `slots` only (buffer barriers).
    // A buffer barrier names its buffers, which must then outlive it like any access: it takes
    // a position of its own, the buffers' last access.
    void barrier(int q, bool global, const std::vector<int>& slots, uint8_t src) {
        Stream& s = streams_[size_t(q)];
        if (!global && !slots.empty()) {
            const uint64_t pos = ++s.pos;
            for (int slot : slots) {
                if (size_t(slot) >= s.slots.size()) s.slots.resize(size_t(slot) + 1);
                s.slots[size_t(slot)].last_access = pos;
            }
        }
        for (size_t i = 0; i < s.slots.size(); ++i) {
            if (!global && std::find(slots.begin(), slots.end(), int(i)) == slots.end()) continue;
            auto& u = s.slots[i].unsynced;
            u.erase(std::remove_if(u.begin(), u.end(), [&](const Access& a) { return (a.stage & src) != 0; }),
                    u.end());
        }
    }
    // A barrier on q to HOST: every write q made so far is visible to the host once the
    // barrier is complete. It takes a position of its own, which host reads then wait for.
    uint64_t host_barrier(int q) {
        Stream& s = streams_[size_t(q)];
        const uint64_t pos = ++s.pos;
        for (Slot& sl : s.slots)
            if (sl.host_pending) {
                sl.host_pending = false;
                sl.host_ready = pos;
            }
        return pos;
    }

    // A position of q's stream with no access: the end of a command buffer, so that a wait for
    // it never counts as a wait for a command buffer that accessed nothing (timestamps only).
    uint64_t mark(int q) { return ++streams_[size_t(q)].pos; }

    // Records an access on q; returns its position.
    uint64_t access(int q, int slot, uint8_t stage, bool write) {
        Stream& s = streams_[size_t(q)];
        if (size_t(slot) >= s.slots.size()) s.slots.resize(size_t(slot) + 1);
        Slot& sl = s.slots[size_t(slot)];
        const uint64_t pos = ++s.pos;
        sl.unsynced.push_back({stage, write});
        sl.last_access = pos;
        if (write) {
            sl.last_write = pos;
            sl.host_pending = true;
        }
        return pos;
    }

    // The position on p (p != q) that q must wait for, through a semaphore, before an access
    // (slot, write); 0 when q's waits already cover it.
    uint64_t cross_needed(int q, int p, int slot, bool write) const {
        const Stream& s = streams_[size_t(p)];
        if (size_t(slot) >= s.slots.size()) return 0;
        const Slot& sl = s.slots[size_t(slot)];
        const uint64_t relevant = write ? sl.last_access : sl.last_write;
        return relevant > streams_[size_t(q)].sync_from[size_t(p)] ? relevant : 0;
    }
    // q's work from now on waits (through a semaphore) for p's up to `pos`.
    void waited(int q, int p, uint64_t pos) {
        uint64_t& f = streams_[size_t(q)].sync_from[size_t(p)];
        f = std::max(f, pos);
    }

    // What must be complete on p before the host reads `slot` (its last write, and the barrier
    // to HOST after it) or writes or frees it (its last access); 0: nothing.
    uint64_t host_read_needs(int p, int slot) const { return pending(p, slot, true); }
    uint64_t host_write_needs(int p, int slot) const { return pending(p, slot, false); }
    // Whether p wrote `slot` since its last barrier to HOST.
    bool host_pending(int p, int slot) const {
        const Stream& s = streams_[size_t(p)];
        return size_t(slot) < s.slots.size() && s.slots[size_t(slot)].host_pending;
    }

    // The host saw p's work up to `pos` complete.
    void completed(int p, uint64_t pos) {
        uint64_t& d = streams_[size_t(p)].done;
        d = std::max(d, pos);
    }

private:
    struct Access {
        uint8_t stage;
        bool write;
    };
    struct Slot {
        std::vector<Access> unsynced;
        uint64_t last_access = 0, last_write = 0;
        bool host_pending = false;
        uint64_t host_ready = 0;  // the barrier to HOST that covers the last write
    };
    struct Stream {
        uint64_t pos = 0, done = 0;
        std::vector<Slot> slots;
        std::vector<uint64_t> sync_from;
    };

    uint64_t pending(int p, int slot, bool writes_only) const {
        const Stream& s = streams_[size_t(p)];
        if (size_t(slot) >= s.slots.size()) return 0;
        const Slot& sl = s.slots[size_t(slot)];
        const uint64_t last = writes_only ? std::max(sl.last_write, sl.host_ready) : sl.last_access;
        return last > s.done ? last : 0;
    }

    int queues_;
    std::vector<Stream> streams_;
};

}  // namespace rnd
