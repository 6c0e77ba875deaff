#!/usr/bin/env bash
# TextGCN's accuracy as the paper reports it: the mean (and spread) of test accuracy and macro-F1
# over seeds, each a whole `headroom run CORPUS_DIR` with the defaults (the seed draws the
# validation documents, the weights and dropout). Also each run's peak RSS and seconds per epoch.
#   bench/textgcn_seeds.sh CORPUS_DIR [SEEDS (default "1 2 3 4 5")] [extra headroom run flags...]
# Results go to bench-out/textgcn-<corpus>/ (-gat appended for --node-model gat; one run
# directory and store per seed) and a summary
# line per seed plus the mean to stdout. docs/benchmarks.md quotes them.
set -euo pipefail
corpus="${1:?usage: bench/textgcn_seeds.sh CORPUS_DIR [SEEDS] [flags...]}"
seeds="${2:-1 2 3 4 5}"
shift $(( $# >= 2 ? 2 : 1 ))
here="$(cd "$(dirname "$0")/.." && pwd)"
headroom="${HEADROOM_BINARY:-$here/build/bin/headroom}"
name="$(basename "$(realpath "$corpus")")"
model=gcn
previous=""
for arg in "$@"; do
  [[ "$previous" == "--node-model" ]] && model="$arg"
  previous="$arg"
done
out="bench-out/textgcn-$name"
[[ "$model" == gcn ]] || out="$out-$model"
mkdir -p "$out"
for seed in $seeds; do
  log="$out/seed$seed.log"
  /usr/bin/time -f "peak_rss_kb %M" "$headroom" run "$corpus" --seed "$seed" --progress false \
    --store "$out/store-seed$seed" --runs-dir "$out/runs-seed$seed" "$@" > "$log" 2>&1
  python3 - "$out/runs-seed$seed/store-seed$seed" "$log" "$seed" <<'PY'
import glob, json, sys
runs, log, seed = sys.argv[1:]
run = glob.glob(f"{runs}/node_*")[0]  # node_gcn, or node_gat (--node-model gat: its own out dir)
test = json.load(open(f"{run}/evaluation.json"))["splits"]["test"]
epochs = [json.loads(l) for l in open(f"{run}/metrics.jsonl") if '"type":"epoch"' in l.replace(" ", "")]
rss = [int(l.split()[1]) for l in open(log) if l.startswith("peak_rss_kb")][0]
per_epoch = sorted(e["seconds"] for e in epochs)[len(epochs) // 2]
print(json.dumps({"seed": int(seed), "accuracy": test["accuracy"], "macro_f1": test["macro_f1"],
                  "epochs": len(epochs), "median_epoch_seconds": per_epoch,
                  "peak_rss_mib": rss / 1024}))
PY
done | tee "$out/summary.jsonl"
python3 - "$out/summary.jsonl" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
for key in ("accuracy", "macro_f1"):
    values = [r[key] for r in rows]
    spread = statistics.stdev(values) if len(values) > 1 else 0.0
    print(f"{key}: mean {statistics.mean(values):.4f} ± {spread:.4f} over {len(values)} seeds")
PY
