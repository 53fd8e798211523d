#!/usr/bin/env bash
# Installs what Slipstream needs on Debian 12 (apt-get, as root; skipped when already there)
# and builds it into build/ (or $1, with extra CMake arguments after it).
set -euo pipefail
cd "$(dirname "$0")/.."
packages=(cmake ninja-build g++ python3 libvulkan-dev vulkan-tools vulkan-validationlayers
          vulkan-validationlayers-dev mesa-vulkan-drivers glslang-tools libgtest-dev
          dpkg-dev file mangohud vkbasalt ffmpeg xvfb xauth)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "bootstrap: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${missing[@]}" >/dev/null
fi
build=${1:-build}
shift || true
cmake -S . -B "$build" -G Ninja "$@" >/dev/null
cmake --build "$build"
