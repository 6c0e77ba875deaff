// What stage `node` will train on a node-graph store and the memory its full-batch step will take:
// shared by the stage (which holds the prediction to the budget before its first epoch) and
// `headroom plan` (which shows it), so that both plan the same model with the same settings.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "headroom/models/node_model.hpp"
#include "headroom/store/node_graph_store.hpp"
#include "headroom/train/config/training_config.hpp"
#include "headroom/train/context/run_context.hpp"
#include "headroom/train/context/run_directory.hpp"
#include "headroom/train/step/node_step_probe.hpp"

namespace headroom::train {

// The node model for the store's graph: the registered node model `model.family` names
// (models/node_model_kind.hpp), configured for the store's nodes and classes with the overrides
// it reads (--hidden, --heads, --layers, --dropout; unset: its defaults). Throws
// std::invalid_argument for an unknown model (listing the known ones), an override that model
// does not read (naming those that do), or an impossible shape.
models::NodeModelConfig node_model_config(const ModelOptions& model,
                                          const store::NodeGraphStore& store);

// The model's shape in words, for logs and `plan`: "GAT (8 heads × 8 channels, dropout 0.5)".
std::string describe_node_model(const models::NodeModelConfig& config);

// How stage `node` trains within its memory budget: full-batch when the full batch's predicted
// step fits, else sampled steps sized to the budget.
struct NodeStagePlan {
  models::NodeModelConfig model;  // what the probes trained (num_nodes: the whole graph's)
  NodeFullBatchPlan full_batch;
  std::optional<NodeSampledPlan> sampled;  // planned only when the full batch does not fit
  std::int64_t budget_bytes = 0;

  bool full_batch_fits() const { return full_batch.fits(budget_bytes); }
  // "full-batch", "sampled", or "none" (not even sampled steps fit).
  const char* mode() const;
};

// plan_node_full_batch (and, when that does not fit `context`'s device budget,
// plan_node_sampled) for the stage's model on `context`'s device and precision, with the
// configuration's optimiser settings and seed. The caller applies the device budget first
// (apply_command_budgets, apply_device_budget), so that every probe is held to it. Mutates
// process-wide state as probes do.
NodeStagePlan plan_node_stage(const TrainingConfig& config, const RunContext& context,
                              const store::NodeGraphStore& store);

// Logs to `run` what the plan found and which steps will train (sampled passes of inference
// take `inference_rows` rows at a time); throws std::runtime_error naming `store`, the budget and
// what the refusal rests on when neither the full batch nor a sampled step fits.
void log_node_plan_or_refuse(const NodeStagePlan& plan, const std::filesystem::path& store,
                             std::int64_t inference_rows, RunDirectory& run);

// The plan as JSON (evaluation.json's "training", plan --json): the mode, the predictions, and
// the sampled steps' parts when sampled.
nlohmann::json node_plan_json(const NodeStagePlan& plan);

}  // namespace headroom::train
