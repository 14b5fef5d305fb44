#!/usr/bin/env bash
# Builds RingKernel with AddressSanitizer and UndefinedBehaviorSanitizer in
# build-asan/ (g++, RK_SANITIZE=address,undefined: every library, actorc and
# test is instrumented) and runs the CPU tests there. Any sanitizer report
# stops the program it is in, so it fails its test.
#   scripts/sanitize.sh [extra cmake arguments...]
# Left out, by CMake (tests/CMakeLists.txt): the ThreadSanitizer tests (TSan
# and ASan do not mix; the regular build runs them) and the installed-package
# test (an application must not inherit sanitizer flags from the package, so
# it could not link the instrumented libraries). The GPU tests are not run
# (-L cpu): scripts/gpu_tests.sh has compute-sanitizer for the device side.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
build=$root/build-asan
log=$build/sanitize-build.log
mkdir -p "$build"
# rkbench (RK_BUILD_BENCH) measures a GPU; no CPU test runs it.
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRK_SANITIZE=address,undefined \
  -DRK_BUILD_BENCH=OFF -DCUDAToolkit_ROOT="${CUDA_HOME:-/usr/local/cuda}" "$@" > "$log" 2>&1 || { cat "$log"; exit 1; }
cmake --build "$build" -j "$(nproc)" >> "$log" 2>&1 || { tail -n 80 "$log"; exit 1; }
echo "sanitize: built build-asan/ with -fsanitize=address,undefined"

export RINGKERNEL_CACHE_DIR=${RINGKERNEL_CACHE_DIR:-$build/test-cache}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
cd "$build"
# The benchmark analysis tests are Python: nothing of theirs is instrumented.
# The tests that compile whole handler programs with NVRTC (HandlersBuild,
# AskStampsBuild) run with leak detection off: in CI, LeakSanitizer's
# end-of-process check crashed in its own tracer thread ("Tracer caught
# signal 11", the same address on each try) after bank.cu's build test had
# passed, while NVRTC's threads were exiting. Address and undefined-behaviour
# checking stay on for them, and leak checking for every other test.
nvrtc_builds='HandlersBuildTest|DiagnosticBuildTest'
ctest --output-on-failure -j "$(nproc)" --timeout 600 -L cpu -E "^bench_analysis_|$nvrtc_builds"
ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0" ctest --output-on-failure -j "$(nproc)" --timeout 600 -L cpu -R "$nvrtc_builds"
