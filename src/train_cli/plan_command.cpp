#include <torch/torch.h>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <algorithm>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "headroom/cli/commands.hpp"
#include "headroom/memory/memory_plan.hpp"
#include "headroom/train/batches/batch_sizing.hpp"
#include "headroom/train/batches/checkpointing_choice.hpp"
#include "headroom/train/context/command_budget.hpp"
#include "headroom/train/context/host_memory.hpp"
#include "headroom/train/context/node_run_context.hpp"
#include "headroom/train/families/model_checkpoint.hpp"
#include "headroom/train/families/model_family.hpp"
#include "headroom/train/loop/training_loop.hpp"
#include "headroom/train/stages/autoencoder_stage.hpp"
#include "headroom/train/stages/classifier_stage.hpp"
#include "headroom/train/stages/node_classifier_stage.hpp"
#include "headroom/train/stages/node_stage_plan.hpp"
#include "headroom/train/step/precision.hpp"
#include "headroom/train_cli/node_task_flags.hpp"
#include "headroom/train_cli/plan_json.hpp"
#include "headroom/train_cli/train_commands.hpp"
#include "headroom/train_cli/training_flags.hpp"
#include "headroom/util/byte_size.hpp"
#include "headroom/util/printable_text.hpp"

namespace headroom::cli {
namespace {

// The graph at the q-th quantile of the training split by node count (its edges alongside).
memory::GraphSize quantile_graph(const store::GraphStore& store, double q) {
  const auto index = store.size_index();
  std::vector<std::pair<std::uint32_t, std::uint32_t>> sizes;
  for (const auto id : store.train_ids())
    sizes.emplace_back(index.num_nodes[id], index.num_edges[id]);
  if (sizes.empty()) return {};
  std::sort(sizes.begin(), sizes.end());
  const auto at = static_cast<std::size_t>(q * static_cast<double>(sizes.size() - 1));
  return {static_cast<double>(sizes[at].first), static_cast<double>(sizes[at].second)};
}

std::int64_t parameter_count(const torch::nn::Module& module) {
  std::int64_t n = 0;
  for (const auto& p : module.parameters()) n += p.numel();
  return n;
}

// The teacher of a distilled student, by how the run would hold it.
memory::TeacherCost teacher_cost(const train::TrainingConfig& config,
                                 const train::RunContext& context, const store::GraphStore& store,
                                 const models::ModelInputs& inputs) {
  if (!config.distillation.enabled) return {"none"};
  memory::TeacherCost cost;
  std::int64_t latent = 0;
  std::int64_t in_features = 0;
  // The teacher's own configuration: from its checkpoint, else the family's teacher preset.
  const auto& family = train::model_family(config.model.family);
  nlohmann::json teacher_config;
  if (!config.distillation.teacher_path.empty()) {
    teacher_config = train::read_checkpoint_info(
                         train::resolve_checkpoint_path(config.distillation.teacher_path))
                         .model_config;
  } else {
    train::TrainingConfig teacher;  // the preset, without the student's overrides
    teacher.model.family = config.model.family;
    teacher.model.size = models::ModelSize::kTeacher;
    teacher_config = family.resolve_config(teacher.model, inputs);
  }
  cost.parameters = parameter_count(*family.build(teacher_config));
  if (family.role() == train::FamilyRole::kAutoencoder) {
    latent = teacher_config.at("latent").get<std::int64_t>();
    in_features = teacher_config.at("in_features").get<std::int64_t>();
  }
  const double parameter_bytes = 4.0 * static_cast<double>(cost.parameters);
  if (config.distillation.teacher_cache) {
    cost.mode = "cache";
    // float32 logits per graph (classifiers), or latent and reconstruction per node (VGAE).
    cost.host_bytes = family.role() == train::FamilyRole::kClassifier
                          ? 2.0 * 4.0 * static_cast<double>(store.num_graphs())
                          : 4.0 * static_cast<double>(latent + in_features - 1) *
                                static_cast<double>(store.metadata().num_nodes);
  } else if (config.distillation.offload_teacher && context.device.is_cuda()) {
    cost.mode = "offloaded";
    cost.device_bytes = parameter_bytes;
    cost.host_bytes = parameter_bytes;
  } else {
    cost.mode = "in memory";
    cost.device_bytes = parameter_bytes;
  }
  return cost;
}

// The teacher's host bytes by how the run would hold it: pinned when offloaded, mapped when
// cached. The host plan takes them before any probing runs (the baseline is the process as a run
// starts it).
train::TeacherHostBytes teacher_host_bytes(const memory::TeacherCost& teacher) {
  if (teacher.mode == "offloaded") return {teacher.host_bytes, 0.0};
  if (teacher.mode == "cache") return {0.0, teacher.host_bytes};
  return {};
}

// Every limit found and every source skipped, under the host section.
std::string render_host_limits(const memory::HostMemoryLimit& limit) {
  std::string out = "  limits found:";
  for (const auto& source : limit.limits)
    out += fmt::format(" {} {};", source.name,
                       util::format_byte_size(static_cast<double>(source.bytes)));
  out.back() = '\n';
  for (const auto& ignored : limit.ignored) out += "  ignored: " + ignored + "\n";
  return out;
}

nlohmann::json host_json(const memory::HostMemoryPlan& plan, const memory::HostMemoryLimit& limit) {
  nlohmann::json json = plan;
  json["limit_bytes"] = limit.bytes;
  json["limit_source"] = limit.source;
  json["limits"] = nlohmann::json::array();
  for (const auto& source : limit.limits)
    json["limits"].push_back({{"name", source.name}, {"bytes", source.bytes}});
  json["ignored"] = limit.ignored;
  return json;
}

// The highest peak the probe measured (0 when the fit came from the cache without samples).
double largest_probe_peak(const train::MeasuredPeak& measured) {
  double largest = 0;
  for (const auto& sample : measured.samples) largest = std::max(largest, sample.peak_bytes);
  return largest;
}

// `plan` on a node-graph store: stage node's full-batch step, predicted from probes on induced
// subgraphs, against the memory budget, and when it is over, the sampled steps that would train
// instead (train/stages/node_stage_plan.hpp).
// --gradient-checkpointing auto on a family that checkpoints: the stage's choice for the plain
// objective (train/batches/checkpointing_choice.hpp), applied to `model`; nothing otherwise.
std::optional<train::CheckpointingChoice> choose_checkpointing(const train::TrainingConfig& config,
                                                               const train::RunContext& context,
                                                               const store::GraphStore& store,
                                                               train::ModelSpec& model) {
  if (config.model.gradient_checkpointing != train::Checkpointing::kAuto ||
      !model.config.contains("gradient_checkpointing"))
    return std::nullopt;
  auto unchecked = model;
  unchecked.config["gradient_checkpointing"] = false;
  const auto& family = train::model_family(unchecked.family);
  const auto choice = train::choose_gradient_checkpointing(
      config, context, store, unchecked,
      {[&family, &unchecked] { return family.plain_subject(unchecked.config); },
       "plain",
       {},
       "train"});
  model.config["gradient_checkpointing"] = choice.on;
  return choice;
}

// `plan` on a node-graph store, computed once and then rendered as JSON or as text.
struct NodeGraphPlan {
  train::TrainingConfig config;
  std::string device;
  train::NodeStagePlan plan;
  std::int64_t budget = 0;
};

NodeGraphPlan plan_node_graph(const TrainingFlags& flags, const CLI::App& command) {
  auto config = flags.resolve(train::kNodeStage);
  train::apply_node_task_defaults(config, node_defaults_given(command));
  train::validate(config);
  const auto store = store::NodeGraphStore::open(config.run.store);
  const auto context = train::resolve_node_run_context(config, store);
  // The probes run inside the budget being planned for, as the stage's own do: one the budget
  // refuses is shown as refused, never measured over it.
  train::apply_device_budget(config, context);
  auto plan = train::plan_node_stage(config, context, store);
  return {config, context.device.str(), std::move(plan), context.device_budget};
}

nlohmann::json plan_json(const NodeGraphPlan& node) {
  const auto& full = node.plan.full_batch;
  nlohmann::json out = {{"task", "node classification"},
                        {"model", node.plan.model},
                        {"mode", node.plan.mode()},
                        {"nodes", full.nodes},
                        {"entries", full.entries},
                        {"predicted_peak_bytes", full.predicted_bytes},
                        {"fit", full.fit},
                        {"samples", full.samples},
                        {"budget_bytes", node.budget},
                        {"fits", node.plan.full_batch_fits()}};
  if (full.refused_nodes) out["refused_nodes"] = *full.refused_nodes;
  if (node.plan.sampled) out["sampled"] = train::node_plan_json(node.plan)["sampled"];
  return out;
}

void print_plan(const NodeGraphPlan& node) {
  const auto& plan = node.plan;
  const auto& full = plan.full_batch;
  fmt::print("stage node on {} ({}, device {})\n", util::printable_path(node.config.run.store),
             train::describe_node_model(plan.model), node.device);
  fmt::print("  {:>8} {:>12} {:>14}\n", "nodes", "entries", "peak");
  for (const auto& sample : full.samples)
    fmt::print("  {:>8} {:>12} {:>10.1f} MiB  probe, full batch of an induced subgraph\n",
               sample.nodes, sample.edges, sample.peak_bytes / (1 << 20));
  if (full.refused_nodes)
    fmt::print("  {:>8} {:>12} {:>14}  probe, full batch of an induced subgraph\n",
               *full.refused_nodes, "", "over budget");
  if (full.samples.size() >= 2)
    fmt::print("  {:>8} {:>12} {:>10.1f} MiB  predicted, the whole graph\n", full.nodes,
               full.entries, full.predicted_bytes / (1 << 20));
  fmt::print("{}\n", train::describe_node_plan(full, node.budget));
  if (!plan.sampled) return;
  for (const auto& sample : plan.sampled->samples)
    fmt::print("  {:>8} {:>12} {:>10.1f} MiB  probe, sampled step on a part\n", sample.nodes,
               sample.edges, sample.peak_bytes / (1 << 20));
  for (const auto nodes : plan.sampled->refused_parts)
    fmt::print("  {:>8} {:>12} {:>14}  probe, sampled step on a part\n", nodes, "", "over budget");
  fmt::print("{}\n", train::describe_sampled_plan(*plan.sampled, node.budget));
}

// `plan` on a graph store (graph classification), computed once and then rendered.
struct GraphStorePlan {
  std::string mode;
  memory::MemoryPlan plan;
  std::optional<train::CheckpointingChoice> checkpointing;
  memory::HostMemoryPlan host;
  memory::HostMemoryLimit host_limit;
  train::MeasuredPeak measured;
};

GraphStorePlan plan_graph_store(const TrainingFlags& flags, const std::string& mode) {
  auto config = flags.resolve(train::kNormalStage);
  flags.require_flags_of_family(config.model.family);
  auto context = train::resolve_run_context(config);
  const auto& device = context.device;
  const auto store = store::GraphStore::open(config.run.store);
  const auto inputs = train::model_inputs(store);
  const auto& family = train::model_family(config.model.family);
  train::ModelSpec model{config.model.family, family.resolve_config(config.model, inputs)};
  const auto parameters = parameter_count(*family.build(model.config));
  const auto teacher = teacher_cost(config, context, store, inputs);
  train::resolve_budgets(context, config, store, train::CommandWork::kTraining,
                         teacher_host_bytes(teacher));
  std::string name = models::to_string(config.model.size) + " " + config.model.family;
  name += fmt::format(", {}, precision {}", device.str(), config.run.precision);
  // Resolved once, as a stage resolves it: on CPU the default depends on the process's memory,
  // which measuring changes.
  const auto budget_bytes = context.device_budget;
  GraphStorePlan out;
  out.mode = mode;
  if (mode == "static") {
    const auto estimate =
        family.static_estimate(model.config, context.precision != train::Precision::kFloat32);
    if (!estimate)
      throw std::runtime_error("model " + config.model.family +
                               " has no static estimate; use --mode measured");
    out.measured.fit = *estimate;
    name += ", static estimate";
  } else {
    // Measuring runs training steps on the device: inside the budget being planned for, as
    // training's own probe does (probe batches sized by the static estimate, then the guard).
    train::apply_device_budget(config, context);
    out.checkpointing = choose_checkpointing(config, context, store, model);
    // Off: the unchecked step the choice measured is the plan's.
    const auto* known = out.checkpointing ? out.checkpointing->fit_when_off() : nullptr;
    out.measured =
        known != nullptr ? *known : train::measure_step_peak(config, context, store, model);
  }
  if (model.config.contains("gradient_checkpointing"))
    name += fmt::format(", checkpointing {}{}",
                        model.config["gradient_checkpointing"].get<bool>() ? "on" : "off",
                        out.checkpointing ? " (auto)" : "");
  out.plan = memory::make_memory_plan(
      out.measured.fit, name, parameters,
      static_cast<std::int64_t>(store.metadata().node_feature_count), quantile_graph(store, 0.5),
      quantile_graph(store, 0.95), static_cast<double>(budget_bytes),
      config.memory.target_utilization, teacher);
  out.host = context.host_plan;
  out.host_limit = context.host.limit;
  return out;
}

nlohmann::json plan_json(const GraphStorePlan& graph) {
  auto out = nlohmann::json(graph.plan);
  out["mode"] = graph.mode;
  if (const auto& choice = graph.checkpointing)
    out["gradient_checkpointing"] = {{"choice", choice->on ? "on" : "off"},
                                     {"measured", choice->measured},
                                     {"unchecked_peak_bytes", choice->unchecked_peak_bytes},
                                     {"packing_budget_bytes", choice->packing_budget_bytes},
                                     {"largest_batch",
                                      {{"graphs", choice->batch_graphs},
                                       {"nodes", choice->batch_nodes},
                                       {"edges", choice->batch_edges}}}};
  out["host"] = host_json(graph.host, graph.host_limit);
  if (graph.mode == "measured")
    out["fit_cache"] = {{"file", graph.measured.cache_file.string()},
                        {"hit", graph.measured.from_cache},
                        {"probe_peak_bytes", largest_probe_peak(graph.measured)},
                        {"probe_oom_events", graph.measured.probe_oom_events}};
  return out;
}

void print_plan(const GraphStorePlan& graph) {
  fmt::print("{}", memory::render_memory_plan(graph.plan));
  if (graph.checkpointing) fmt::print("{}\n", graph.checkpointing->describe());
  fmt::print("\n{}{}", memory::render_host_memory_plan(graph.host),
             render_host_limits(graph.host_limit));
  if (!graph.measured.cache_file.empty())
    fmt::print("\n  peak fit {} {}\n",
               graph.measured.from_cache ? "read from" : "measured and stored in",
               graph.measured.cache_file.string());
}

// The flags `plan` reads, for the command and for plan_json.
struct PlanFlags {
  TrainingFlags training;
  std::string mode = "measured";
  bool json = false;

  void add_to(CLI::App& command) {
    training.add_to(command, train::kAutoencoderStage.reads);
    command
        .add_option("--mode", mode,
                    "measured: probe training steps and fit them (cached); static: estimate from "
                    "the model's shapes without running anything")
        ->check(CLI::IsMember({"measured", "static"}))
        ->capture_default_str();
  }

  bool node_graph_store() const {
    return store::store_kind_at(training.config.run.store) == store::kNodeGraphStoreKind;
  }
};

}  // namespace

nlohmann::json plan_json(const std::vector<std::string>& args) {
  CLI::App command{"headroom plan"};
  PlanFlags flags;
  flags.add_to(command);
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 parses from the back
  command.parse(reversed);
  if (flags.node_graph_store()) return plan_json(plan_node_graph(flags.training, command));
  return plan_json(plan_graph_store(flags.training, flags.mode));
}

void add_plan_command(CLI::App& app) {
  auto* command = app.add_subcommand("plan", std::string(training_command_summary("plan")));
  auto flags = std::make_shared<PlanFlags>();
  flags->add_to(*command);
  command->add_flag("--json", flags->json, "Print the plan as JSON");
  command->footer(
      "Example: headroom plan --store stores/hcrl_sa --preset gat,teacher --memory-budget 1GB\n"
      "         headroom plan --store stores/hcrl_sa --preset vgae,student --precision bf16-mixed\n"
      "         headroom plan --store stores/hcrl_sa --preset gat,teacher --mode static\n"
      "         headroom plan --store stores/r8   (a node-graph store: stage node's full-batch "
      "step)\n"
      "         headroom plan --store stores/r8 --preset gat");
  command->callback([flags, command] {
    if (flags->node_graph_store()) {
      const auto plan = plan_node_graph(flags->training, *command);
      if (flags->json) return fmt::print("{}\n", plan_json(plan).dump(2));
      return print_plan(plan);
    }
    const auto plan = plan_graph_store(flags->training, flags->mode);
    if (flags->json) return fmt::print("{}\n", plan_json(plan).dump(2));
    print_plan(plan);
  });
}

}  // namespace headroom::cli
