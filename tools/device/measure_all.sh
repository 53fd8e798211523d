#!/usr/bin/env bash
# The measurements the open issues' "done means" ask for, in one run on a GPU machine: the
# bench's done-means rows (no layer / layer / tuned, interleaved rounds), the knob matrix, what
# objects cost, the overhead tool, the random tester's long form on the device's real queues,
# and, given an older build, the same bench and overhead rows old against new in one call.
#
#   tools/device/measure_all.sh BUILD OUT [--old OLD_BUILD] [--quick] [--phases a,b,...]
#                               [--limits SHORT,LONG] [--seed-start S]
#
# BUILD and OLD_BUILD: Release build trees of this repository (cmake -DCMAKE_BUILD_TYPE=Release);
# OLD_BUILD is the baseline an issue names (issue 23: b106b12, built from `git worktree add`).
# Both inside the checkout (build*/ is git-ignored): a build's manifests name its library by
# absolute path, which a carried copy keeps only where the paths match.
# Build them from scratch before carrying them: an incremental build that crossed many commits
# once crashed on the device.
# OUT: a folder; every phase writes its tables and JSON under OUT/<phase>/ and its console output
# to OUT/<phase>.txt as it goes, so a run stopped by a time limit keeps what finished.
# Phases (default: all, in this order), each under a time limit that fits one call of the device
# tool (10 minutes at most a command): name one or two per call with --phases.
#   donemeans  bench_report.py, 3 rounds, the rows the issues' done-means name
#   knobs      bench_report.py --knob-matrix, every row but the 48 MB ones, 30 repetitions
#              over 3 rounds, marked rows repeated in 2 more
#   objects    slipstream-object-cost (create + destroy pairs with and without the layer)
#   overhead   overhead_report.py (per dispatch, per submit, per small command buffer)
#   armstate   arm_state.py: bench processes with ARM=off and ARM=timeline in turn, a probe
#              process without the layer after each (does arming make the slow state?)
#   random     random_test.py on the device's queues (two distinct ones where it has them):
#              seeds 100000 on, 120 actions, in batches of 50 per process (--batch), every
#              configuration but the armed ones, until its time limit
#   seed80250  random.seed_80250's program on the device's queues, in the configurations that
#              tell the validation layer's reading from the layer's
#   old        with --old: the donemeans rows, the rows fusion won and the overhead tool for
#              OLD_BUILD and BUILD,
#              alternating, so that the two builds meet the machine in the same state
# --quick: a smoke run (lavapipe, CI-sized): few reps and seeds, short limits.
# --seed-start S: the random phase's first seed (default 100000), for a second call that goes on
# where the first one's time ran out.
# --limits SHORT,LONG: the phases' time limits in seconds (default 280,560: "short" phases are
# objects, overhead, armstate, seed80250 and each step of old; the others are "long"), so that the phases
# named in one device call fit its 10 minutes together.
#
# On the H200 (../shared/device/README.md): carry [".gl", BUILD] and, for --old, only OLD_BUILD's
# lib, share and tools/overhead (a Release build is ~27 MB; carry holds 64 MiB in all), and run
#   . .gl/gpu-env.sh; tools/device/measure_all.sh BUILD $OUT
# with the device tool's $OUT as OUT.
set -uo pipefail
cd "$(dirname "$0")/../.."
build=${1:?usage: measure_all.sh BUILD OUT [--old OLD_BUILD] [--quick] [--phases a,b]}
out=${2:?usage: measure_all.sh BUILD OUT [--old OLD_BUILD] [--quick] [--phases a,b]}
shift 2
old="" quick=0 limits="" seed_start=100000 phases="donemeans,knobs,objects,overhead,armstate,random,seed80250,old"
while [ $# -gt 0 ]; do
  case "$1" in
    --old) old=$2; shift 2 ;;
    --quick) quick=1; shift ;;
    --phases) phases=$2; shift 2 ;;
    --limits) limits=$2; shift 2 ;;
    --seed-start) seed_start=$2; shift 2 ;;
    *) echo "measure_all.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
mkdir -p "$out"
export PYTHONUNBUFFERED=1
knob_rows=$("$build/tools/bench/slipstream-bench" --list-rows | grep -v 48mb | paste -sd, -)
donemeans_rows=launch_spin,launch_spin_bare,launch_sync,launch_sync_fresh_fence,barriers_16,upload_64k,alloc_free_64k,staging_per_op,seed_chain,launch_timeline_info,launch_timeline_chain
# Old against new: the done-means rows and the rows fusion won (issue 21 asks that these stay
# where the old build had them).
old_rows=$donemeans_rows,launch,pipeline,independent,upload_launch,batched
if [ $quick = 1 ]; then
  limit_short=120 limit_long=300 rounds=(--quick) knob_rounds=(--quick) seeds=8 jobs=2 batch=4
else
  # Programs in batches of 50 per process and configuration: an H100 created devices for 14
  # processes at once no faster than for one (~0.2 s each), which bounded the long form to ~0.5
  # seeds a second.
  limit_short=280 limit_long=560 seeds=100000 jobs=$(( $(nproc) > 2 ? $(nproc) - 2 : 1 )) batch=50
  rounds=(--process column --rounds 3 --max-row-seconds 2)
  # 30 repetitions a row over 3 rounds: with 8 over 2 (an H100, 2026-12-05) the defaults' column
  # of two rows lost 14% and 30% to nearly every other column, unmarked because the ranges
  # overlapped; that many samples settle such rows.
  knob_rounds=(--process column --rounds 3 --repeat-rounds 2 --reps 30 --max-row-seconds 2)
fi
if [ -n "$limits" ]; then
  limit_short=${limits%,*} limit_long=${limits#*,}
fi

# run PHASE LIMIT COMMAND...: the command's output to OUT/PHASE.txt, its exit status noted.
run() {
  local phase=$1 limit=$2
  shift 2
  case ",$phases," in *",$phase,"*) ;; *) return 0 ;; esac
  echo "== $phase ($(date -u +%H:%M:%S), limit ${limit}s): $*" | tee -a "$out/phases.txt"
  timeout --signal=INT --kill-after=30 "$limit" "$@" > "$out/$phase.txt" 2>&1
  local rc=$?
  echo "   $phase: exit $rc ($(date -u +%H:%M:%S))" | tee -a "$out/phases.txt"
}

run donemeans $limit_long python3 tools/bench/bench_report.py --build-dir "$build" --out "$out/donemeans" \
  "${rounds[@]}" --rows $donemeans_rows
run knobs $limit_long python3 tools/bench/bench_report.py --build-dir "$build" --out "$out/knobs" \
  "${knob_rounds[@]}" --knob-matrix --rows "$knob_rows"
run objects $limit_short env DISABLE_SLIPSTREAM=1 VK_ADD_LAYER_PATH="$PWD/$build/share/vulkan/explicit_layer.d" \
  "$build/tools/overhead/slipstream-object-cost" $([ $quick = 1 ] && echo "--reps 2 --pairs 10" || echo "--reps 5 --pairs 40")
run overhead $limit_short python3 tools/overhead/overhead_report.py --build-dir "$build" --json "$out/overhead.json"
run armstate $limit_short python3 tools/device/arm_state.py --build-dir "$build" --out "$out/armstate" \
  $([ $quick = 1 ] && echo "--steps 1 --reps 5")
# Every configuration but the armed ones (their own phase is the knob matrix's ARM column).
run random $limit_long python3 tests/random/random_test.py --build-dir "$build" --start $seed_start --count $seeds \
  --ops 120 --jobs $jobs --timeout 60 --share-queues --batch $batch \
  --configs off,defaults,fuse_off,lazy_on,lazy_off,defer_0,no_elide,validation,validation_alone
run seed80250 $limit_short python3 tests/random/random_test.py --build-dir "$build" --seeds 80250,80250,80250,80250 \
  --ops 120 --share-queues --configs off,validation_alone,validation,fuse_off,lazy_off --env VK_SLIPSTREAM_LAZY_RECORD=off
if [ -n "$old" ]; then
  for round in 1 2; do
    for which in old new; do
      b=$build
      [ $which = old ] && b=$old
      # The same benchmark program for both (BUILD's): the two columns differ by the layer only.
      run old $limit_short python3 tools/bench/bench_report.py --build-dir "$b" --out "$out/old/$which-$round" \
        --bench "$build/tools/bench/slipstream-bench" \
        --process column --rounds 1 --max-row-seconds 1 $([ $quick = 1 ] && echo --quick) --rows $old_rows
      mv -f "$out/old.txt" "$out/old-bench-$which-$round.txt" 2>/dev/null
      run old $limit_short python3 tools/overhead/overhead_report.py --build-dir "$b" --json "$out/old/overhead-$which-$round.json"
      mv -f "$out/old.txt" "$out/old-overhead-$which-$round.txt" 2>/dev/null
    done
  done
fi
echo "measure_all.sh: done; phases in $out/phases.txt"
