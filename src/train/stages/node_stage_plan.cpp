#include "headroom/train/stages/node_stage_plan.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <stdexcept>
#include <string_view>
#include <vector>

#include "headroom/models/node_model_kind.hpp"
#include "headroom/train/batches/batch_sizing.hpp"

namespace headroom::train {

namespace {

// Throws std::invalid_argument when `flag` was given (`given`) and `kind` does not read `option`:
// a flag the model would ignore is refused, naming the node models that read it.
void require_read(const models::NodeModelKind& kind, std::string_view option, const char* flag,
                  bool given) {
  if (!given || kind.reads_option(option)) return;
  std::vector<std::string_view> readers;
  for (const auto name : models::node_model_names())
    if (models::node_model_kind(name).reads_option(option)) readers.push_back(name);
  throw std::invalid_argument(
      fmt::format("{} does not apply to the node model {}{}", flag, kind.name(),
                  readers.empty() ? std::string(": no node model reads it")
                                  : fmt::format(" (it does to {})", fmt::join(readers, ", "))));
}

}  // namespace

models::NodeModelConfig node_model_config(const ModelOptions& model,
                                          const store::NodeGraphStore& store) {
  const auto& kind = models::node_model_kind(model.family);
  require_read(kind, "hidden", "--hidden", model.hidden.has_value());
  require_read(kind, "heads", "--heads", model.heads.has_value());
  require_read(kind, "layers", "--layers", model.layers.has_value());
  require_read(kind, "dropout", "--dropout", model.dropout.has_value());
  auto config = kind.configure(static_cast<std::int64_t>(store.num_nodes()),
                               static_cast<std::int64_t>(store.metadata().classes.size()),
                               {.hidden = model.hidden,
                                .heads = model.heads,
                                .layers = model.layers,
                                .dropout = model.dropout});
  config.validate();
  return config;
}

std::string describe_node_model(const models::NodeModelConfig& config) {
  return models::node_model_kind(config.architecture).describe(config);
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
                        {"full_batch_predicted_bytes", plan.full_batch.predicted_bytes},
                        {"full_batch_samples", plan.full_batch.samples}};
  if (plan.full_batch.refused_nodes)
    out["full_batch_refused_nodes"] = *plan.full_batch.refused_nodes;
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
                      {"samples", sampled.samples},
                      {"refused_parts", sampled.refused_parts}};
  }
  return out;
}

}  // namespace headroom::train
