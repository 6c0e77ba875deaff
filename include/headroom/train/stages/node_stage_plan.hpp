// What stage `node` will train on a node-graph store and the memory its full-batch step will take:
// shared by the stage (which holds the prediction to the budget before its first epoch) and
// `headroom plan` (which shows it), so that both plan the same model with the same settings.
#pragma once

#include "headroom/models/node_gcn.hpp"
#include "headroom/store/node_graph_store.hpp"
#include "headroom/train/config/training_config.hpp"
#include "headroom/train/context/run_context.hpp"
#include "headroom/train/step/node_step_probe.hpp"

namespace headroom::train {

// TextGCN's model for the store's graph: its nodes and classes, the configuration's hidden width
// and dropout (200 and 0.5 unless set). Throws std::invalid_argument for an impossible shape.
models::NodeGcnConfig node_model_config(const ModelOptions& model,
                                        const store::NodeGraphStore& store);

// plan_node_full_batch for the stage's model on `context`'s device and precision, with the
// configuration's optimiser settings and seed. Mutates process-wide state as probes do.
NodeFullBatchPlan plan_node_stage(const TrainingConfig& config, const RunContext& context,
                                  const store::NodeGraphStore& store);

}  // namespace headroom::train
