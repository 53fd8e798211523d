#!/bin/bash
# Device run 1: H200 ctest, full bench (per-row processes), launch+sync breakdown.
cd /work/main
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/gpu.txt 2>&1
timeout 240 ctest --test-dir build-dev -j8 --output-on-failure > $OUT/ctest.log 2>&1
tail -25 $OUT/ctest.log
timeout 300 python3 tools/bench/bench_report.py --build-dir build-dev --rounds 3 --out $OUT/bench > $OUT/bench.log 2>&1
tail -30 $OUT/bench.log
L="VK_ADD_LAYER_PATH=$PWD/build-dev/share/vulkan/explicit_layer.d VK_INSTANCE_LAYERS=VK_LAYER_slipstream"
B=build-dev/tools/bench/slipstream-bench
for i in 1 2 3; do
  for cfg in "fuse_on|$L VK_SLIPSTREAM_FUSE=on|naive|fence" "fuse_off|$L VK_SLIPSTREAM_FUSE=off|naive|fence" "tuned||tuned|fence" \
             "fuse_on_qi|$L VK_SLIPSTREAM_FUSE=on|naive|queue-idle" "fuse_off_qi|$L VK_SLIPSTREAM_FUSE=off|naive|queue-idle" \
             "fuse_on_nolazy|$L VK_SLIPSTREAM_FUSE=on VK_SLIPSTREAM_LAZY_RECORD=off|naive|fence"; do
    IFS='|' read name envs style wait <<< "$cfg"
    env $envs VK_SLIPSTREAM_STATS_FILE=$OUT/stats-$name-$i.json timeout 30 $B --rows launch_sync,launch --style $style --wait $wait --json $OUT/ls-$name-$i.json > /dev/null 2>$OUT/ls-$name-$i.err
    python3 -c "
import json,sys;d=json.load(open('$OUT/ls-$name-$i.json'))
print('$name', ' '.join('%s=%.2f'%(r['name'],r['median']) for r in d['rows']))" 2>&1
  done
done
