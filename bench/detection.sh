#!/usr/bin/env bash
# The detection benchmark: the default chain (`headroom run`) on each dataset given, then the
# per-condition table of every model and the classical baseline written into docs/detection.md
# (between its detection-bench markers), so that the same protocol is rerun after every change.
#
#   bench/detection.sh [--epochs 5] [--threads 2] [--work DIR] [--no-doc] DATASET...
#
# DATASET: a CAN dataset directory (e.g. ../shared/data/can/hcrl_sa) or `synthetic` (the default
# dataset, generated). Stores and runs go under --work (default build/detection-bench), one folder
# per dataset; a rerun reuses finished stages only where nothing changed (headroom run's own rule).
set -euo pipefail
cd "$(dirname "$0")/.."
epochs=5
threads=2
work=build/detection-bench
write_doc=1
datasets=()
while (($#)); do
  case "$1" in
    --epochs) epochs="$2"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    --work) work="$2"; shift 2 ;;
    --no-doc) write_doc=0; shift ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    *) datasets+=("$1"); shift ;;
  esac
done
((${#datasets[@]})) || { echo "usage: bench/detection.sh [--epochs N] DATASET... (or synthetic)" >&2; exit 2; }
bin=build/bin/headroom
[[ -x "$bin" ]] || { echo "no $bin: run scripts/build.sh first" >&2; exit 1; }
mkdir -p "$work"
results=()
for dataset in "${datasets[@]}"; do
  name="$(basename "$dataset")"
  dir="$work/$name"
  mkdir -p "$dir"
  args=(run)
  [[ "$dataset" == synthetic ]] || args+=("$dataset")
  args+=(--store "$dir/store" --runs-dir "$dir/runs" --max-epochs "$epochs" --threads "$threads"
         --no-progress)
  echo "== $name: $bin ${args[*]}" >&2
  start=$SECONDS
  "$bin" "${args[@]}" >"$dir/run.log" 2>&1 || { tail -20 "$dir/run.log" >&2; exit 1; }
  echo "   $((SECONDS - start)) s; log: $dir/run.log" >&2
  results+=("$name=$dir/runs/store/evaluation/evaluation.json")
done
command="bench/detection.sh --epochs $epochs --threads $threads ${datasets[*]}"
if ((write_doc)); then
  python3 bench/detection_table.py --doc docs/detection.md --command "$command" "${results[@]}"
  echo "docs/detection.md: table written" >&2
else
  python3 bench/detection_table.py --command "$command" "${results[@]}"
fi
