#include "capture/capture_arena.h"

#include <cstdlib>

namespace slipstream::capture {

CaptureArena::Block* CaptureArena::new_block(size_t size) {
    if (reserved_ + size > limit_ || reserved_ + size < reserved_) return nullptr;
    auto* block = static_cast<Block*>(std::malloc(size));
    if (!block) return nullptr;
    block->size = size;
    reserved_ += size;
    return block;
}

void* CaptureArena::allocate_dedicated(size_t size) {
    Block* block = new_block(kHeader + size);
    if (!block) return nullptr;
    // Behind the current block, so the current block's free space stays in use.
    if (blocks_) {
        block->next = blocks_->next;
        blocks_->next = block;
    } else {
        block->next = nullptr;
        blocks_ = block;
        cursor_ = end_ = reinterpret_cast<char*>(block) + block->size;
    }
    used_ += size;
    return reinterpret_cast<char*>(block) + kHeader;
}

void* CaptureArena::allocate(size_t size, size_t align) {
    if (exhausted_) return nullptr;
    if (size == 0) size = 1;  // every allocation gets its own address
    auto here = reinterpret_cast<uintptr_t>(cursor_);
    uintptr_t aligned = (here + (align - 1)) & ~uintptr_t(align - 1);
    if (cursor_ && aligned + size <= reinterpret_cast<uintptr_t>(end_)) {
        used_ += size + (aligned - here);
        cursor_ = reinterpret_cast<char*>(aligned + size);
        return reinterpret_cast<void*>(aligned);
    }
    void* out = nullptr;
    if (size > kMaxBlock / 2) {
        out = allocate_dedicated(size);
    } else {
        size_t want = next_size_;
        while (want - kHeader < size) want *= 2;
        if (Block* block = new_block(want)) {
            block->next = blocks_;
            blocks_ = block;
            if (next_size_ < kMaxBlock) next_size_ *= 2;
            cursor_ = reinterpret_cast<char*>(block) + kHeader;  // kMaxAlign-aligned
            end_ = reinterpret_cast<char*>(block) + block->size;
            used_ += size;
            out = cursor_;
            cursor_ += size;
        }
    }
    if (!out) exhausted_ = true;
    return out;
}

size_t CaptureArena::blocks() const {
    size_t n = 0;
    for (Block* b = blocks_; b; b = b->next) ++n;
    return n;
}

void CaptureArena::reset() {
    Block* keep = nullptr;
    for (Block* b = blocks_; b;) {
        Block* next = b->next;
        if (b->size <= kMaxBlock && (!keep || b->size > keep->size)) {
            if (keep) {
                reserved_ -= keep->size;
                std::free(keep);
            }
            keep = b;
        } else {
            reserved_ -= b->size;
            std::free(b);
        }
        b = next;
    }
    blocks_ = keep;
    used_ = 0;
    exhausted_ = false;
    if (keep) {
        keep->next = nullptr;
        cursor_ = reinterpret_cast<char*>(keep) + kHeader;
        end_ = reinterpret_cast<char*>(keep) + keep->size;
        next_size_ = keep->size < kMaxBlock ? keep->size * 2 : kMaxBlock;
    } else {
        cursor_ = end_ = nullptr;
        next_size_ = kFirstBlock;
    }
}

void CaptureArena::release() {
    for (Block* b = blocks_; b;) {
        Block* next = b->next;
        std::free(b);
        b = next;
    }
    blocks_ = nullptr;
    cursor_ = end_ = nullptr;
    next_size_ = kFirstBlock;
    used_ = reserved_ = 0;
    exhausted_ = false;
}

}  // namespace slipstream::capture
