#include "headroom/train/stages/node_stage_plan.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <stdexcept>
#include <string_view>
#include <vector>

#include "headroom/models/node_model_kind.hpp"
#include "headroom/train/batches/batch_sizing.hpp"
#include "headroom/util/printable_text.hpp"

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

namespace {

// What a refusal rests on: predicted bytes where the probes allowed a fit, else the size of the
// probe the budget refused.
std::string full_batch_figure(const NodeFullBatchPlan& full) {
  return full.samples.size() >= 2
             ? fmt::format("about {:.0f} MiB", full.predicted_bytes / (1 << 20))
             : fmt::format("refused on {} nodes", full.refused_nodes.value_or(0));
}

std::string over_budget_figures(const NodeStagePlan& plan) {
  const auto& sampled = *plan.sampled;
  const auto sampled_text =
      sampled.fit.samples > 0
          ? fmt::format("about {:.0f} MiB", sampled.floor_bytes / (1 << 20))
          : fmt::format("refused on {} nodes",
                        sampled.refused_parts.empty() ? 0 : sampled.refused_parts.back());
  return fmt::format("full batch: {}; smallest sampled step: {}",
                     full_batch_figure(plan.full_batch), sampled_text);
}

}  // namespace

void log_node_plan_or_refuse(const NodeStagePlan& plan, const std::filesystem::path& store,
                             std::int64_t inference_rows, RunDirectory& run) {
  const auto budget_mib = static_cast<double>(plan.budget_bytes) / (1 << 20);
  run.log(describe_node_plan(plan.full_batch, plan.budget_bytes));
  if (plan.full_batch_fits()) {
    run.log("training full-batch: one step per epoch over the whole graph");
    return;
  }
  run.log(describe_sampled_plan(*plan.sampled, plan.budget_bytes));
  if (!plan.sampled->fits())
    throw std::runtime_error(fmt::format(
        "{}: neither the full-batch step nor even the smallest sampled step fits the memory "
        "budget of {:.0f} MiB ({}). Raise --memory-budget, or train where more memory is free",
        util::printable_path(store), budget_mib, over_budget_figures(plan)));
  run.log(fmt::format(
      "training on sampled subgraphs: the full batch ({}) is over the memory "
      "budget of {:.0f} MiB; {} steps per epoch, each on the subgraph of {} random nodes; "
      "validation reads the validation documents' neighbourhood and evaluation the whole graph, "
      "{} rows at a time",
      full_batch_figure(plan.full_batch), budget_mib, plan.sampled->parts,
      plan.sampled->nodes_per_part, inference_rows));
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
