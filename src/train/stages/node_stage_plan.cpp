#include "headroom/train/stages/node_stage_plan.hpp"

#include "headroom/train/batches/batch_sizing.hpp"

namespace headroom::train {

models::NodeGcnConfig node_model_config(const ModelOptions& model,
                                        const store::NodeGraphStore& store) {
  models::NodeGcnConfig config;
  config.num_nodes = static_cast<std::int64_t>(store.num_nodes());
  config.num_classes = static_cast<std::int64_t>(store.metadata().classes.size());
  config.hidden = model.hidden.value_or(200);
  config.dropout = model.dropout.value_or(0.5);
  config.validate();
  return config;
}

const char* NodeStagePlan::mode() const {
  if (full_batch_fits()) return "full-batch";
  return sampled && sampled->fits() ? "sampled" : "none";
}

NodeStagePlan plan_node_stage(const TrainingConfig& config, const RunContext& context,
                              const store::NodeGraphStore& store) {
  const auto model = node_model_config(config.model, store);
  const auto options = probe_options(config, context);
  NodeStagePlan plan;
  plan.budget_bytes = context.device_budget;
  plan.full_batch = plan_node_full_batch(store, model, options, config.run.seed);
  if (!plan.full_batch_fits())
    plan.sampled = plan_node_sampled(store, model, options, config.run.seed, context.device_budget);
  return plan;
}

nlohmann::json node_plan_json(const NodeStagePlan& plan) {
  nlohmann::json out = {{"mode", plan.mode()},
                        {"memory_budget", plan.budget_bytes},
                        {"full_batch_predicted_bytes", plan.full_batch.predicted_bytes}};
  if (plan.sampled) {
    const auto& sampled = *plan.sampled;
    out["sampled"] = {{"parts_per_epoch", sampled.parts},
                      {"nodes_per_part", sampled.nodes_per_part},
                      {"expected_entries_per_part", sampled.expected_entries},
                      {"predicted_bytes", sampled.predicted_bytes},
                      {"measured_bytes", sampled.measured_bytes},
                      {"floor_bytes", sampled.floor_bytes},
                      {"margin", sampled.margin},
                      {"fit", sampled.fit},
                      {"samples", sampled.samples}};
  }
  return out;
}

}  // namespace headroom::train
