#!/usr/bin/env bash
# One command that checks headroom's GPU claims on a CUDA machine and writes one markdown report
# (issue 29, item 4; docs/gpu.md says how to carry binaries built elsewhere and run it).
#
# Steps, in order, each under its own time limit and all within --time-budget:
#   info        the GPUs, the driver, torch's CUDA, headroom's version
#   cuda-tests  the CUDA tests of headroom_tests (they skip without a GPU; here they must run)
#   budgets     each preset (VGAE and GAT, teacher and student) trained 2 epochs on the synthetic
#               store under --memory-budget 1GB and 4GB: the peak against the budget, OOM events
#   nccl        data-parallel training over NCCL: 1 rank, and 2 ranks where there are 2 GPUs
#   chain       the whole chain (`headroom run`) in 16-mixed, timed
#   side-by-side  bench/side_by_side.sh --device cuda against PyG, where torch_geometric imports
# Without a CUDA device every step is reported as skipped and the script exits 0. --dry-run
# writes the report with each step's commands, running none (what the CPU tests check).
set -uo pipefail
cd "$(dirname "$0")/.."

readonly ALL_STEPS="info cuda-tests budgets nccl chain side-by-side"
readonly CUDA_TESTS='FusedGatCudaTest.*:CudaTraining.*:TrainingStepOnCuda.*:ClipGradientNormOnCuda.*:OomGuardRun.*Cuda*:Collate.ToCudaCopiesEverything:CudaTensorMemory.TracksCudaTensors'
readonly PRESETS="vgae,teacher:autoencoder gat,teacher:normal vgae,student:autoencoder gat,student:normal"
readonly BUDGETS="1GB 4GB"
# The synthetic traffic of the budget runs, the side-by-side and (without a dataset) the chain:
# 4,800 training graphs, enough for PyG to time several steps of 1,024.
readonly SYNTHETIC_FRAMES=1000000

usage() {
  cat <<'EOF'
Usage: scripts/gpu-check.sh [--bundle FILE] [--out FILE] [--time-budget SECONDS] [--only STEPS]
                            [--work DIR] [--dataset DIR] [--dry-run [--gpus N]]
  --bundle FILE         a bundle from scripts/gpu-bundle.sh (binaries and the libraries they need);
                        default: this checkout's build/
  --out FILE            the markdown report (default: gpu-check.md)
  --time-budget SECONDS all steps together (default: 540, inside one 10-minute device call)
  --only STEPS          comma-separated subset of: info,cuda-tests,budgets,nccl,chain,side-by-side
  --work DIR            scratch directory (default: a new one under $TMPDIR)
  --dataset DIR         a CAN dataset for the chain step (default: the bundle's data/NAME, which
                        gpu-bundle.sh fills with hcrl_sa; else a synthetic one, generated)
  --dry-run             write the report with every step's commands, running none
  --gpus N              with --dry-run: plan for N GPUs (default 1)
EOF
}

fail_usage() {
  echo "gpu-check: $1 (see --help)" >&2
  exit 2
}

bundle="" out="gpu-check.md" time_budget=540 only="" work="" dataset="" dry_run=0 gpus="" dataset_origin=""
while (($#)); do
  case "$1" in
    --bundle | --out | --time-budget | --only | --work | --dataset | --gpus)
      (($# >= 2)) || fail_usage "$1 needs a value"
      case "$1" in
        --bundle) bundle="$2" ;;
        --out) out="$2" ;;
        --time-budget) time_budget="$2" ;;
        --only) only="$2" ;;
        --work) work="$2" ;;
        --dataset) dataset="$2" ;;
        --gpus) gpus="$2" ;;
      esac
      shift 2
      ;;
    --dry-run) dry_run=1; shift ;;
    -h | --help) usage; exit 0 ;;
    *) fail_usage "unknown option '$1'" ;;
  esac
done
[[ "$time_budget" =~ ^[1-9][0-9]*$ ]] ||
  fail_usage "--time-budget must be a positive number of seconds, not '$time_budget'"
if [[ -n "$gpus" ]]; then
  ((dry_run)) || fail_usage "--gpus only plans a --dry-run; a real run counts the GPUs"
  [[ "$gpus" =~ ^[0-9]+$ ]] || fail_usage "--gpus must be a number, not '$gpus'"
fi
steps="$ALL_STEPS"
if [[ -n "$only" ]]; then
  steps=""
  for step in ${only//,/ }; do
    [[ " $ALL_STEPS " == *" $step "* ]] ||
      fail_usage "unknown step '$step' in --only (steps: ${ALL_STEPS// /, })"
    steps+="$step "
  done
fi
[[ -z "$bundle" || -f "$bundle" ]] || fail_usage "no bundle at '$bundle' (make one with scripts/gpu-bundle.sh)"
[[ -z "$dataset" || -d "$dataset" ]] || fail_usage "no dataset directory at '$dataset'"

if ((dry_run)); then
  work="${work:-${TMPDIR:-/tmp}/headroom-gpu-check.WORK}"  # named in the plan, never created
else
  work="${work:-$(mktemp -d "${TMPDIR:-/tmp}/headroom-gpu-check.XXXXXX")}"
  mkdir -p "$work" || fail_usage "cannot create the work directory '$work'"
fi
python="${HEADROOM_PYTHON:-python3}"

# ---- The binaries: this checkout's build, or a carried bundle unpacked into the work directory.
bin_dir=build/bin
tests_bin=build/tests/headroom_tests
if [[ -n "$bundle" ]] && ((!dry_run)); then
  tar -xf "$bundle" -C "$work" || fail_usage "cannot unpack '$bundle'"
  bin_dir="$work/headroom-gpu/bin"
  tests_bin="$bin_dir/headroom_tests"
  # The bundle's libraries first, then torch's and the CUDA wheels' of this machine's Python.
  torch_libs="$("$python" - <<'PY' 2>/dev/null
import glob, os, torch
root = os.path.dirname(os.path.dirname(torch.__file__))
print(":".join([os.path.join(os.path.dirname(torch.__file__), "lib")] +
               sorted(glob.glob(os.path.join(root, "nvidia", "*", "lib")))))
PY
)"
  export LD_LIBRARY_PATH="$work/headroom-gpu/lib:${torch_libs}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  # The test binary runs the binaries by the absolute paths it was built with: link them to the
  # bundle's where nothing is there (nothing that exists is replaced).
  while read -r path; do
    [[ -e "$path" || -L "$path" ]] && continue
    mkdir -p "$(dirname "$path")" && ln -s "$(realpath "$bin_dir")/$(basename "$path")" "$path"
  done <"$work/headroom-gpu/binary-paths"
  # The dataset the bundle carries, for the chain (a --dataset given wins).
  if [[ -z "$dataset" ]]; then
    for carried in "$work/headroom-gpu/data/"*/; do
      [[ -d "$carried" ]] && { dataset="${carried%/}"; dataset_origin="carried in the bundle"; }
      break
    done
  fi
fi
if [[ -z "$dataset" ]]; then
  dataset_line="synthetic, generated"
else
  dataset_line="$(basename "$dataset") (${dataset_origin:-given with --dataset})"
fi
headroom="$bin_dir/headroom"

# ---- How many GPUs: nvidia-smi's list (HEADROOM_NVIDIA_SMI names another program, for tests).
if ((dry_run)); then
  gpu_count="${gpus:-1}"
else
  gpu_count="$("${HEADROOM_NVIDIA_SMI:-nvidia-smi}" -L 2>/dev/null | grep -c '^GPU ' || true)"
fi

# ---- The report: a table of steps, then each step's commands, numbers and output tail.
started=$(date +%s)
rows=()
details=""

remaining() { echo $((time_budget - ($(date +%s) - started))); }

# record STEP STATUS SECONDS SUMMARY
record() { rows+=("| $1 | $2 | $3 | $4 |"); }

# run_logged STEP LIMIT COMMAND...: runs COMMAND (or, dry, lists it) with its output in the step's
# log; returns its exit status (124 when it ran past LIMIT seconds).
run_logged() {
  local step="$1" limit="$2"
  shift 2
  local log="$work/$step.log"
  details+=$'\n'"    \$ $*"
  if ((dry_run)); then return 0; fi
  timeout --kill-after=10 "$limit" "$@" >>"$log" 2>&1
}

begin_step() {
  details+=$'\n\n'"### $1"$'\n'
}

# What a step sets (not echoes: the steps run in this shell, so that their details are kept).
step_status="" step_summary=""
result() { step_status="$1" step_summary="$2"; }

# The largest tensor peak (MiB), its share of the budget and the OOM events of a run directory.
budget_numbers() {
  "$python" - "$1" <<'PY'
import json, sys
peak = use = ooms = 0
try:
    for line in open(sys.argv[1] + "/metrics.jsonl"):
        row = json.loads(line)
        if row.get("type") != "epoch":
            continue
        memory = row.get("memory", {}).get("cuda", {})
        peak = max(peak, memory.get("peak_allocated_bytes", 0))
        use = max(use, row.get("utilization", 0))
        ooms += row.get("oom_events", 0)
    print(f"{peak / 2**20:.0f} MiB, {100 * use:.0f}% of the budget, {ooms} OOM events")
except OSError as error:
    print(f"no metrics ({error.strerror})")
PY
}

ensure_store() {
  [[ -d "$work/store" ]] && return 0
  # The chain step may have generated the traffic already (the same command, the same files).
  if [[ ! -d "$work/synthetic" ]]; then
    run_logged data 300 "$headroom" generate --out "$work/synthetic" --frames "$SYNTHETIC_FRAMES" || return 1
  fi
  run_logged data 300 "$headroom" preprocess "$work/synthetic" --out "$work/store" --threads 8
}

step_info() {
  run_logged info 60 "${HEADROOM_NVIDIA_SMI:-nvidia-smi}"
  run_logged info 60 "$headroom" --version
  run_logged info 60 "$python" -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda, torch.cuda.device_count(), 'device(s)')"
  ((dry_run)) && result "planned" "what the machine has" || result "ok" "$gpu_count GPU(s)"
}

step_cuda_tests() {
  run_logged cuda-tests "$(remaining)" "$tests_bin" "--gtest_filter=$CUDA_TESTS" --gtest_brief=1
  local status=$?
  ((dry_run)) && { result "planned" "the CUDA tests"; return; }
  local passed failed skipped
  passed=$(grep -oP '\[  PASSED  \] \K[0-9]+' "$work/cuda-tests.log" | tail -1)
  skipped=$(grep -oP '\[  SKIPPED \] \K[0-9]+' "$work/cuda-tests.log" | tail -1)
  failed=$(grep -oP '\[  FAILED  \] \K[0-9]+(?= test)' "$work/cuda-tests.log" | tail -1)
  local summary="${passed:-0} passed, ${failed:-0} failed, ${skipped:-0} skipped"
  ((status == 0 && ${skipped:-0} == 0)) && result "pass" "$summary" || result "FAIL" "$summary"
}

step_budgets() {
  ((dry_run)) || ensure_store || { result "FAIL" "could not make the synthetic store"; return; }
  local all_ok=1 entry preset command budget summary=""
  for entry in $PRESETS; do
    preset="${entry%%:*}" command="${entry#*:}"
    for budget in $BUDGETS; do
      local runs="$work/runs-$budget"
      run_logged budgets "$(remaining)" "$headroom" "$command" --store "$work/store" \
        --preset "$preset" --device cuda --memory-budget "$budget" --max-epochs 2 \
        --runs-dir "$runs" --dataset "${preset/,/-}" --progress false || all_ok=0
      ((dry_run)) && continue
      local dir
      dir=$(dirname "$(ls -d "$runs/${preset/,/-}"/*/metrics.jsonl 2>/dev/null | head -1)")
      details+=$'\n'"    -> $preset at $budget: $(budget_numbers "$dir")"
    done
  done
  ((dry_run)) && { result "planned" "4 presets x {$BUDGETS}"; return; }
  ((all_ok)) && result "pass" "every run finished (numbers below)" || result "FAIL" "a run failed (log below)"
}

step_nccl() {
  ((dry_run)) || ensure_store || { result "FAIL" "could not make the synthetic store"; return; }
  local ranks ok=1 done_ranks=""
  for ranks in 1 2; do
    ((ranks <= gpu_count)) || continue
    run_logged nccl "$(remaining)" "$python" -m torch.distributed.run --nproc-per-node "$ranks" \
      --no-python "$headroom" normal --store "$work/store" --preset gat,student --device cuda \
      --max-epochs 2 --runs-dir "$work/nccl-$ranks" --progress false || ok=0
    done_ranks+="$ranks "
  done
  ((dry_run)) && { result "planned" "ranks: ${done_ranks% }"; return; }
  ((ok)) && result "pass" "ranks: ${done_ranks% }" || result "FAIL" "ranks: ${done_ranks% } (log below)"
}

step_chain() {
  local data="$dataset"
  if [[ -z "$data" ]]; then
    data="$work/synthetic"
    ((dry_run)) || [[ -d "$data" ]] ||
      run_logged chain 300 "$headroom" generate --out "$data" --frames "$SYNTHETIC_FRAMES"
  fi
  local begin=$(date +%s)
  run_logged chain "$(remaining)" "$headroom" run "$data" --device cuda --precision 16-mixed \
    --max-epochs 5 --store "$work/chain-store" --runs-dir "$work/chain-runs" --progress false
  local status=$?
  ((dry_run)) && { result "planned" "16-mixed on $(basename "$data")"; return; }
  ((status == 0)) && result "pass" "$(($(date +%s) - begin)) s on $(basename "$data"), 16-mixed" ||
    result "FAIL" "exit $status after $(($(date +%s) - begin)) s"
}

step_side_by_side() {
  if ((!dry_run)) && ! "$python" -c "import torch_geometric" 2>/dev/null; then
    result "skipped" "torch_geometric does not import"
    return
  fi
  ((dry_run)) || ensure_store || { result "FAIL" "could not make the synthetic store"; return; }
  HEADROOM_PYTHON="$python" HEADROOM_TRAINING_BENCH="$bin_dir/training_bench" \
    run_logged side-by-side "$(remaining)" bench/side_by_side.sh --repeats 1 \
    --out "$work/side_by_side.jsonl" --store "$work/store" --batch-sizes 256,1024 --batches 6 \
    --models 'gat,teacher;gat,student' --device cuda
  local status=$?
  ((dry_run)) && { result "planned" "headroom and PyG, GAT teacher and student"; return; }
  ((status == 0)) && result "pass" "ratios in the log below" || result "FAIL" "exit $status"
}

for step in $steps; do
  if ((!dry_run && gpu_count == 0)); then
    record "$step" skipped - "no CUDA device"
    continue
  fi
  if (($(remaining) < 20)); then
    record "$step" skipped - "the time budget is spent"
    continue
  fi
  begin_step "$step"
  step_begin=$(date +%s)
  "step_${step//-/_}"
  record "$step" "$step_status" "$(($(date +%s) - step_begin))" "$step_summary"
  if ((!dry_run)) && [[ -f "$work/$step.log" ]]; then
    details+=$'\n\n'"Output (last 40 lines):"$'\n\n```\n'"$(tail -n 40 "$work/$step.log")"$'\n```'
  fi
done

{
  echo "# headroom GPU check"
  echo
  echo "$(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)," \
    "$( ((dry_run)) && echo "dry run (nothing ran), planned for $gpu_count GPU(s)" || echo "$gpu_count GPU(s)")"
  echo
  echo "Dataset for the chain: $dataset_line."
  ((dry_run || gpu_count > 0)) || echo -e "\nNo CUDA device: every GPU check skipped."
  echo
  echo "| step | status | seconds | summary |"
  echo "|---|---|---|---|"
  printf '%s\n' "${rows[@]}"
  echo "$details"
} >"$out.tmp" && mv "$out.tmp" "$out"
echo "gpu-check: report written to $out"
