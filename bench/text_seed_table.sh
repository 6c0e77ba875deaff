#!/usr/bin/env bash
# The node models' accuracy on TextGCN's corpora, as docs/text-graphs.md's seed table gives it:
# test accuracy and macro-F1, mean ± sample standard deviation over seeds, per corpus and node
# model. Each cell is a whole `headroom run CORPUS_DIR --node-model MODEL --seed S` with the node
# task's defaults (the seed draws the validation documents, the weights, dropout), one thread.
#
#   bench/text_seed_table.sh [--out DIR] [--corpora "r8 mr 20ng"] [--models "gcn gat sgc"]
#                            [--seeds "1 2 3 4 5"] [--table-only] [-- extra headroom run flags]
#
# One JSON line per finished run goes to DIR/runs.jsonl (default bench-out/text-seed-table); a run
# already there is not run again, so the script resumes and several invocations (say, one per
# model) fill one table. The table (markdown) is printed from runs.jsonl at the end; --table-only
# prints it without running anything. Corpora are read from $TEXT_DATA (default
# ../shared/data/text beside this checkout); the binary is $HEADROOM_BINARY (default build/bin).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
headroom="${HEADROOM_BINARY:-$here/build/bin/headroom}"
data="${TEXT_DATA:-$here/../shared/data/text}"
out="bench-out/text-seed-table"
corpora="r8 mr 20ng"
models="gcn gat sgc"
seeds="1 2 3 4 5"
table_only=false
while (($#)); do
  case "$1" in
    --out) out="$2"; shift 2 ;;
    --corpora) corpora="$2"; shift 2 ;;
    --models) models="$2"; shift 2 ;;
    --seeds) seeds="$2"; shift 2 ;;
    --table-only) table_only=true; shift ;;
    --) shift; break ;;
    *) echo "unknown argument $1 (see the header of $0)" >&2; exit 2 ;;
  esac
done
mkdir -p "$out"
results="$out/runs.jsonl"
touch "$results"

already_run() {  # corpus model seed
  grep -q "\"corpus\": \"$1\", \"model\": \"$2\", \"seed\": $3," "$results"
}

run_one() {  # corpus model seed [flags...]
  local corpus="$1" model="$2" seed="$3"
  shift 3
  local cell="$out/$corpus-$model-seed$seed"
  rm -rf "$cell" && mkdir -p "$cell"
  local started=$SECONDS
  "$headroom" run "$data/$corpus" --node-model "$model" --seed "$seed" --threads 1 \
    --progress false --store "$cell/store" --runs-dir "$cell/runs" "$@" > "$cell/log" 2>&1
  python3 - "$cell/runs/store/node_$model" "$corpus" "$model" "$seed" "$((SECONDS - started))" \
    >> "$results" <<'PY'
import json, sys
run, corpus, model, seed, seconds = sys.argv[1:]
test = json.load(open(f"{run}/evaluation.json"))["splits"]["test"]
epochs = sum(1 for line in open(f"{run}/metrics.jsonl") if '"type":"epoch"' in line.replace(" ", ""))
print(json.dumps({"corpus": corpus, "model": model, "seed": int(seed),
                  "accuracy": test["accuracy"], "macro_f1": test["macro_f1"],
                  "epochs": epochs, "wall_seconds": int(seconds)}))
PY
  rm -rf "$cell/store" "$cell"/runs/store/node_"$model"/*.pt  # the table needs neither
  tail -n 1 "$results"
}

if ! $table_only; then
  for corpus in $corpora; do
    for model in $models; do
      for seed in $seeds; do
        already_run "$corpus" "$model" "$seed" || run_one "$corpus" "$model" "$seed" "$@"
      done
    done
  done
fi

python3 - "$results" <<'PY'
import collections, json, statistics, sys
cells = collections.defaultdict(list)
for line in open(sys.argv[1]):
    row = json.loads(line)
    cells[(row["corpus"], row["model"])].append(row)
def spread(values):
    mean = statistics.mean(values)
    deviation = statistics.stdev(values) if len(values) > 1 else float("nan")
    return f"{mean:.4f} ± {deviation:.4f}" if len(values) > 1 else f"{mean:.4f} (1 run)"
print("| corpus | model | seeds | test accuracy | macro-F1 | epochs | wall s per run |")
print("|---|---|---|---|---|---|---|")
def order(cell):  # TextGCN's corpora and headroom's node models in their usual order first
    corpus, model = cell
    known_corpora, known_models = ["r8", "mr", "20ng"], ["gcn", "gat", "sgc"]
    rank = lambda name, known: (known.index(name), "") if name in known else (len(known), name)
    return rank(corpus, known_corpora), rank(model, known_models)
for (corpus, model), rows in sorted(cells.items(), key=lambda item: order(item[0])):
    seeds = ",".join(str(r["seed"]) for r in sorted(rows, key=lambda r: r["seed"]))
    epochs = [r["epochs"] for r in rows]
    walls = [r["wall_seconds"] for r in rows]
    print(f"| {corpus} | {model} | {seeds} | {spread([r['accuracy'] for r in rows])} | "
          f"{spread([r['macro_f1'] for r in rows])} | {min(epochs)}–{max(epochs)} | "
          f"{min(walls)}–{max(walls)} |")
PY
