#!/bin/bash
# Device run 2: full bench (per-row processes) and the ctest outside the reliability parts.
cd /work/main
timeout 300 python3 tools/bench/bench_report.py --build-dir build-dev --rounds 3 --out $OUT/bench > $OUT/bench.log 2>&1
tail -22 $OUT/bench.log | cut -c1-200
timeout 200 ctest --test-dir build-dev -j8 --output-on-failure -E "layers.faults|misuse|stress|bench.quick" > $OUT/ctest.log 2>&1
grep -E "tests passed|\*\*\*Failed|Timeout|Not Run" $OUT/ctest.log
