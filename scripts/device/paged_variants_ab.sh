#!/usr/bin/env bash
# Decode variants side by side in one device call: for each row of PAGED_AB_ROWS,
# `mqajit bench --op paged_mqa_logits --check` times its comma-separated variant list (each checked
# against the reference kernel first, then all timed in turn with the baseline in one process) over
# distinct cache blocks, in PAGED_AB_ROUNDS rounds. Uses the CLI prebuilt here
# (scripts/device/prebuild_cli.sh; carry .gpu-deps and .gpu-state).
#   PAGED_AB_ROWS="batch,next_n,heads,context:variant,variant,... ..." scripts/device/paged_variants_ab.sh
# Environment: PAGED_AB_ROUNDS (2), PAGED_AB_RUNS (50), PAGED_AB_DEADLINE (seconds after which no
# new bench starts, 480). Results: $OUT/paged_ab.tgz (JSON and text per row and round) and
# $OUT/summary.txt, which ends with each variant's median time per row and round.
set -uo pipefail
final=${OUT:-$PWD/gpu-out}
work=/tmp/paged-ab
rm -rf "$work" && mkdir -p "$final" "$work/results"
t0=$SECONDS
stamp() {
  echo "[$((SECONDS - t0))s] $*" | tee -a "$final/summary.txt"
  (cd "$work/results" && tar czf "$final/paged_ab.tgz" .)
}
source scripts/device/prebuilt_cli.sh
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$LD_LIBRARY_PATH MQAJIT_CACHE_DIR=$work/cache
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw \
  --format=csv,noheader | tee -a "$final/summary.txt"
[ -n "${PAGED_AB_ROWS:-}" ] || { echo "PAGED_AB_ROWS is empty"; exit 2; }

for round in $(seq "${PAGED_AB_ROUNDS:-2}"); do
  for row in $PAGED_AB_ROWS; do
    [ $((SECONDS - t0)) -lt "${PAGED_AB_DEADLINE:-480}" ] || { stamp "deadline: no more rows"; break 2; }
    shape=${row%%:*} list=${row#*:}
    IFS=, read -r batch next_n heads context <<< "$shape"
    name=b${batch}_n${next_n}_h${heads}_c${context}_round$round
    timeout -k 10 150 "$prebuilt/mqajit" bench --op paged_mqa_logits --batch "$batch" --next-n "$next_n" \
      --heads "$heads" --context-len "$context" --variant "$list" --check --runs "${PAGED_AB_RUNS:-50}" \
      --json-file "$work/results/$name.json" > "$work/results/$name.txt" 2>&1
    stamp "$name: exit $? ($(grep -c -i fail "$work/results/$name.txt") lines with 'fail')"
  done
done
python3 - "$work/results" <<'EOF' | tee -a "$final/summary.txt"
import json, pathlib, sys
for path in sorted(pathlib.Path(sys.argv[1]).glob("*.json")):
    for row in json.loads(path.read_text()):
        times = dict(sorted(row.get("variants_us", {}).items(), key=lambda kv: kv[1]))
        best = min(times.values()) if times else None
        cells = " ".join(f"{k}={v:.1f}({v / best:.3f})" for k, v in times.items())
        print(f"{path.stem}: base={row.get('baseline_us', float('nan')):.1f} {cells}")
EOF
stamp done
