// The run context (run_context.hpp) of a command on one big graph: a node-graph store, whose
// mapped arrays are page cache and whose training batch is a list of seed nodes. Resolved by the
// same rules as a graph store's run (device_budget.hpp).
#pragma once

#include "headroom/store/node_graph_store.hpp"
#include "headroom/train/config/training_config.hpp"
#include "headroom/train/context/run_context.hpp"

namespace headroom::train {

// resolve_run_context(config), then the host plan (the process, the mapped graph, the seed
// batches: ids and labels, 16 bytes a node) and the device budget.
RunContext resolve_node_run_context(const TrainingConfig& config,
                                    const store::NodeGraphStore& store);

}  // namespace headroom::train
