#!/usr/bin/env bash
# Runs RingKernel's GPU tests on a machine with an NVIDIA GPU, each test case
# in its own process (a device fault poisons a process's CUDA context), and
# optionally under compute-sanitizer.
#
#   scripts/gpu_tests.sh [--bin DIR] [--out DIR] [--filter REGEX] [--sanitize TOOL[,TOOL...]]
#
#   --bin       where the test binaries and actorc are (default: build/tests and build/tools)
#   --out       where logs go (default: gpu-test-logs)
#   --filter    only test cases whose Suite.Name matches this extended regex
#   --sanitize  also run each case under compute-sanitizer with these tools
#               (memcheck, racecheck, synccheck, initcheck); cases whose name
#               contains "Fault" or "Trap" are left out of sanitizer runs (they
#               fault on purpose), and API errors are not reported (tests
#               provoke them on purpose and check the Status they become)
#
# Each case has 120 s (RK_CASE_TIMEOUT overrides; 300 s under a sanitizer, where the tests also run at
# RINGKERNEL_TEST_SCALE=0.01 on 4 workers). The soak (soak_gpu_test) runs for RINGKERNEL_SOAK_SECONDS
# (default 60) and gets that plus 60 s when this is more.
# Missing devices fail the run instead of skipping (RINGKERNEL_REQUIRE_GPU=1).
# Exit status: 0 if every case passed.
set -u
bin_dirs=()
out=gpu-test-logs
filter='.*'
sanitize=''
while [ $# -gt 0 ]; do
  case "$1" in
    --bin) bin_dirs+=("$2"); shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --filter) filter="$2"; shift 2 ;;
    --sanitize) sanitize="$2"; shift 2 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done
root=$(cd "$(dirname "$0")/.." && pwd)
[ ${#bin_dirs[@]} -eq 0 ] && bin_dirs=("$root/build/tests" "$root/build/tools")
mkdir -p "$out"
out=$(cd "$out" && pwd)

find_bin() {
  for d in "${bin_dirs[@]}"; do [ -x "$d/$1" ] && { echo "$d/$1"; return 0; }; done
  return 1
}

export RINGKERNEL_REQUIRE_GPU=1
export RINGKERNEL_SOURCE_DIR="$root"
export RINGKERNEL_CACHE_DIR="${RINGKERNEL_CACHE_DIR:-$out/cache}"
actorc=$(find_bin actorc) && export RINGKERNEL_ACTORC="$actorc"

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,ecc.mode.current --format=csv > "$out/gpu.csv" 2>&1 \
  || echo "nvidia-smi failed" > "$out/gpu.csv"
cat "$out/gpu.csv"

pass=0; fail=0; failed=()
# The limit of one case of `binary`: RK_CASE_TIMEOUT, or for the soak its
# duration plus 60 s when that is longer.
case_limit() {  # binary
  local limit=${RK_CASE_TIMEOUT:-120}
  if [ "$(basename "$1")" = soak_gpu_test ]; then
    local soak=${RINGKERNEL_SOAK_SECONDS:-60}
    case "$soak" in ''|*[!0-9]*) soak=60 ;; esac
    [ $((soak + 60)) -gt "$limit" ] && limit=$((soak + 60))
  fi
  echo "$limit"
}
run_case() {  # limit binary case label [prefix...]
  local limit=$1 binary=$2 case=$3 label=$4; shift 4
  local log="$out/${label//\//_}.log"  # parameterised cases have '/' in their names
  local start=$(date +%s%N)
  timeout "$limit" "$@" "$binary" --gtest_filter="$case" > "$log" 2>&1
  local rc=$?
  local ms=$(( ($(date +%s%N) - start) / 1000000 ))
  local secs="$((ms / 1000)).$(printf '%03d' $((ms % 1000)))"
  if [ $rc -eq 0 ] && grep -q "\[  PASSED  \] 1 test" "$log"; then
    pass=$((pass + 1)); printf 'PASS %-70s %8ss\n' "$label" "$secs"
  else
    fail=$((fail + 1)); failed+=("$label"); printf 'FAIL %-70s rc=%d\n' "$label" "$rc"
    tail -n 30 "$log" | sed 's/^/    /'
  fi
}

for d in "${bin_dirs[@]}"; do
  for binary in "$d"/*_gpu_test; do
    [ -x "$binary" ] || continue
    name=$(basename "$binary")
    suite=''
    while IFS= read -r line; do
      case "$line" in
        "  "*) case_name="$suite$(echo "$line" | awk '{print $1}')"
               echo "$case_name" | grep -Eq "$filter" || continue
               run_case "$(case_limit "$binary")" "$binary" "$case_name" "$name.$case_name"
               if [ -n "$sanitize" ] && ! echo "$case_name" | grep -Eq "Fault|Trap"; then
                 for tool in ${sanitize//,/ }; do
                   # actorc's scripts wait for replies with fixed timeouts,
                   # which racecheck's slowdown exceeds; their device code
                   # is raced-checked by the in-process example tests.
                   if [ "$tool" = racecheck ] && echo "$case_name" | grep -q Actorc; then
                     printf 'SKIP %-70s (fixed script timeouts)\n' "$name.$case_name.$tool"
                     continue
                   fi
                   # The tools run one kernel at a time, and this case needs
                   # the application's kernel to run beside the system's.
                   if echo "$case_name" | grep -q FewWorkersLeaveRoom; then
                     printf 'SKIP %-70s (needs two kernels at once)\n' "$name.$case_name.$tool"
                     continue
                   fi
                   # racecheck and initcheck follow neither the tensor memory
                   # accelerator's copies nor the spin lock of its stage
                   # (bulk_copy.h): under them the senders copy large
                   # payloads themselves. memcheck and synccheck see both ways.
                   no_bulk=''
                   case "$tool" in racecheck|initcheck) no_bulk=1 ;; esac
                   run_case 300 "$binary" "$case_name" "$name.$case_name.$tool" \
                     env RINGKERNEL_NO_BULK_COPY="$no_bulk" RINGKERNEL_TEST_SCALE=0.01 RINGKERNEL_TEST_WORKERS=4 compute-sanitizer --tool "$tool" --error-exitcode 99 --print-limit 20 --report-api-errors no
                 done
               fi ;;
        *) suite="$line" ;;
      esac
    done < <("$binary" --gtest_list_tests 2>/dev/null)
  done
done
# examples/embed, the application built against the installed package (by
# the test installed_package_builds_and_runs_examples_embed, in
# build/tests/install_embed/embed, or copied beside the test binaries with
# its tally_program.rkpkg): on a GPU its totals must be right.
embed=$(find_bin embed) || embed=$(ls "$root"/build/tests/install_embed/embed/embed 2>/dev/null) || embed=''
if [ -n "$embed" ] && echo "examples.embed" | grep -Eq "$filter"; then
  package="$(dirname "$embed")/tally_program.rkpkg"
  [ -f "$package" ] || package="$(dirname "$embed")/tally_program/tally_program.rkpkg"
  start=$(date +%s%N)
  timeout "${RK_CASE_TIMEOUT:-120}" "$embed" "$package" > "$out/examples.embed.log" 2>&1
  rc=$?
  ms=$(( ($(date +%s%N) - start) / 1000000 ))
  if [ $rc -eq 0 ]; then
    pass=$((pass + 1)); printf 'PASS %-70s %8ss\n' "examples.embed" "$((ms / 1000)).$(printf '%03d' $((ms % 1000)))"
  else
    fail=$((fail + 1)); failed+=("examples.embed"); printf 'FAIL %-70s rc=%d\n' "examples.embed" "$rc"
    tail -n 30 "$out/examples.embed.log" | sed 's/^/    /'
  fi
fi
echo "gpu tests: $pass passed, $fail failed"
for f in "${failed[@]}"; do echo "  failed: $f"; done
[ $fail -eq 0 ]
