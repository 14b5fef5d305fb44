#!/usr/bin/env bash
# Builds every standalone probe under bench/probes/ — the .cu ones for
# sm_90, the host-only .cc ones with the host compiler — warnings as errors,
# so that they keep building as the headers they include change. (Running
# the .cu ones needs a GPU: see each probe's header and bench/NOTES.md.)
#   scripts/build_probes.sh [NVCC] [OUT_DIR] [CXX]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
nvcc="${1:-${CUDA_HOME:-/usr/local/cuda}/bin/nvcc}"
out="${2:-$(mktemp -d)}"
mkdir -p "$out"
status=0
for probe in "$root"/bench/probes/*.cu; do
  name="$(basename "$probe" .cu)"
  if "$nvcc" -O2 -arch=sm_90 -Werror all-warnings -Xcompiler -Wall,-Wextra,-Wno-unknown-pragmas,-Werror \
       -I "$root/include" -o "$out/$name" "$probe"; then
    echo "probe $name: built"
  else
    echo "probe $name: FAILED to build" >&2
    status=1
  fi
done
# Host-only probes (no GPU): C++ with the host compiler.
cxx="${3:-${CXX:-g++}}"
for probe in "$root"/bench/probes/*.cc; do
  name="$(basename "$probe" .cc)"
  if "$cxx" -O2 -std=c++20 -Wall -Wextra -Werror -I "$root/include" -o "$out/$name" "$probe"; then
    echo "probe $name: built"
  else
    echo "probe $name: FAILED to build" >&2
    status=1
  fi
done
exit $status
