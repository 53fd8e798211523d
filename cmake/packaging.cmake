# The Debian package, built by CPack from a build tree:
#
#     cpack --config build/CPackConfig.cmake -B out      (or: cmake --build build --target package)
#
# writes vulkan-layer-slipstream_<version>_<arch>.deb holding what `cmake --install` installs,
# under /usr: the layer (lib/<multiarch>/slipstream/libVkLayer_slipstream.so), both manifests
# (share/vulkan/{explicit,implicit}_layer.d, library path relative to themselves), the
# slipstream command (bin/slipstream), its module (share/slipstream/slipstream_env.py) and
# slipstream-info (libexec/slipstream). No maintainer scripts: dpkg alone puts the files in
# place and takes them away again. tests/install/install_test.py installs it into a clean root.
#
# The name says what it is: "slipstream" alone is a name other software uses too, and
# vulkan-layer-slipstream sorts and searches with the other Vulkan layers; the command keeps
# the short name.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME vulkan-layer-slipstream)
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
set(CPACK_PACKAGE_VENDOR Slipstream)
set(SLIPSTREAM_PACKAGE_MAINTAINER "Slipstream maintainers <maintainers@users.noreply.a-seed-15080274.example>"
    CACHE STRING "The Debian package's Maintainer field")
set(CPACK_PACKAGE_CONTACT "${SLIPSTREAM_PACKAGE_MAINTAINER}")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Vulkan layer that cuts the fixed cost of small GPU operations")
set(CPACK_PACKAGE_DESCRIPTION "Slipstream (VK_LAYER_slipstream) makes small GPU operations cheaper in unmodified Vulkan applications: it fuses small command buffers into few submissions, narrows ALL_COMMANDS barriers, spins briefly before blocking waits, moves readback memory to cached memory and recycles fences, timeline semaphores and memory allocations. Enable it with ENABLE_SLIPSTREAM=1 (implicit manifest) or VK_INSTANCE_LAYERS=VK_LAYER_slipstream, or run a program under `slipstream run`.")
# Debian's own Vulkan layers and drivers (vulkan-validationlayers, mesa-vulkan-drivers) are in libs.
set(CPACK_DEBIAN_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_STRIP_FILES ON)
# The loader (libvulkan1) loads the layer and slipstream-info links it; python3 runs the
# slipstream command. dpkg-shlibdeps (dpkg-dev) adds the C and C++ runtimes with the versions
# this build needs, and libvulkan1's; without it they are named here, unversioned.
find_program(SLIPSTREAM_DPKG_SHLIBDEPS dpkg-shlibdeps)
if(SLIPSTREAM_DPKG_SHLIBDEPS)
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
  set(CPACK_DEBIAN_PACKAGE_DEPENDS "python3")
else()
  message(STATUS "packaging: no dpkg-shlibdeps (dpkg-dev): the package's Depends are unversioned")
  set(CPACK_DEBIAN_PACKAGE_DEPENDS "libvulkan1, python3, libc6, libstdc++6, libgcc-s1")
endif()
# `slipstream run --validation` stacks the Khronos validation layer under Slipstream.
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "vulkan-validationlayers")
include(CPack)
