#!/usr/bin/env bash
# Configures and builds RingKernel in build/ (warnings are errors).
#   scripts/build.sh [extra cmake arguments...]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cuda=${CUDA_HOME:-/usr/local/cuda}
cmake -S "$root" -B "$root/build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCUDAToolkit_ROOT="$cuda" "$@" > "$root/build.log" 2>&1 || { cat "$root/build.log"; exit 1; }
cmake --build "$root/build" -j "$(nproc)" 2>&1 | tail -n 3
