#!/usr/bin/env bash
# Epoch throughput of the GAT teacher, data-parallel on CPU: one process, then 2 ranks started by
# torchrun (c10d Gloo over loopback), each with 1 intra-op thread and the same per-rank batch.
# Prints graphs/s of the second epoch (the first includes the peak-fit probe and warm-up) for each,
# and the scaling efficiency: throughput(2 ranks) / (2 x throughput(1 process)).
#
#   bench/distributed_bench.sh [STORE] [BATCH]     (default: stores/synthetic, 256)
#
# With a GPU: NCCL=1 bench/distributed_bench.sh STORE runs the 1-rank CUDA case as well.
set -euo pipefail
cd "$(dirname "$0")/.."
store="${1:-stores/synthetic}"
batch="${2:-256}"
bin="build/bin/headroom-train"
python="$(scripts/setup.sh | tail -1)"
torchrun="$(dirname "$python")/torchrun"
[[ -d "$store" ]] || { echo "no store at $store (headroom run builds stores/synthetic)" >&2; exit 1; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

flags=(normal --store "$store" --preset gat,teacher --threads 1 --max-epochs 2 --patience 5
       --batch-size "$batch" --pack-batches false --calibration none --progress false)

second_epoch_rate() {  # metrics.jsonl -> graphs/s of epoch 2
  "$python" - "$1" <<'PY'
import json, sys
epochs = [line for line in map(json.loads, open(sys.argv[1])) if line.get("type") == "epoch"]
print("%.1f" % epochs[1]["graphs_per_second"])
PY
}
metrics_of() { echo "$1/$(basename "$store")/teacher_normal/metrics.jsonl"; }

OMP_NUM_THREADS=1 "$bin" "${flags[@]}" --runs-dir "$work/one" > "$work/one.log" 2>&1
one=$(second_epoch_rate "$(metrics_of "$work/one")")
OMP_NUM_THREADS=1 "$torchrun" --nproc-per-node 2 --master-port "$((30000 + RANDOM % 5000))" \
  --no-python "$bin" "${flags[@]}" --runs-dir "$work/two" > "$work/two.log" 2>&1
two=$(second_epoch_rate "$(metrics_of "$work/two")")
echo "store $store, batch $batch per rank, 1 thread per rank"
echo "1 process: $one graphs/s"
echo "2 ranks:   $two graphs/s"
"$python" -c "print('scaling efficiency: %.2f' % ($two / (2 * $one)))"
if [[ "${NCCL:-0}" == 1 ]]; then
  "$torchrun" --nproc-per-node 1 --no-python "$bin" "${flags[@]}" --device cuda \
    --runs-dir "$work/gpu" > "$work/gpu.log" 2>&1 || { cat "$work/gpu.log"; exit 1; }
  echo "1 rank on cuda (NCCL): $(second_epoch_rate "$(metrics_of "$work/gpu")") graphs/s"
fi
