#!/usr/bin/env bash
# Builds RingKernel's libFuzzer targets (tests/fuzz, README there) with
# clang 16 in build-fuzz/, then runs each for a bounded time on a copy of its
# seeds, one after the other:
#   scripts/fuzz.sh [seconds-per-target] [target...]     (default: 60 s, all)
# Exits non-zero if a target crashes, hangs (an input that takes longer than
# its -timeout), leaks, runs out of memory or trips ASan or UBSan; the input
# that did it is kept in build-fuzz/fuzz-artifacts/TARGET/ and the line to
# replay it is printed. Installs what it needs with apt-get, like setup.sh.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-60}
[ $# -gt 0 ] && shift
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(script_fuzzer message_codec_fuzzer package_fuzzer frontend_fuzzer)
case $seconds in
  '' | *[!0-9]*) echo "fuzz: seconds-per-target must be a whole number, not '$seconds'" >&2; exit 2 ;;
esac

"$root/scripts/setup.sh"
# clang 16 and compiler-rt: libclang-rt-16-dev holds libFuzzer
# (libclang_rt.fuzzer) and the ASan and UBSan run-times; llvm-16 has
# llvm-symbolizer, for stack traces with function names and lines.
missing=()
for p in clang-16 libclang-rt-16-dev llvm-16; do
  dpkg -s "$p" > /dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "fuzz: installing ${missing[*]}"
  sudo=''
  [ "$(id -u)" -ne 0 ] && sudo='sudo'
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" > /dev/null
fi

build=$root/build-fuzz
log=$build/fuzz-build.log
mkdir -p "$build"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang-16 -DCMAKE_CXX_COMPILER=clang++-16 -DRK_FUZZ=ON -DRK_BUILD_BENCH=OFF \
  -DCUDAToolkit_ROOT="${CUDA_HOME:-/usr/local/cuda}" > "$log" 2>&1 || { cat "$log"; exit 1; }
cmake --build "$build" -j "$(nproc)" --target "${targets[@]}" >> "$log" 2>&1 || { tail -n 80 "$log"; exit 1; }
echo "fuzz: built ${targets[*]} in build-fuzz/ (clang 16, -fsanitize=fuzzer,address,undefined)"

fuzz=$root/tests/fuzz
# seed DIR LABEL FILE...: copies seeds into DIR, their names prefixed with
# LABEL so that seeds from different folders never collide.
seed() {
  local dir=$1 label=$2 f
  shift 2
  for f in "$@"; do
    [ -f "$f" ] && cp "$f" "$dir/${label}_$(basename "$f")"
  done
  return 0
}

export ASAN_SYMBOLIZER_PATH=/usr/lib/llvm-16/bin/llvm-symbolizer
export ASAN_OPTIONS=detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1
export UBSAN_OPTIONS=print_stacktrace=1
failed=()
for t in "${targets[@]}"; do
  work=$build/fuzz-corpus/$t
  artifacts=$build/fuzz-artifacts/$t
  rm -rf "$work" "$artifacts"
  mkdir -p "$work" "$artifacts"
  seed "$work" corpus "$fuzz/corpus/$t"/*
  # Per target: its dictionary, the longest one input may take (-timeout:
  # longer is a hang) and its memory limit.
  case $t in
    script_fuzzer)
      seed "$work" examples "$root"/examples/*.jsonl
      options=(-dict="$fuzz/json.dict" -timeout=10 -rss_limit_mb=2048) ;;
    message_codec_fuzzer)
      options=(-dict="$fuzz/json.dict" -timeout=10 -rss_limit_mb=2048) ;;
    package_fuzzer)
      # Valid packages of this build's format and ABI (make_package_seeds.cc).
      seed "$work" generated "$build"/tests/fuzz/seeds/package_fuzzer/*
      options=(-dict="$fuzz/package.dict" -timeout=10 -rss_limit_mb=2048) ;;
    frontend_fuzzer)
      # The fragments the project has, good and bad (the large benchmark
      # fragments left out: every input is parsed whole by libclang).
      mapfile -t fragments < <(find "$root/handlers" "$root/examples" -name '*.cu' -size -8k | sort)
      seed "$work" handlers "${fragments[@]}"
      seed "$work" ok "$root"/tests/data/fragments/ok/*.cu
      seed "$work" fail "$root"/tests/data/fragments/fail/*.cu
      seed "$work" fuzz "$fuzz/model.cu"
      options=(-dict="$fuzz/frontend.dict" -timeout=30 -rss_limit_mb=4096 -max_len=8192) ;;
    *)
      echo "fuzz: unknown target '$t'" >&2
      exit 2 ;;
  esac
  seeds=$(find "$work" -type f | wc -l)
  out=$build/fuzz-$t.log
  echo "fuzz: $t for ${seconds} s from $seeds seeds"
  rc=0
  "$build/tests/fuzz/$t" "$work" "${options[@]}" -max_total_time="$seconds" -print_final_stats=1 \
    -artifact_prefix="$artifacts/" > "$out" 2>&1 || rc=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$out" | tail -n 1)
  found=$(find "$artifacts" -type f ! -name 'slow-unit-*' | sort)
  echo "fuzz: $t: ${runs:-?} runs, corpus $(find "$work" -type f | wc -l) inputs (from $seeds seeds), exit $rc"
  if [ "$rc" -ne 0 ] || [ -n "$found" ]; then
    tail -n 60 "$out"
    for a in $found; do
      echo "fuzz: $t: found ${a#"$root"/}; replay: build-fuzz/tests/fuzz/$t ${a#"$root"/}"
    done
    failed+=("$t")
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: FAILED: ${failed[*]} (logs: build-fuzz/fuzz-TARGET.log)" >&2
else
  echo "fuzz: ${#targets[@]} targets, ${seconds} s each: no crash, hang, leak or sanitizer report"
fi
echo "fuzz: $((${#targets[@]} - ${#failed[@]})) passed, ${#failed[@]} failed"
[ ${#failed[@]} -eq 0 ]
