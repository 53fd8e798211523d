// The CPU's hint that a thread is spinning: for the short loops of spin-then-block waits and of
// fusion's wait for a look at a fence to end.
#pragma once

namespace slipstream {

// One CPU hint that we are spinning (no syscall): lets the sibling hyperthread run.
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__) || defined(__arm__)
    asm volatile("yield");
#endif
}

}  // namespace slipstream
