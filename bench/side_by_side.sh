#!/usr/bin/env bash
# headroom against the upstream PyG models, in one run on one machine: training_bench and
# pyg_reference_bench.py take turns (headroom with gradient checkpointing on and off, PyG as
# upstream trains: off), REPEATS times, on the same store, batch sizes, models and threads. Every
# JSON line goes to OUT (default build/side_by_side.jsonl); the summary gives the median of each
# case over the repeats and headroom's ratios to PyG (speed: graphs/s; memory: peak tensor bytes).
#
# Usage: bench/side_by_side.sh [--repeats 2] [--out FILE] [ARGS for both benchmarks...]
#   e.g. bench/side_by_side.sh --repeats 2 --batch-sizes 1024,4096 --batches 6 \
#          --models 'gat,teacher;gat,student' --threads 2
# Needs build/bin/training_bench and torch_geometric in the venv (docs/benchmarks.md).
set -euo pipefail
cd "$(dirname "$0")/.."
repeats=2
out=build/side_by_side.jsonl
args=()
while (($#)); do
  case "$1" in
    --repeats) repeats="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    *) args+=("$1"); shift ;;
  esac
done
python="${HEADROOM_PYTHON:-${HEADROOM_DEPS_DIR:-$HOME/.cache/headroom}/venv/bin/python}"
: >"$out"
# HEADROOM_BASELINE_BENCH: a training_bench built from another commit, run in turn with this one
# and labelled headroom-baseline, to compare before and after a change in one run.
# HEADROOM_TRAINING_BENCH: training_bench elsewhere than build/bin (a carried bundle's).
benches=("headroom:${HEADROOM_TRAINING_BENCH:-build/bin/training_bench}")
[[ -n "${HEADROOM_BASELINE_BENCH:-}" ]] && benches+=("headroom-baseline:$HEADROOM_BASELINE_BENCH")
for ((r = 1; r <= repeats; ++r)); do
  for bench in "${benches[@]}"; do
    for checkpointing in true false; do
      "${bench#*:}" "${args[@]}" --checkpointing "$checkpointing" | tee /dev/stderr |
        grep '^{' | sed "s/^{/{\"framework\":\"${bench%%:*}\",\"repeat\":$r,/" >>"$out"
    done
  done
  "$python" bench/pyg_reference_bench.py "${args[@]}" --checkpointing false | tee /dev/stderr |
    grep '^{' | sed "s/^{/{\"repeat\":$r,/" >>"$out"
done
"$python" - "$out" <<'PY'
import json, statistics, sys
rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
cases = {}
for r in rows:
    if "error" in r:
        print("error:", r["error"]); continue
    framework = r.get("framework", "pyg")
    label = f"{framework} ckpt={'on' if r.get('checkpointing') else 'off'}"
    cases.setdefault((r["model"], r["size"], r["batch_size"]), {}).setdefault(label, []).append(r)
print(f"\n{'model':<6} {'size':<8} {'batch':>6} {'run':<22} {'graphs/s':>9} {'peak MiB':>9} "
      f"{'speed x PyG':>11} {'memory x PyG':>12}")
for (model, size, batch), runs in sorted(cases.items()):
    med = {k: (statistics.median(x["graphs_per_second"] for x in v),
               statistics.median(x["peak_tensor_bytes"] for x in v) / 2**20) for k, v in runs.items()}
    pyg = med.get("pyg ckpt=off")
    for label, (speed, mib) in sorted(med.items()):
        # A zero (a PyG case that measured nothing) gives no ratio rather than ending the table.
        ratio = (f"{speed / pyg[0]:>11.2f} {mib / pyg[1]:>12.2f}" if pyg and min(pyg) > 0
                 else f"{'n/a':>11} {'n/a':>12}")
        print(f"{model:<6} {size:<8} {batch:>6} {label:<22} {speed:>9.0f} {mib:>9.1f} {ratio}")
PY
