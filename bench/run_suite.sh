#!/usr/bin/env bash
# RingKernel's benchmark suite: records the environment, optionally warms the
# GPU up, runs each experiment of a profile once per trial in a fresh rkbench
# process, and analyses the results.
#
#   bench/run_suite.sh [--profile quick|standard|full] [--rkbench PATH] [--out DIR]
#                      [--trials N] [--warmup-seconds S] [--only E[,E...]]
#                      [--device N] [--allow-dirty]
#   bench/run_suite.sh --stamp
#
#   --profile         quick (default): 3 trials, fewer iterations, no warm-up,
#                     under 3 minutes of GPU time on an H200 without paths
#                     (which adds an estimated 30-40 s a trial, 16 of them
#                     power sampling and quiet Asks); standard: 10 trials,
#                     1000 measured iterations where an iteration is cheap
#                     and fewer where it is not, no warm-up, about 8 minutes
#                     without paths (an estimated 7 more with it); full: 10
#                     trials, 100 warm-up and 1000 measured iterations
#                     everywhere, 300 s of warm-up (hours)
#   --rkbench         the rkbench binary (default: build/bench/rkbench)
#   --out             the run directory (default: bench/results/PROFILE-UTCTIME);
#                     it must not already hold raw data
#   --trials          trials instead of the profile's number
#   --warmup-seconds  warm-up instead of the profile's
#   --only            run only these experiments (exp1, hop, trace_cost, paths, exp2 ... exp8, jit)
#   --device          the CUDA device rkbench uses and nvidia-smi describes
#   --allow-dirty     run even though the tree differs from its commit (or
#                     rkbench was built from another or a modified tree);
#                     recorded in environment.json and run.json
#   --stamp           write bench/.source_stamp.json (the commit and every
#                     tracked file's hash) in a clean git work tree, and exit:
#                     a copy of the tree without .git (a GPU machine's) then
#                     proves it is that commit, file by file
#
# A results directory must name the clean commit it was built from: before
# anything else the suite asks bench/analysis/provenance.py which commit the
# tree is (git, else a verified stamp) and whether anything differs from it,
# and what rkbench --version says it was built from. A modified tree, one
# whose state cannot be told, or an rkbench built from another commit or a
# modified tree is refused with exit status 4 (nothing is written) unless
# --allow-dirty is given.
#
# The run directory afterwards:
#   environment.json  the GPU, driver, clocks, ECC, compute mode, CUDA, commit,
#                     OS, CPU and governor, process list (before any trial)
#   raw/E.trialT.csv  one CSV per experiment and trial (rkbench's rows)
#   logs/             rkbench's output per run; suite.log, this script's own
#   failures.tsv      the runs that failed; their partial CSVs go to failed/
#   power.csv         board power (nvidia-smi power.draw) every ~200 ms
#   runs.tsv          when each rkbench process started and ended (epoch ms)
#   run.json          commit and dirty state, profile, trials, experiments,
#                     warm-up done, failures
#   report.md, summary.json, comparisons.json, targets.json, plots/   (analyze.py)
#
# The suite reads GPU clocks, compute mode and the CPU governor and records
# them; it never changes them.
#
# Exit status: 0 when every run succeeded and the analysis was written; 1 when
# a run or the analysis failed (the other runs still happen); 2 when there is
# no GPU (after recording the environment); 3 when every run succeeded but
# this machine's Python lacks NumPy, SciPy or Matplotlib, so the analysis is
# left for another machine (the raw data is complete); 4 when the tree or
# rkbench is not a clean commit (without --allow-dirty; nothing is run or
# written); 64 for a usage error.
set -uo pipefail
# The analysis scripts must not leave byte-code caches in the tree.
export PYTHONDONTWRITEBYTECODE=1

# ---------------------------------------------------------------------------
# The experiments and their arguments per profile, in one table:
#   rkbench --experiment NAME | quick profile | standard profile | full profile
# --warmup iterations are discarded, --iterations recorded, except where an
# experiment counts differently: exp4 records one row per second of
# --sustain-seconds (its peak-rate phase is its warm-up), exp6 and exp7 one
# value per trial (exp7 also per 100 ms window of each --exp7-phase-ms
# phase), and jit's --jit-cold counts cold builds, its --iterations cached
# ones. The other flags are rkbench's own (its usage message lists them).
EXPERIMENT_TABLE='
exp1 | --warmup 20 --iterations 300                  | --warmup 100 --iterations 1000                  | --warmup 100 --iterations 1000
hop  | --warmup 32 --iterations 320                  | --warmup 100 --iterations 1000                  | --warmup 100 --iterations 1000
trace_cost | --warmup 32 --iterations 320            | --warmup 100 --iterations 1000                  | --warmup 100 --iterations 1000
paths | --warmup 20 --iterations 300 --paths-messages 20000 --paths-bursts 3 --paths-aggregate-messages 5000 --paths-quiet-asks 3 --paths-power-seconds 3 | --warmup 100 --iterations 1000 --paths-messages 50000 --paths-bursts 5 --paths-aggregate-messages 10000 --paths-quiet-asks 5 --paths-power-seconds 3 | --warmup 100 --iterations 1000 --paths-messages 200000 --paths-bursts 20 --paths-aggregate-messages 20000 --paths-quiet-asks 10 --paths-power-seconds 10
exp2 | --warmup 1 --iterations 5 --exp2-messages 5000 | --warmup 1 --iterations 5 --exp2-messages 5000 | --warmup 100 --iterations 1000
exp3 | --warmup 1 --iterations 3 --exp3-weak-messages 2000 --exp3-strong-total 32768 | --warmup 2 --iterations 10 --exp3-weak-messages 5000 --exp3-strong-total 65536 | --warmup 100 --iterations 1000
exp4 | --sustain-seconds 10 --exp4-peak-ms 500       | --sustain-seconds 10 --exp4-peak-ms 500       | --sustain-seconds 60
exp5 | --warmup 20 --iterations 300                  | --warmup 100 --iterations 1000                  | --warmup 100 --iterations 1000
exp6 | --exp6-actors 256                             | --exp6-actors 256                             | --exp6-actors 256
exp7 | --exp7-phase-ms 1000                          | --exp7-phase-ms 500                           | --exp7-phase-ms 2000
exp8 | --warmup 2 --iterations 10 --exp8-rounds 2000 | --warmup 10 --iterations 100 --exp8-rounds 2000 | --warmup 100 --iterations 1000
jit  | --jit-cold 2 --iterations 50                  | --jit-cold 3 --iterations 200                   | --jit-cold 10 --iterations 1000
'
declare -A PROFILE_TRIALS=([quick]=3 [standard]=10 [full]=10)
declare -A PROFILE_WARMUP_S=([quick]=0 [standard]=0 [full]=300)
declare -A PROFILE_LIMIT_S=([quick]=300 [standard]=600 [full]=1800)  # per rkbench process
# What the warm-up phase runs, again and again, with its results discarded.
WARMUP_ARGS='--experiment exp1 --experiment hop --warmup 0 --iterations 1000'
# ---------------------------------------------------------------------------

usage() { sed -n '2,/^set -uo/{/^#/s/^# \{0,1\}//p}' "$0"; }
die_usage() { echo "run_suite: $*" >&2; echo "(bench/run_suite.sh --help for the options)" >&2; exit 64; }

root=$(cd "$(dirname "$0")/.." && pwd)
analysis="$root/bench/analysis"
py=${RK_PYTHON:-/usr/bin/python3}

profile=quick rkbench="$root/build/bench/rkbench" out='' trials='' warmup_s='' only='' device=0
allow_dirty=0 stamp=0
while [ $# -gt 0 ]; do
  case "$1" in
    -h|--help) usage; exit 0 ;;
    --allow-dirty) allow_dirty=1; shift ;;
    --stamp) stamp=1; shift ;;
    --profile|--rkbench|--out|--trials|--warmup-seconds|--only|--device)
      [ $# -ge 2 ] || die_usage "$1 needs a value"
      case "$1" in
        --profile) profile=$2 ;;
        --rkbench) rkbench=$2 ;;
        --out) out=$2 ;;
        --trials) trials=$2 ;;
        --warmup-seconds) warmup_s=$2 ;;
        --only) only=$2 ;;
        --device) device=$2 ;;
      esac
      shift 2 ;;
    *) die_usage "unknown argument '$1'" ;;
  esac
done

[ -n "${PROFILE_TRIALS[$profile]:-}" ] || die_usage "unknown profile '$profile' (quick, standard or full)"
trials=${trials:-${PROFILE_TRIALS[$profile]}}
warmup_s=${warmup_s:-${PROFILE_WARMUP_S[$profile]}}
limit_s=${PROFILE_LIMIT_S[$profile]}
[[ $trials =~ ^[1-9][0-9]*$ ]] || die_usage "--trials must be a positive integer"
[[ $warmup_s =~ ^[0-9]+$ ]] || die_usage "--warmup-seconds must be a whole number of seconds"
[[ $device =~ ^[0-9]+$ ]] || die_usage "--device must be a device index"
[[ $rkbench = /* ]] || rkbench="$PWD/$rkbench"  # the runs start in the repository root

experiments=()
declare -A experiment_args
while IFS='|' read -r name quick standard full; do
  name=${name//[[:space:]]/}
  [ -n "$name" ] || continue
  experiments+=("$name")
  case $profile in
    quick) experiment_args[$name]=$quick ;;
    standard) experiment_args[$name]=$standard ;;
    *) experiment_args[$name]=$full ;;
  esac
done <<< "$EXPERIMENT_TABLE"
selected=("${experiments[@]}")
if [ -n "$only" ]; then
  IFS=',' read -ra selected <<< "$only"
  for e in "${selected[@]}"; do
    [ -n "${experiment_args[$e]+set}" ] || die_usage "unknown experiment '$e' (one of: ${experiments[*]})"
  done
fi

if [ "$stamp" -eq 1 ]; then
  exec "$py" "$analysis/provenance.py" stamp --root "$root"
fi

out=${out:-$root/bench/results/$profile-$(date -u +%Y%m%dT%H%M%SZ)}
if compgen -G "$out/raw/*.csv" > /dev/null; then
  die_usage "$out already holds raw data; give a new --out so that runs are not mixed"
fi

# 0. Which commit this is, before anything is written.
dirty_args=()
[ "$allow_dirty" -eq 1 ] && dirty_args=(--allow-dirty)
"$py" "$analysis/provenance.py" check --root "$root" --rkbench "$rkbench" "${dirty_args[@]}"
case $? in
  0) [ "$allow_dirty" -eq 1 ] && echo "run_suite: --allow-dirty: the results will say what was not clean" ;;
  4) echo "run_suite: refusing to produce results from a tree or rkbench that is not a clean commit;" \
          "commit (and rebuild), or pass --allow-dirty" >&2
     exit 4 ;;
  *) echo "run_suite: could not tell which commit this is" >&2; exit 1 ;;
esac

mkdir -p "$out/raw" "$out/logs" || exit 1
out=$(cd "$out" && pwd)
started=$(date -u +%Y-%m-%dT%H:%M:%SZ)

log() { echo "run_suite: $*" | tee -a "$out/logs/suite.log"; }

# 1. The environment, before anything runs on the GPU.
"$py" "$analysis/capture.py" environment --out "$out/environment.json" --root "$root" \
  --rkbench "$rkbench" --device "$device" "${dirty_args[@]}"
case $? in
  0) log "environment recorded in $out/environment.json" ;;
  2) log "no GPU: nvidia-smi is missing or lists no device. The environment is recorded in" \
         "$out/environment.json; no benchmark was run."
     exit 2 ;;
  *) log "recording the environment failed"; exit 1 ;;
esac
if [ ! -x "$rkbench" ]; then
  log "no rkbench at $rkbench (build it with scripts/build.sh, or pass --rkbench)"
  exit 1
fi

failures="$out/failures.tsv"
printf 'experiment\ttrial\texit_status\tlog\n' > "$failures"
failed=0 runs=0
record_failure() {  # experiment trial status log
  printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" >> "$failures"
  failed=$((failed + 1))
}
run_rkbench() {  # log-file rkbench-arguments...
  local logfile=$1; shift
  (cd "$root" && timeout --kill-after=30 "$limit_s" "$rkbench" "$@") >> "$logfile" 2>&1
}

# 2. Warm-up: rkbench again and again until the time is up; results discarded.
warmup_done=0
if [ "$warmup_s" -gt 0 ]; then
  log "warming up for $warmup_s s (results discarded; log: logs/warmup.log)"
  read -ra warmup_args <<< "$WARMUP_ARGS"
  start=$SECONDS
  while [ $((SECONDS - start)) -lt "$warmup_s" ]; do
    run_rkbench "$out/logs/warmup.log" "${warmup_args[@]}" --trial 0 --device "$device" --csv "$out/logs/warmup.csv"
    rc=$?
    rm -f "$out/logs/warmup.csv"
    if [ $rc -ne 0 ]; then
      log "warm-up run failed (status $rc); going on without the rest of the warm-up"
      record_failure warmup warmup "$rc" logs/warmup.log
      break
    fi
  done
  warmup_done=$((SECONDS - start))
fi

# 3. The trials: every experiment once per trial, each in a fresh process,
# with the board's power sampled about every 200 ms meanwhile (a query, like
# everything here) and each process's start and end recorded to match.
now_ms() { date +%s%3N; }
sample_power() {
  while :; do
    echo "$(now_ms),$(nvidia-smi --query-gpu=power.draw --format=csv,noheader,nounits -i "$device" 2>&1 | head -n 1)"
    sleep 0.2
  done
}
echo "epoch_ms,power_w" > "$out/power.csv"
printf 'experiment\ttrial\tstart_ms\tend_ms\n' > "$out/runs.tsv"
sample_power >> "$out/power.csv" &
sampler=$!
trap 'kill "$sampler" 2>/dev/null' EXIT
log "profile $profile: $trials trials of ${selected[*]} (at most $limit_s s per run)"
for ((trial = 1; trial <= trials; trial++)); do
  for e in "${selected[@]}"; do
    read -ra args <<< "${experiment_args[$e]}"
    csv="$out/raw/$e.trial$trial.csv"
    logfile="logs/$e.trial$trial.log"
    start=$SECONDS
    start_ms=$(now_ms)
    run_rkbench "$out/$logfile" --experiment "$e" --trial "$trial" --device "$device" --csv "$csv" "${args[@]}"
    rc=$?
    printf '%s\t%s\t%s\t%s\n' "$e" "$trial" "$start_ms" "$(now_ms)" >> "$out/runs.tsv"
    runs=$((runs + 1))
    if [ $rc -eq 0 ] && [ -s "$csv" ]; then
      log "trial $trial $e: ok ($((SECONDS - start)) s)"
    else
      if [ $rc -eq 0 ]; then
        log "trial $trial $e: FAILED (no CSV written; see $logfile)"
      else
        log "trial $trial $e: FAILED (status $rc; see $logfile)"
      fi
      record_failure "$e" "$trial" "$rc" "$logfile"
      if [ -e "$csv" ]; then
        mkdir -p "$out/failed" && mv "$csv" "$out/failed/"
      fi
    fi
  done
done

kill "$sampler" 2>/dev/null
wait "$sampler" 2>/dev/null

"$py" "$analysis/capture.py" run --out "$out/run.json" --profile "$profile" --trials "$trials" \
  --experiments "${selected[*]}" --warmup-requested "$warmup_s" --warmup-done "$warmup_done" \
  --started "$started" --failures "$failures" --environment "$out/environment.json" || log "writing run.json failed"

# 4. The analysis.
analysis_rc=1
if ! "$py" -c "import numpy, scipy, matplotlib" 2> /dev/null; then
  log "analysis skipped: $py lacks NumPy, SciPy or Matplotlib (Debian: apt-get install python3-numpy" \
      "python3-scipy python3-matplotlib); the raw data is complete: run" \
      "'bench/analysis/analyze.py $out' where they are installed"
  analysis_rc=3
elif compgen -G "$out/raw/*.csv" > /dev/null; then
  "$py" "$analysis/analyze.py" "$out" 2>&1 | tee -a "$out/logs/suite.log"
  analysis_rc=${PIPESTATUS[0]}
  [ "$analysis_rc" -eq 0 ] || log "the analysis failed (status $analysis_rc)"
else
  log "no run produced data; nothing to analyse"
fi

if [ $failed -gt 0 ]; then
  log "$failed failure(s) in $runs runs (listed in $failures):"
  tail -n +2 "$failures" | while IFS=$'\t' read -r e t rc lf; do log "  $e trial $t: status $rc, $lf"; done
fi
if [ $failed -gt 0 ] || { [ "$analysis_rc" -ne 0 ] && [ "$analysis_rc" -ne 3 ]; }; then
  exit 1
fi
[ "$analysis_rc" -eq 3 ] && exit 3
log "done: $out/report.md"
exit 0
