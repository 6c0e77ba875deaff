// --gradient-checkpointing auto (train/families/model_options.hpp): whether a stage recomputes its
// GAT layers in the backward pass, decided by the planner before the first epoch instead of
// always. Checkpointing trades about one extra forward per step for less activation memory; it is
// worth it only where the memory is needed. The step without it is measured like any step
// (probe batches, the fit, the fit cache: batch_sizing.hpp) and its peak predicted for the largest
// batch the stage packs — its batch_size graphs with the most nodes. When that is within the
// packing budget, the packer forms the same batches without checkpointing and each step runs
// faster: off. Otherwise on, and the budget packs as it always did.
#pragma once

#include <cstdint>
#include <string>

#include "headroom/store/graph_store.hpp"
#include "headroom/train/batches/batch_sizing.hpp"
#include "headroom/train/config/training_config.hpp"
#include "headroom/train/context/run_context.hpp"
#include "headroom/train/families/model_family.hpp"

namespace headroom::train {

struct CheckpointingChoice {
  bool on = true;
  // Whether the unchecked step was measured: not with --pack-batches false, where nothing is
  // planned by measurement and auto keeps checkpointing on (the batches are --batch-size graphs,
  // split by the OOM guard).
  bool measured = false;
  MeasuredPeak unchecked;         // its fit (and samples), when measured: reused when off is chosen
  std::int64_t batch_graphs = 0;  // the largest batch: its graphs,
  std::uint64_t batch_nodes = 0;  // nodes
  std::uint64_t batch_edges = 0;  // and edges
  double unchecked_peak_bytes = 0;  // its predicted peak without checkpointing
  double packing_budget_bytes = 0;  // what a batch may take (less `reserved_bytes`)
  bool fit_from_cache = false;      // the unchecked step's fit was read, not measured

  // One line for the run's log and `plan`: the choice and the numbers behind it.
  std::string describe() const;
  // The unchecked step's measurement when off was chosen (the step that will train), else null:
  // what plan_batch_sizing and `plan` pack with instead of measuring again.
  const MeasuredPeak* fit_when_off() const { return measured && !on ? &unchecked : nullptr; }
};

// `unchecked` is the stage's model with checkpointing off and `unchecked_step` its probed step
// (with --pack-batches false: on, unmeasured)
// (a stage's ProbeTarget built from that model); `reserved_bytes` as plan_batch_sizing takes it.
// Every rank adopts rank 0's fit, so that all ranks choose alike. An OOM in a probe propagates as
// plan_batch_sizing's does.
CheckpointingChoice choose_gradient_checkpointing(
    const TrainingConfig& config, const RunContext& context, const store::GraphStore& store,
    const ModelSpec& unchecked, const ProbeTarget& unchecked_step, double reserved_bytes = 0);

}  // namespace headroom::train
