// The memory of one command buffer's capture: bump allocation in blocks that grow from 4 KiB
// to 256 KiB, a dedicated block for anything larger than half a block, and a limit on the
// whole (a capture that outgrows it stops capturing instead of eating the heap).
//
// Command buffers are externally synchronized, so the arena needs no lock. Everything it
// hands out is freed together: reset() keeps one block for the next recording (a command
// buffer re-recorded every frame allocates nothing in steady state), release() keeps none.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>

namespace slipstream::capture {

class CaptureArena {
public:
    static constexpr size_t kFirstBlock = 4 * 1024;
    static constexpr size_t kMaxBlock = 256 * 1024;
    static constexpr size_t kDefaultLimit = 16 * 1024 * 1024;
    static constexpr size_t kMaxAlign = alignof(std::max_align_t);

    explicit CaptureArena(size_t limit = kDefaultLimit) : limit_(limit) {}
    ~CaptureArena() { release(); }
    CaptureArena(const CaptureArena&) = delete;
    CaptureArena& operator=(const CaptureArena&) = delete;

    // `size` bytes aligned to `align` (a power of two, at most kMaxAlign), or null once the
    // limit is reached or the heap refuses; exhausted() then stays true until reset.
    void* allocate(size_t size, size_t align);

    template <typename T>
    T* allocate_array(uint64_t count) {
        static_assert(alignof(T) <= kMaxAlign, "over-aligned types are not captured");
        if (count > std::numeric_limits<size_t>::max() / sizeof(T)) {
            exhausted_ = true;
            return nullptr;
        }
        return static_cast<T*>(allocate(size_t(count) * sizeof(T), alignof(T)));
    }

    // Forgets every allocation; keeps the largest ordinary block for reuse.
    void reset();
    // Forgets every allocation and frees every block.
    void release();

    bool exhausted() const { return exhausted_; }
    size_t used() const { return used_; }          // bytes handed out, with alignment padding
    size_t reserved() const { return reserved_; }  // bytes of the blocks held (headers too)
    size_t blocks() const;
    size_t limit() const { return limit_; }

private:
    struct Block {
        Block* next;
        size_t size;  // bytes of the whole block, header included
    };
    static constexpr size_t kHeader = (sizeof(Block) + kMaxAlign - 1) & ~(kMaxAlign - 1);

    Block* new_block(size_t size);
    void* allocate_dedicated(size_t size);

    Block* blocks_ = nullptr;   // the current block first, then older and dedicated ones
    char* cursor_ = nullptr;    // free space of the current block
    char* end_ = nullptr;
    size_t next_size_ = kFirstBlock;
    size_t used_ = 0;
    size_t reserved_ = 0;
    size_t limit_;
    bool exhausted_ = false;
};

}  // namespace slipstream::capture
