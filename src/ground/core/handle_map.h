// A map from Vulkan handles to layer state, safe to use from any thread.
//
// Every vkCmd* and every submit looks state up here, so lookups must not contend: the map is
// split into shards by handle, each behind its own reader/writer lock, and readers of
// different handles almost never touch the same lock.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>

namespace slipstream {

template <typename Key, typename Value, unsigned kShards = 16>
class HandleMap {
    static_assert(kShards >= 2 && (kShards & (kShards - 1)) == 0, "kShards must be a power of two");
    static constexpr unsigned kShardBits = unsigned(__builtin_ctz(kShards));

public:
    // The state for `key`, or null. The pointer stays valid until `erase(key)`, which the
    // Vulkan object's external synchronization orders after every use of that object.
    Value* find(Key key) const {
        const Shard& s = shard(key);
        std::shared_lock lock(s.mutex);
        auto it = s.map.find(key);
        return it == s.map.end() ? nullptr : it->second.get();
    }

    // Inserts (or replaces) the state for `key` and returns it.
    Value* insert(Key key, std::unique_ptr<Value> value) {
        Shard& s = shard(key);
        std::unique_lock lock(s.mutex);
        Value* raw = value.get();
        s.map[key] = std::move(value);
        return raw;
    }

    // Removes and returns the state for `key` (null if there was none).
    std::unique_ptr<Value> erase(Key key) {
        Shard& s = shard(key);
        std::unique_lock lock(s.mutex);
        auto it = s.map.find(key);
        if (it == s.map.end()) return nullptr;
        std::unique_ptr<Value> out = std::move(it->second);
        s.map.erase(it);
        return out;
    }

    // Calls f(key, value) for every entry, one shard locked at a time.
    template <typename F>
    void for_each(F&& f) const {
        for (const Shard& s : shards_) {
            std::shared_lock lock(s.mutex);
            for (auto& [k, v] : s.map) f(k, *v);
        }
    }

    size_t size() const {
        size_t n = 0;
        for (const Shard& s : shards_) {
            std::shared_lock lock(s.mutex);
            n += s.map.size();
        }
        return n;
    }

    // Removes every entry for which pred(value) is true.
    template <typename Pred>
    void erase_if(Pred&& pred) {
        for (Shard& s : shards_) {
            std::unique_lock lock(s.mutex);
            for (auto it = s.map.begin(); it != s.map.end();) {
                if (pred(*it->second)) it = s.map.erase(it);
                else ++it;
            }
        }
    }

private:
    struct alignas(64) Shard {
        mutable std::shared_mutex mutex;
        std::unordered_map<Key, std::unique_ptr<Value>> map;
    };

    static uint64_t bits(Key key) {
        if constexpr (std::is_pointer_v<Key>) return reinterpret_cast<uintptr_t>(key);
        else return static_cast<uint64_t>(key);
    }
public:
    // Handles are aligned pointers or driver cookies: mix the bits (Fibonacci hashing) and take
    // the top log2(kShards) of them, so every shard is used.
    static unsigned shard_index(Key key) {
        uint64_t v = bits(key) * 0x9E3779B97F4A7C15ull;
        return unsigned(v >> (64 - kShardBits));
    }

private:
    Shard& shard(Key key) { return shards_[shard_index(key)]; }
    const Shard& shard(Key key) const { return shards_[shard_index(key)]; }

    Shard shards_[kShards];
};

// A lock-free table in front of a HandleMap for handles that are few and looked up by every
// call (devices: every hook finds its device). A HandleMap lookup takes its shard's shared
// lock, two atomic read-modify-writes on a cache line every thread shares; here a lookup is a
// few acquire loads. Holds pointers it does not own; a handle that finds no free slot is left
// to the map behind it (find() then answers null and the caller asks the map).
template <typename Value, unsigned kSlots = 16>
class FewHandles {
public:
    Value* find(const void* key) const {
        for (const Slot& s : slots_)
            if (s.key.load(std::memory_order_acquire) == key) return s.value.load(std::memory_order_relaxed);
        return nullptr;
    }
    // The value is published before its key (a slot is reserved first, so that two inserts
    // never write one slot's value).
    void insert(const void* key, Value* value) {
        erase(key);  // never two slots for one key (the map behind replaces its entry too)
        for (Slot& s : slots_) {
            const void* none = nullptr;
            if (!s.key.compare_exchange_strong(none, kReserved, std::memory_order_acquire)) continue;
            s.value.store(value, std::memory_order_relaxed);
            s.key.store(key, std::memory_order_release);
            return;
        }
    }
    // Before the value goes: no lookup of `key` may be made from then on (the handle is being
    // destroyed, which external synchronization orders after every use of it).
    void erase(const void* key) {
        for (Slot& s : slots_) {
            if (s.key.load(std::memory_order_relaxed) != key) continue;
            s.value.store(nullptr, std::memory_order_relaxed);
            s.key.store(nullptr, std::memory_order_release);
        }
    }

private:
    static inline const void* const kReserved = reinterpret_cast<const void*>(uintptr_t(1));
    struct Slot {
        std::atomic<const void*> key{nullptr};
        std::atomic<Value*> value{nullptr};
    };
    Slot slots_[kSlots];
};

// A direct-mapped cache in front of a HandleMap for handles that are many and looked up by
// every call (command buffers: every vkCmd*, begin, end and submit finds its state). A hit is
// four loads and no write to a shared cache line; a miss asks the map, then remembers the
// answer. Each slot is a sequence lock: a writer makes its count odd, writes, makes it even;
// a reader takes the key and value only when the count was the same even number before and
// after. Holds pointers it does not own.
//
// Lookups of a handle are ordered after its insert and before its erase by the Vulkan object's
// external synchronization, so a value read for a key is that key's, alive for the call. An
// erase must clear the slot (it waits for a writer there); a remember may skip a busy slot.
template <typename Value, unsigned kSlots = 4096>
class HandleCache {
    static_assert(kSlots >= 2 && (kSlots & (kSlots - 1)) == 0, "kSlots must be a power of two");

public:
    Value* find(const void* key) const {
        const Slot& s = slot(key);
        const uint32_t before = s.seq.load(std::memory_order_acquire);
        if (before & 1u) return nullptr;
        // (Acquire loads, no fence: ThreadSanitizer does not follow fences. They keep the second
        // count read after them, and a key or value a writer stored after making the count odd
        // makes that odd count visible to it.)
        const void* k = s.key.load(std::memory_order_acquire);
        Value* v = s.value.load(std::memory_order_acquire);
        if (s.seq.load(std::memory_order_relaxed) != before || k != key) return nullptr;
        return v;
    }
    // After a miss the map answered: the slot holds `key` from now on (unless a writer has it).
    void remember(const void* key, Value* value) {
        Slot& s = slot(key);
        uint32_t seq = s.seq.load(std::memory_order_relaxed);
        if ((seq & 1u) || !s.seq.compare_exchange_strong(seq, seq + 1, std::memory_order_acquire)) return;
        write(s, seq, key, value);
    }
    // Before the value goes: the slot forgets `key`.
    void erase(const void* key) {
        Slot& s = slot(key);
        const uint32_t seq = lock(s);
        if (s.key.load(std::memory_order_relaxed) == key) write(s, seq, nullptr, nullptr);
        else s.seq.store(seq + 2, std::memory_order_release);
    }
    // Every slot forgets (many handles went at once: a device's).
    void clear() {
        for (Slot& s : slots_) write(s, lock(s), nullptr, nullptr);
    }

private:
    struct Slot {
        std::atomic<uint32_t> seq{0};
        std::atomic<const void*> key{nullptr};
        std::atomic<Value*> value{nullptr};
    };
    static uint32_t lock(Slot& s) {
        for (;;) {
            uint32_t seq = s.seq.load(std::memory_order_relaxed);
            if (!(seq & 1u) && s.seq.compare_exchange_weak(seq, seq + 1, std::memory_order_acquire)) return seq;
        }
    }
    // With the slot locked at `seq` (made odd): writes and unlocks.
    static void write(Slot& s, uint32_t seq, const void* key, Value* value) {
        s.key.store(key, std::memory_order_release);
        s.value.store(value, std::memory_order_release);
        s.seq.store(seq + 2, std::memory_order_release);
    }
    const Slot& slot(const void* key) const { return slots_[index(key)]; }
    Slot& slot(const void* key) { return slots_[index(key)]; }
    static unsigned index(const void* key) {
        return unsigned((uint64_t(reinterpret_cast<uintptr_t>(key)) * 0x9E3779B97F4A7C15ull) >> 40) & (kSlots - 1);
    }
    Slot slots_[kSlots];
};

}  // namespace slipstream
