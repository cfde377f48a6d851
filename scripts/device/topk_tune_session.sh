#!/usr/bin/env bash
# The second device call of a fused top-k session (after scripts/device/fused_topk_session.sh built
# the tree on the same, still warm machine): `mqajit bench --op mqa_topk --check` over GLM-5 and DeepSeek-V3.2 shapes
# with S >= 1024 (each path checked exactly, then timed beside mqa_logits), and `mqajit tune --op
# mqa_topk` on a few of them, the rows in $OUT/mqa_topk_tuned.csv. Run as:
# bash scripts/device/topk_tune_session.sh with carry [".gpu-deps"]; logs under $OUT.
set -u
t0=$SECONDS
left() { echo $((570 - SECONDS + t0)); }
[ -x build/tools/mqajit ] || bash scripts/gpu_session.sh build > $OUT/build_step.txt 2>&1
export LD_LIBRARY_PATH=/tmp/mqajit-deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export MQAJIT_CACHE_DIR=/tmp/mqajit-cache MQAJIT_SYSTEM_DB=$(find "$PWD/build" -name system_tuning.db | head -1)
export MQAJIT_TUNING_DB=/tmp/topk-tuning.db
shapes=$OUT/shapes.csv
printf "seq_len,seq_len_kv,heads\n1024,8192,32\n1024,32768,32\n2048,32768,32\n1024,60000,32\n4096,16384,64\n2048,60000,64\n" > $shapes
timeout -k 10 $(( $(left) / 2 )) build/tools/mqajit bench --op mqa_topk --check --runs 20 --shapes $shapes \
  --json-file $OUT/topk_bench.json > $OUT/topk_bench.txt 2>&1
echo "[$((SECONDS-t0))s] bench exit $?"; cat $OUT/topk_bench.txt | tail -20
timeout -k 10 $(left) build/tools/mqajit tune --op mqa_topk -i $shapes -o $OUT/mqa_topk_tuned.csv --runs 50 \
  --json-file $OUT/topk_tune.json > $OUT/topk_tune.txt 2>&1
echo "[$((SECONDS-t0))s] tune exit $?"; grep -v "^  " $OUT/topk_tune.txt | tail -20; cat $OUT/mqa_topk_tuned.csv
