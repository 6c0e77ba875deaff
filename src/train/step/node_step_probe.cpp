#include "headroom/train/step/node_step_probe.hpp"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>
#include <random>
#include <stdexcept>

#include <fmt/format.h>

#include "headroom/memory/peak_probe.hpp"
#include "headroom/memory/tensor_memory_meter.hpp"
#include "headroom/nn/sparse_adjacency.hpp"
#include "headroom/store/node_subgraph.hpp"
#include "headroom/train/step/node_subgraph_batch.hpp"
#include "headroom/train/step/node_task_batch.hpp"
#include "headroom/train/step/row_blocked_adam.hpp"
#include "headroom/train/step/training_step.hpp"

namespace headroom::train {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

// Seed batches of a subgraph: its new ids and their labels.
class SubgraphSeedBuilder final : public BatchBuilder {
 public:
  explicit SubgraphSeedBuilder(const store::NodeSubgraph& subgraph) : subgraph_(subgraph) {}

  std::unique_ptr<TaskBatch> build(std::span<const std::uint32_t> ids, bool) const override {
    std::vector<std::int64_t> nodes(ids.begin(), ids.end());
    std::vector<std::int64_t> labels;
    labels.reserve(ids.size());
    for (const auto id : ids) labels.push_back(subgraph_.labels.at(id));
    return std::make_unique<NodeTaskBatch>(torch::tensor(nodes, torch::kInt64),
                                           torch::tensor(labels, torch::kInt64));
  }
  const char* unit() const override { return "node"; }

 private:
  const store::NodeSubgraph& subgraph_;
};

// A tensor over host memory the counting allocator did not allocate, as the real run's CPU
// adjacency views the store's mapping.
template <typename T>
at::Tensor borrowed(std::vector<T>& values, at::ScalarType type) {
  return torch::from_blob(values.data(), {static_cast<std::int64_t>(values.size())},
                          torch::TensorOptions().dtype(type));
}

// `count` of the graph's nodes drawn with `random`, ascending, with a training node among them
// when the graph has one (the count grows until it does).
std::vector<std::uint32_t> probe_nodes(const store::NodeGraphStore& store, std::size_t count,
                                       std::mt19937_64& random) {
  std::vector<std::uint32_t> all(store.num_nodes());
  std::iota(all.begin(), all.end(), 0U);
  const auto is_training = [&](std::uint32_t node) {
    return store.node_split()[node] == static_cast<std::uint8_t>(store::NodeSplit::kTrain);
  };
  for (count = std::clamp<std::size_t>(count, 2, all.size());;
       count = std::min(all.size(), 2 * count)) {
    std::vector<std::uint32_t> chosen;
    std::sample(all.begin(), all.end(), std::back_inserter(chosen), count, random);
    if (std::any_of(chosen.begin(), chosen.end(), is_training) || count == all.size())
      return chosen;
  }
}

std::int64_t live_bytes(const c10::Device& device) {
  const auto snapshot = memory::memory_snapshot(device.is_cuda() ? device.index() : -1);
  return device.is_cuda() ? snapshot.cuda.allocated_bytes : snapshot.cpu.current_bytes;
}

// Training settings of a probe's step, as the stage's loop runs it (no micro-batches: a probe that
// runs out of memory is an answer, not something to retry).
StepSettings probe_step_settings(const PeakProbeOptions& options) {
  StepSettings settings;
  settings.device = options.device;
  settings.precision = options.precision;
  settings.gradient_clip = options.gradient_clip;
  settings.loss_reduction = LossReduction::kPerNode;
  settings.split_on_oom = false;
  return settings;
}

// The peak bytes of one probe step: a fresh model of `shape` with Adam on the probe's device, one
// step of `loss_of(model, batch)` to create Adam's state, then the measured one. Counted from
// `outside`, the bytes live before the probe began.
template <typename LossOf>
double probe_step_peak(const models::NodeModelConfig& shape, const PeakProbeOptions& options,
                       const BatchBuilder& builder, const TaskBatch& batch, LossOf loss_of,
                       std::int64_t outside) {
  const auto network = models::make_node_model(shape);
  network->to(options.device);
  network->train();
  RowBlockedAdam optimizer(
      network->parameters(),
      torch::optim::AdamOptions(options.learning_rate).weight_decay(options.weight_decay));
  const TaskLoss loss = [&](const TaskBatch& part) { return loss_of(*network, part); };
  TrainingStep step(builder, network->parameters(), optimizer, loss, probe_step_settings(options));
  const auto peak = memory::measure_peak_bytes(
      options.device, [&] { step.run(batch); }, [&] { step.run(batch); });
  return static_cast<double>(peak - outside);
}

// The probe `measure`'s sample, or nothing when the enforced memory budget refused one of its
// allocations: a refused probe is an answer (this much does not fit), never a peak measured over
// the budget. Its tensors are freed as the exception unwinds.
template <typename Measure>
std::optional<memory::PeakSample> measure_within_budget(Measure measure) {
  try {
    return measure();
  } catch (const c10::OutOfMemoryError&) {
    return std::nullopt;
  }
}

}  // namespace

memory::PeakSample measure_node_full_batch(const store::NodeGraphStore& store,
                                           std::span<const std::uint32_t> nodes,
                                           const models::NodeModelConfig& model,
                                           const PeakProbeOptions& options) {
  memory::install_counting_cpu_allocator();
  // What is live before the probe (a stage's own model, say) is not the probe's: its peak is
  // counted from here, so that a fit over probes predicts the step's own bytes.
  const auto outside = live_bytes(options.device);
  auto subgraph = store::induced_subgraph(store, nodes);
  const auto seeds = subgraph.nodes_in(store::NodeSplit::kTrain);
  if (seeds.empty())
    throw std::invalid_argument("node step probe: the subgraph has no training node");
  const auto adjacency =
      nn::SparseAdjacency(borrowed(subgraph.row_offsets, torch::kInt64),
                          borrowed(subgraph.columns, torch::kInt32),
                          borrowed(subgraph.weights, torch::kFloat32), /*symmetric=*/true)
          .to(options.device);

  models::NodeModelConfig shape = model;
  shape.num_nodes = subgraph.num_nodes();
  const SubgraphSeedBuilder builder(subgraph);
  // The stage's loss (train/stages/node_classifier_stage.cpp): the whole graph's logits, the
  // cross-entropy over the seeds' rows.
  const auto loss_of = [&](models::NodeModelImpl& network, const TaskBatch& batch) {
    const auto& seed_batch = nodes_of(batch);
    return torch::nn::functional::cross_entropy(
        network.forward(adjacency).index_select(0, seed_batch.nodes()), seed_batch.labels());
  };
  const auto peak =
      probe_step_peak(shape, options, builder, *builder.build(seeds, false), loss_of, outside);
  memory::PeakSample sample;
  sample.nodes = static_cast<std::uint64_t>(subgraph.num_nodes());
  sample.edges = static_cast<std::uint64_t>(subgraph.num_entries());
  sample.graphs = 1;
  sample.peak_bytes = peak;
  return sample;
}

NodeFullBatchPlan plan_node_full_batch(const store::NodeGraphStore& store,
                                       const models::NodeModelConfig& model,
                                       const PeakProbeOptions& options, std::uint64_t seed,
                                       std::span<const double> fractions) {
  if (store.nodes_in(store::NodeSplit::kTrain).empty())
    throw std::invalid_argument("node step probe: the graph has no training node");
  std::mt19937_64 random(seed);
  NodeFullBatchPlan plan;
  plan.nodes = static_cast<std::int64_t>(store.num_nodes());
  plan.entries = static_cast<std::int64_t>(store.num_edges());
  for (const double fraction : fractions) {
    const auto count =
        static_cast<std::size_t>(std::llround(fraction * static_cast<double>(store.num_nodes())));
    const auto nodes = probe_nodes(store, count, random);
    auto sample = measure_within_budget(
        [&] { return measure_node_full_batch(store, nodes, model, options); });
    // A share of the graph the budget refuses: the whole graph is over it too, and larger shares
    // would only be refused later.
    if (!sample) {
      plan.refused_nodes = static_cast<std::int64_t>(nodes.size());
      break;
    }
    plan.samples.push_back(*sample);
  }
  if (plan.samples.size() < 2) return plan;  // refused before a fit was possible
  plan.fit = memory::fit_peak(plan.samples);
  plan.predicted_bytes = plan.fit.predict(static_cast<std::uint64_t>(plan.nodes),
                                          static_cast<std::uint64_t>(plan.entries), 1);
  return plan;
}

std::string describe_node_plan(const NodeFullBatchPlan& plan, std::int64_t budget_bytes) {
  if (plan.samples.size() < 2)
    return fmt::format(
        "full-batch step: the probe on an induced subgraph of {} of the {} nodes ran out of the "
        "memory budget of {:.1f} MiB: the whole graph's step does not fit",
        plan.refused_nodes.value_or(0), plan.nodes, static_cast<double>(budget_bytes) / kMiB);
  const auto [smallest, largest] =
      std::minmax_element(plan.samples.begin(), plan.samples.end(),
                          [](const auto& a, const auto& b) { return a.nodes < b.nodes; });
  return fmt::format(
      "full-batch step: predicted peak {:.1f} MiB for {} nodes and {} entries ({:.0f} B + {:.0f} "
      "B/node + {:.1f} B/entry, fitted to {} induced subgraphs of {} to {} nodes, within {:.1f}% "
      "on them); memory budget {:.1f} MiB: {}",
      plan.predicted_bytes / kMiB, plan.nodes, plan.entries, plan.fit.fixed_bytes,
      plan.fit.bytes_per_node, plan.fit.bytes_per_edge, plan.samples.size(), smallest->nodes,
      largest->nodes, 100.0 * plan.fit.max_relative_error, static_cast<double>(budget_bytes) / kMiB,
      plan.fits(budget_bytes) ? "it fits"
      : plan.refused_nodes    ? fmt::format("it does not fit (the probe on {} nodes ran out of it)",
                                            *plan.refused_nodes)
                              : std::string("it does not fit"));
}

bool NodeFullBatchPlan::fits(std::int64_t budget_bytes) const {
  return !refused_nodes && samples.size() >= 2 &&
         predicted_bytes <= static_cast<double>(budget_bytes);
}

namespace {

// Expected stored entries of the subgraph induced by a uniformly random part of `part` nodes:
// each self-loop whose node is chosen, each other entry whose two nodes are.
double expected_part_entries(const store::NodeGraphStore& store, std::int64_t self_loops,
                             std::int64_t part) {
  const auto total = static_cast<double>(store.num_nodes());
  const auto n = static_cast<double>(part);
  const auto others = static_cast<double>(store.num_edges()) - static_cast<double>(self_loops);
  const double both = total > 1 ? n * (n - 1) / (total * (total - 1)) : 1.0;
  return static_cast<double>(self_loops) * n / total + others * both;
}

std::int64_t count_self_loops(const store::NodeGraphStore& store) {
  std::int64_t loops = 0;
  const auto offsets = store.row_offsets();
  const auto columns = store.column_index();
  for (std::size_t row = 0; row < store.num_nodes(); ++row) {
    for (auto e = offsets[row]; e < offsets[row + 1]; ++e)
      loops += static_cast<std::size_t>(columns[static_cast<std::size_t>(e)]) == row ? 1 : 0;
  }
  return loops;
}

std::int64_t part_size(std::int64_t nodes, std::int64_t parts) {
  return (nodes + parts - 1) / parts;
}

}  // namespace

memory::PeakSample measure_node_sampled_step(const store::NodeGraphStore& store,
                                             std::span<const std::uint32_t> nodes,
                                             const models::NodeModelConfig& model,
                                             const PeakProbeOptions& options) {
  memory::install_counting_cpu_allocator();
  const auto outside = live_bytes(options.device);
  const NodeSubgraphBuilder builder(store);
  const auto batch = builder.build(nodes, false);
  const auto& sampled = subgraph_of(*batch);
  if (sampled.seeds().numel() == 0)
    throw std::invalid_argument("node step probe: the part has no training node");
  models::NodeModelConfig shape = model;
  shape.num_nodes = static_cast<std::int64_t>(store.num_nodes());
  const auto loss_of = [](models::NodeModelImpl& network, const TaskBatch& part) {
    return sampled_node_loss(network, part);
  };
  const auto peak = probe_step_peak(shape, options, builder, *batch, loss_of, outside);
  memory::PeakSample sample;
  sample.nodes = nodes.size();
  sample.edges = static_cast<std::uint64_t>(sampled.adjacency().num_entries());
  sample.graphs = 1;
  sample.peak_bytes = peak;
  return sample;
}

NodeSampledPlan plan_node_sampled(const store::NodeGraphStore& store,
                                  const models::NodeModelConfig& model,
                                  const PeakProbeOptions& options, std::uint64_t seed,
                                  std::int64_t budget_bytes, std::span<const double> fractions) {
  if (store.nodes_in(store::NodeSplit::kTrain).empty())
    throw std::invalid_argument("node step probe: the graph has no training node");
  std::mt19937_64 random(seed);
  const auto total = static_cast<std::int64_t>(store.num_nodes());
  NodeSampledPlan plan;
  // One probe on a random part of `count` nodes: its sample, or its size among the refused.
  const auto probe = [&](std::size_t count) {
    const auto nodes = probe_nodes(store, count, random);
    auto sample = measure_within_budget(
        [&] { return measure_node_sampled_step(store, nodes, model, options); });
    if (sample) plan.samples.push_back(*sample);
    if (!sample) plan.refused_parts.push_back(static_cast<std::int64_t>(nodes.size()));
    return sample.has_value();
  };
  const auto count_of = [total](double share) {
    return static_cast<std::size_t>(std::llround(share * static_cast<double>(total)));
  };
  // Ascending shares, stopping at the first the budget refuses; when fewer than two fit, halved
  // shares below the smallest, down to the smallest part the plan may take.
  for (const double fraction : fractions)
    if (!probe(count_of(fraction))) break;
  const double smallest_share = 1.0 / static_cast<double>(kMaxSampledParts);
  for (double share = fractions.front() / 2;
       plan.samples.size() < 2 && !plan.refused_parts.empty() && share >= smallest_share;
       share /= 2)
    probe(count_of(share));
  if (plan.samples.size() < 2) return plan;  // parts = 0: no sampled step fits
  plan.fit = memory::fit_peak(plan.samples);
  plan.margin = std::max(0.05, plan.fit.max_relative_error);
  const auto self_loops = count_self_loops(store);
  const auto predict = [&](std::int64_t part) {
    return plan.fit.predict(
        static_cast<std::uint64_t>(part),
        static_cast<std::uint64_t>(std::llround(expected_part_entries(store, self_loops, part))),
        1);
  };
  const auto budget = static_cast<double>(budget_bytes);
  const auto max_parts = std::min<std::int64_t>(kMaxSampledParts, std::max<std::int64_t>(total, 1));
  plan.floor_bytes = predict(part_size(total, max_parts));
  std::int64_t parts = 2;
  while (parts <= max_parts && predict(part_size(total, parts)) > budget * (1 - plan.margin))
    ++parts;
  // The fit's choice, checked by a step on one part of that size; more parts while it is over.
  // (A measured step within 3% of the budget leaves parts' differences in entries room.)
  for (int check = 0; check < 4 && parts <= max_parts; ++check) {
    const auto part = part_size(total, parts);
    const auto nodes = probe_nodes(store, static_cast<std::size_t>(part), random);
    const auto checked = measure_within_budget(
        [&] { return measure_node_sampled_step(store, nodes, model, options); });
    if (!checked) {  // the budget refused it: far enough over that its bytes are unknown
      plan.refused_parts.push_back(part);
      parts = std::max(parts + 1, 2 * parts);
      continue;
    }
    const auto& sample = *checked;
    plan.samples.push_back(sample);
    if (sample.peak_bytes <= budget * 0.97) {
      plan.parts = parts;
      plan.nodes_per_part = part;
      plan.expected_entries = expected_part_entries(store, self_loops, part);
      plan.predicted_bytes = predict(part);
      plan.measured_bytes = sample.peak_bytes;
      return plan;
    }
    parts =
        std::max(parts + 1, static_cast<std::int64_t>(std::ceil(
                                static_cast<double>(parts) * sample.peak_bytes / (budget * 0.97))));
  }
  return plan;
}

std::string describe_sampled_plan(const NodeSampledPlan& plan, std::int64_t budget_bytes) {
  const auto budget = static_cast<double>(budget_bytes) / kMiB;
  if (!plan.fits() && plan.fit.samples == 0)
    return fmt::format(
        "sampled steps: none fits the memory budget of {:.1f} MiB: it refused a step on a part of "
        "{} nodes (the model's weights, their gradient and Adam's state grow with the graph's "
        "nodes, not with the part)",
        budget, plan.refused_parts.empty() ? 0 : plan.refused_parts.back());
  if (!plan.fits())
    return fmt::format(
        "sampled steps: none fits the memory budget of {:.1f} MiB: even parts of 1/{} of the "
        "graph would need about {:.1f} MiB (the model's weights, their gradient and Adam's state "
        "grow with the graph's nodes, not with the part)",
        budget, kMaxSampledParts, plan.floor_bytes / kMiB);
  return fmt::format(
      "sampled steps: {} random parts of {} nodes per epoch (about {:.0f} entries each), each "
      "step the subgraph one part induces; peak predicted {:.1f} MiB ({:.0f} B + {:.0f} B/node + "
      "{:.1f} B/entry, fitted to {} parts, {:.0f}% held back), measured {:.1f} MiB on one part; "
      "memory budget {:.1f} MiB",
      plan.parts, plan.nodes_per_part, plan.expected_entries, plan.predicted_bytes / kMiB,
      plan.fit.fixed_bytes, plan.fit.bytes_per_node, plan.fit.bytes_per_edge, plan.fit.samples,
      100 * plan.margin, plan.measured_bytes / kMiB, budget);
}

}  // namespace headroom::train
