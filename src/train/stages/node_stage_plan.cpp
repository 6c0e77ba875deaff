#include "headroom/train/stages/node_stage_plan.hpp"

#include <fmt/format.h>
#include <stdexcept>

#include "headroom/train/batches/batch_sizing.hpp"

namespace headroom::train {

models::NodeModelConfig node_model_config(const ModelOptions& model,
                                          const store::NodeGraphStore& store) {
  models::NodeModelConfig config;
  config.architecture = models::node_architecture(model.family);
  config.num_nodes = static_cast<std::int64_t>(store.num_nodes());
  config.num_classes = static_cast<std::int64_t>(store.metadata().classes.size());
  const bool gat = config.architecture == models::NodeArchitecture::kGat;
  // Flags no node model reads are refused rather than ignored.
  if (!gat && model.heads)
    throw std::invalid_argument(
        "--heads applies to the node GAT (--node-model gat; plan: --preset gat), not the GCN");
  if (model.layers)
    throw std::invalid_argument("--layers does not apply to the node models: both have two layers");
  // TextGCN's 200 hidden units; GAT's 8 heads of 8 channels (Veličković et al.'s citation graphs).
  config.hidden = model.hidden.value_or(gat ? kNodeGatChannels : kTextGcnHidden);
  config.heads = gat ? model.heads.value_or(kNodeGatHeads) : 1;
  config.dropout = model.dropout.value_or(0.5);
  config.validate();
  return config;
}

std::string describe_node_model(const models::NodeModelConfig& config) {
  if (config.architecture == models::NodeArchitecture::kGat)
    return fmt::format("GAT ({} heads × {} channels, dropout {})", config.heads, config.hidden,
                       config.dropout);
  return fmt::format("GCN ({} hidden, dropout {})", config.hidden, config.dropout);
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
  plan.model = model;
  plan.budget_bytes = context.device_budget;
  plan.full_batch = plan_node_full_batch(store, model, options, config.run.seed);
  if (!plan.full_batch_fits())
    plan.sampled = plan_node_sampled(store, model, options, config.run.seed, context.device_budget);
  return plan;
}

nlohmann::json node_plan_json(const NodeStagePlan& plan) {
  nlohmann::json out = {{"mode", plan.mode()},
                        {"model", plan.model},
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
