#!/usr/bin/env bash
# TextGCN epochs in headroom and in PyG, in one run on one machine, on one graph: `headroom run
# CORPUS` builds the node-graph store and trains EPOCHS epochs (early stopping off); then
# bench/pyg_textgcn_bench.py trains its configurations for EPOCHS epochs on that same store.
# Both epochs are one full-batch training step and one evaluation forward. Prints each side's
# mean epoch (after the first), peak RSS and peak tensor bytes, and headroom's ratios to each PyG
# configuration; the JSON lines go to bench-out/textgcn-side-by-side/<corpus>.jsonl.
#
# Usage: bench/textgcn_side_by_side.sh CORPUS_DIR [EPOCHS (default 10)] [THREADS (default 2)]
#          [PYG_CONFIGS (default sparse-edgeindex,sparse-embedding)]
# Needs build/bin/headroom and torch_geometric in the venv (docs/benchmarks.md).
set -euo pipefail
corpus="$(realpath "${1:?usage: bench/textgcn_side_by_side.sh CORPUS_DIR [EPOCHS] [THREADS]}")"
epochs="${2:-10}"
threads="${3:-2}"
configs="${4:-sparse-edgeindex,sparse-embedding}"
cd "$(dirname "$0")/.."
python="${HEADROOM_PYTHON:-${HEADROOM_DEPS_DIR:-$HOME/.cache/headroom}/venv/bin/python}"
name="$(basename "$corpus")"
out="bench-out/textgcn-side-by-side"
mkdir -p "$out"
# This script's own output from an earlier run (the PyG benchmark appends to its --json-out).
rm -rf "$out/runs-$name" "$out/pyg-$name.jsonl"
/usr/bin/time -f "peak_rss_kb %M" build/bin/headroom run "$corpus" --seed 1 --threads "$threads" \
  --max-epochs "$epochs" --patience "$epochs" --progress false --force \
  --store "$out/store-$name" --runs-dir "$out/runs-$name" > "$out/headroom-$name.log" 2>&1
"$python" bench/pyg_textgcn_bench.py --store "$out/store-$name" --configs "$configs" --seeds 1 \
  --epochs "$epochs" --patience "$epochs" --threads "$threads" \
  --json-out "$out/pyg-$name.jsonl" > "$out/pyg-$name.log" 2>&1
"$python" - "$out" "$name" <<'PY'
import json, sys
out, name = sys.argv[1:]
run = f"{out}/runs-{name}/store-{name}/node_gcn"
epochs = [json.loads(l) for l in open(f"{run}/metrics.jsonl") if json.loads(l).get("type") == "epoch"]
later = [e["seconds"] for e in epochs[1:]]
rss = [int(l.split()[1]) * 1024 for l in open(f"{out}/headroom-{name}.log")
       if l.startswith("peak_rss_kb")][0]
# The same work as a PyG epoch (one training step, one evaluation forward), without the
# checkpoint headroom writes when validation improves (epoch lines before these keys lack them).
compute = [e["train_seconds"] + e["validation_seconds"] for e in epochs[1:]
           if "validation_seconds" in e]
ours = {"side": "headroom", "corpus": name, "epochs": len(epochs),
        "mean_epoch_seconds": sum(later) / len(later),
        "mean_step_and_validation_seconds": sum(compute) / len(compute) if compute else None,
        "peak_rss_bytes": rss, "peak_tensor_bytes": max(e["memory"]["cpu"]["peak_bytes"] for e in epochs)}
rows = [ours] + [dict(json.loads(l), side="pyg") for l in open(f"{out}/pyg-{name}.jsonl")]
with open(f"{out}/{name}.jsonl", "w") as f:
    for r in rows:
        f.write(json.dumps(r) + "\n")
mib = lambda b: f"{b / 2**20:.0f} MiB" if b else "-"
print(f"{name}: {ours['epochs']} epochs each; mean epoch after the first, peak RSS, peak tensors")
print(f"  headroom            {ours['mean_epoch_seconds']:7.2f} s  {mib(ours['peak_rss_bytes']):>9}"
      f"  {mib(ours['peak_tensor_bytes']):>9}")
if ours["mean_step_and_validation_seconds"] is not None:
    print(f"    of which the step and validation {ours['mean_step_and_validation_seconds']:.2f} s "
          "(the rest: best.pt when validation improved, metrics)")
for r in rows[1:]:
    if r.get("mean_epoch_seconds") is None:
        print(f"  pyg {r.get('config')}: {r.get('error', 'no epochs')}")
        continue
    print(f"  pyg {r['config']:<15} {r['mean_epoch_seconds']:7.2f} s  {mib(r['peak_rss_bytes']):>9}"
          f"  {mib(r['peak_tensor_bytes']):>9}   headroom: "
          f"{r['mean_epoch_seconds'] / ours['mean_epoch_seconds']:.2f}x the speed, "
          f"{ours['peak_rss_bytes'] / r['peak_rss_bytes']:.2f}x the RSS, "
          f"{ours['peak_tensor_bytes'] / r['peak_tensor_bytes']:.2f}x the tensors")
PY
