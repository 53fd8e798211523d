/* Test-only, sanitizer builds only: preloaded (LD_PRELOAD) into every process of the
 * AddressSanitizer test stage (tools/test.sh), Python drivers and the programs they start alike.
 *
 * dlclose does nothing, so every library a process loads stays mapped until exit. The Vulkan
 * loader unloads drivers and layers at vkDestroyInstance; LeakSanitizer checks at exit, and by
 * then an unloaded library's leaks show as "<unknown module>", which no suppression can match by
 * library name, and memory held only by its globals looks leaked. Debian 12's loader (1.3.239)
 * has no setting to keep libraries loaded.
 *
 * This library is built without sanitizer flags and links nothing but libc, so uninstrumented
 * processes (python3, cmake) get no ASan runtime from it; instrumented programs load theirs right
 * after it, which is why the stage sets verify_asan_link_order=0. Never installed. */
#include <dlfcn.h>

int dlclose(void* handle) {
    (void)handle;
    return 0;
}
