#!/usr/bin/env bash
# Sets up, builds and runs every RingKernel test: the CPU tests (parser,
# codegen, real NVRTC compiles for sm_89 and sm_90, packages, cache, codec,
# actorc, the protocol core under ThreadSanitizer) and the GPU tests, which
# skip with the reason when there is no CUDA device.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
export RINGKERNEL_CACHE_DIR=${RINGKERNEL_CACHE_DIR:-$root/build/test-cache}
cd "$root/build"
ctest --output-on-failure -j "$(nproc)" --timeout 600
