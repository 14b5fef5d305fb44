#!/usr/bin/env bash
# The main job: set up, build, compile the example handlers with actorc (a
# package each, inspected, with a typed host header), then run each example's
# script on the GPU. Without a GPU it does everything that needs none and
# says so (exit status 2).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
actorc="$root/build/tools/actorc"
out="$root/build/examples"
mkdir -p "$out"
for name in bank pingpong reduce; do
  echo "== actorc build handlers/$name.cu"
  "$actorc" build "$root/handlers/$name.cu" -o "$out/$name.rkpkg" --timings
  "$actorc" header "$out/$name.rkpkg" -o "$out/$name.h" > /dev/null
done
echo "== actorc inspect bank.rkpkg"
"$actorc" inspect "$out/bank.rkpkg"
status=0
no_gpu=0
for name in bank pingpong reduce; do
  echo "== actorc run $name.rkpkg --script examples/$name.jsonl"
  set +e
  "$actorc" run "$out/$name.rkpkg" --script "$root/examples/$name.jsonl"
  rc=$?
  set -e
  if [ $rc -eq 2 ]; then
    no_gpu=1
  elif [ $rc -ne 0 ]; then
    status=$rc
  fi
done
if [ $no_gpu -eq 1 ]; then
  echo
  echo "No CUDA device was found on this machine. Everything that needs none was done: the examples were"
  echo "compiled for sm_89 and sm_90 (packages and host headers in $out) and their scripts checked."
  echo "Running them needs an NVIDIA GPU with a CUDA driver."
  exit 2
fi
exit $status
