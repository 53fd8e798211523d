// Test-only, AddressSanitizer builds only: the one extra object file of
// VkLayer_slipstream_leak_canary, which is otherwise the real layer built from layer/'s own
// sources (tests/sanitizers/CMakeLists.txt). It is never linked into the real layer.
//
// The canary layer is linked with --wrap=getenv, so the layer's getenv calls come here. The first
// one for a VK_SLIPSTREAM_ setting (read_settings, in the layer's vkCreateInstance, called by the
// loader) leaks one block of kCanaryLeakBytes: a leak in Slipstream's own code, reached through
// the loader like every hook, that LeakSanitizer must report against this library even with
// tests/sanitizers/lsan.supp in effect. leak_canary_test.py checks that it does.
#include <atomic>
#include <cstdlib>
#include <cstring>

namespace {
constexpr std::size_t kCanaryLeakBytes = 4321;  // leak_canary_test.py looks for this size
void* volatile g_sink;
}  // namespace

extern "C" {
char* __real_getenv(const char* name);
// Declared first: the canary is built with the layer's flags, -Wmissing-declarations among them.
void slipstream_leak_canary_allocate();
char* __wrap_getenv(const char* name);

__attribute__((noinline)) void slipstream_leak_canary_allocate() {
    g_sink = std::malloc(kCanaryLeakBytes);
    std::memset(g_sink, 0x5a, kCanaryLeakBytes);
    g_sink = nullptr;  // the only pointer to the block is gone: a direct leak
}

char* __wrap_getenv(const char* name) {
    static std::atomic<bool> leaked{false};
    if (std::strncmp(name, "VK_SLIPSTREAM_", 14) == 0 && !leaked.exchange(true)) slipstream_leak_canary_allocate();
    return __real_getenv(name);
}
}
