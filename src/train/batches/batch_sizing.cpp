#include "headroom/train/batches/batch_sizing.hpp"

#include "headroom/nn/cuda_runtime.hpp"

#include <torch/headeronly/version.h>
#include <torch/torch.h>

#include <ATen/autocast_mode.h>
#include <fmt/format.h>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <span>
#include <stdexcept>
#include <variant>

#include "headroom/loader/epoch_order.hpp"
#include "headroom/memory/batch_packer.hpp"
#include "headroom/memory/peak_fit_cache.hpp"
#include "headroom/memory/tensor_memory_meter.hpp"
#include "headroom/train/context/collectives.hpp"
#include "headroom/train/step/precision.hpp"
#include "headroom/util/byte_size.hpp"
#include "headroom/util/file_writer.hpp"
#include "headroom/util/process_role.hpp"

namespace headroom::train {
namespace {

// Bumped whenever the probe scheme or the fit changes what a cached fit means.
// 3: probes run the stage's own TrainingStep and loss (the distillation loss for students).
constexpr int kPeakFitFormat = 3;

std::string device_identity(const c10::Device& device) {
  if (!device.is_cuda()) return "cpu";
  const int index = std::max<int>(0, device.index());
  return fmt::format("cuda {} {} B", nn::cuda_device_name(index),
                     nn::cuda_total_memory_bytes(index));
}

// Every rank packs with rank 0's fit and budget, so that every rank plans the same epochs (a fit
// read from another node's cache, or a budget from another machine's memory, could differ).
void adopt_rank0_sizing(BatchSizing& sizing) {
  auto& f = *sizing.fit;
  std::vector<at::Tensor> values = {
      torch::tensor({f.fixed_bytes, f.bytes_per_node, f.bytes_per_edge, f.bytes_per_graph,
                     f.max_relative_error, sizing.packing_budget_bytes},
                    torch::kDouble)};
  collectives().broadcast_from_rank0(values);
  const auto agreed = values[0].contiguous();
  const double* v = agreed.data_ptr<double>();
  f.fixed_bytes = v[0];
  f.bytes_per_node = v[1];
  f.bytes_per_edge = v[2];
  f.bytes_per_graph = v[3];
  f.max_relative_error = v[4];
  sizing.packing_budget_bytes = v[5];
}

// The probe runs inside the memory budget (the task driver applies it before `prepare`): a probe
// batch whose collation or step is refused is measured on its first half instead, down to one
// graph. The sample is then a smaller batch, which the fit takes as it is; a single graph that
// does not fit is an error, since no batch of the run could be trained either.
memory::PeakSample probe_within_budget(const store::GraphStore& store,
                                       std::span<const std::uint32_t> ids,
                                       const ProbeSubjectFactory& make,
                                       const PeakProbeOptions& options, std::int64_t& oom_events) {
  try {
    return probe_step_peak(store, ids, make, options);
  } catch (const c10::OutOfMemoryError& error) {
    ++oom_events;
    at::autocast::clear_cache();
    if (options.device.is_cuda()) nn::empty_cuda_cache();
    if (ids.size() <= 1)
      throw std::runtime_error(fmt::format(
          "memory probe: graph {} alone (its collation or its training step) does not fit in the "
          "memory budget (raise --memory-budget): {}",
          ids.empty() ? -1 : static_cast<std::int64_t>(ids[0]), error.what_without_backtrace()));
  }
  return probe_within_budget(store, ids.first(ids.size() / 2), make, options, oom_events);
}

}  // namespace

PeakProbeOptions probe_options(const TrainingConfig& config, const RunContext& context) {
  PeakProbeOptions options;
  options.device = context.device;
  options.precision = context.precision;
  options.learning_rate = effective_learning_rate(config);
  options.weight_decay = config.optimisation.weight_decay;
  options.gradient_clip = config.optimisation.gradient_clip;
  return options;
}

nlohmann::json peak_fit_key(const TrainingConfig& config, const RunContext& context,
                            const ModelSpec& model,
                            const std::vector<std::vector<std::uint32_t>>& probe_batches,
                            std::string_view objective, std::string_view population) {
  nlohmann::json model_json = model.config;
  model_json["kind"] = model.family;
  std::vector<std::size_t> probe_sizes;
  for (const auto& batch : probe_batches) probe_sizes.push_back(batch.size());
  return {{"format", kPeakFitFormat},
          {"model", model_json},
          {"objective", objective},
          {"population", population},
          {"precision", config.run.precision},
          {"gradient_clipping", config.optimisation.gradient_clip > 0},
          {"device", device_identity(context.device)},
          {"torch", TORCH_VERSION},
          {"probe_batch_sizes", probe_sizes}};
}

MeasuredPeak measure_step_peak(const TrainingConfig& config, const RunContext& context,
                               const store::GraphStore& store, const ModelSpec& model) {
  const auto& family = model_family(model.family);
  return measure_step_peak(
      config, context, store, model,
      {[&family, &model] { return family.plain_subject(model.config); }, "plain", {}, "train"});
}

namespace {

// The probe batches of `step` and the cache key of their fit.
struct ProbePlan {
  std::vector<std::vector<std::uint32_t>> batches;
  nlohmann::json key;
};

// The bytes a probe batch may take on the training device: the planner's share of the budget in
// force (CPU: the counting allocator's; CUDA: --memory-budget or the device's memory) less what is
// already live (a teacher, the stage's own model). Infinite when no budget is in force.
double probe_allowance(const TrainingConfig& config, const RunContext& context) {
  const auto& device = context.device;
  double budget = 0;
  double live = 0;
  if (device.is_cuda()) {
    budget = static_cast<double>(context.device_budget);
    live = static_cast<double>(
        memory::cuda_tensor_memory(std::max<int>(0, device.index())).allocated_bytes);
  } else {
    budget = static_cast<double>(memory::cpu_tensor_budget());
    live = static_cast<double>(memory::cpu_tensor_memory().current_bytes);
  }
  if (budget <= 0) return std::numeric_limits<double>::infinity();
  return config.memory.target_utilization * std::max(0.0, budget - live);
}

// Before anything is measured, the static estimate (always high: docs/benchmarks.md) sizes each
// probe batch to `allowance`, so that the probe does not ask for memory the budget would refuse:
// the largest prefix of the batch whose estimated step fits, at least one graph. The OOM fallback
// in probe_within_budget stays for what the estimate does not cover.
void fit_probe_batches_to_budget(const TrainingConfig& config, const RunContext& context,
                                 const store::GraphStore& store, const ModelSpec& model,
                                 std::vector<std::vector<std::uint32_t>>& batches) {
  const double allowance = probe_allowance(config, context);
  if (!std::isfinite(allowance)) return;
  const auto estimate =
      model_family(model.family)
          .static_estimate(model.config, context.precision != Precision::kFloat32);
  if (!estimate) return;
  const auto index = store.size_index();
  for (auto& batch : batches) {
    std::uint64_t nodes = 0;
    std::uint64_t edges = 0;
    std::size_t fitting = 0;
    for (const auto id : batch) {
      nodes += index.num_nodes[id];
      edges += index.num_edges[id];
      if (estimate->predict(nodes, edges, fitting + 1) > allowance) break;
      ++fitting;
    }
    batch.resize(std::max<std::size_t>(1, fitting));
  }
}

ProbePlan probe_plan(const TrainingConfig& config, const RunContext& context,
                     const store::GraphStore& store, const ModelSpec& model,
                     const ProbeTarget& step) {
  ProbePlan plan;
  plan.batches =
      step.population.empty()
          ? memory::probe_batches(store, config.optimisation.batch_size)
          : memory::probe_batches(store, config.optimisation.batch_size, step.population);
  fit_probe_batches_to_budget(config, context, store, model, plan.batches);
  plan.key =
      peak_fit_key(config, context, model, plan.batches, step.objective, step.population_name);
  return plan;
}

// The fit `cache` holds for `key`, as a measurement read from it; nullopt when it holds none or
// one it does not trust (then with a note on stderr).
std::optional<MeasuredPeak> cached_measurement(const memory::PeakFitCache& cache,
                                               const nlohmann::json& key) {
  std::string discarded;
  auto cached = cache.load(key, &discarded);
  if (!discarded.empty()) fmt::print(stderr, "note: {}; measuring the peak again\n", discarded);
  if (!cached) return std::nullopt;
  return MeasuredPeak{cached->fit, std::move(cached->samples), cached->file, true};
}

// Runs `probe` and puts the default random generators back where it found them: probing builds
// models and runs dropout, and the training's random streams must not notice.
template <typename Probe>
void keeping_random_streams(const c10::Device& device, Probe probe) {
  auto cpu_generator = at::globalContext().defaultGenerator(at::kCPU);
  const auto cpu_state = cpu_generator.get_state();
  std::optional<at::Tensor> cuda_state;
  if (device.is_cuda()) cuda_state = at::globalContext().defaultGenerator(at::kCUDA).get_state();
  probe();
  cpu_generator.set_state(cpu_state);
  if (cuda_state) {
    auto cuda_generator = at::globalContext().defaultGenerator(at::kCUDA);
    cuda_generator.set_state(*cuda_state);
  }
}

// How far (relative) a fresh probe step may be from a cached fit's prediction. Generous: the
// check is there for a file that is wrong, not for the fit's own error on another store's graphs.
constexpr double kFreshSampleTolerance = 0.5;

}  // namespace

MeasuredPeak measure_step_peak(const TrainingConfig& config, const RunContext& context,
                               const store::GraphStore& store, const ModelSpec& model,
                               const ProbeTarget& step) {
  const auto [batches, key] = probe_plan(config, context, store, model, step);
  const memory::PeakFitCache cache(memory::default_peak_fit_cache_dir());
  const auto options = probe_options(config, context);
  if (auto cached = cached_measurement(cache, key)) {
    // A fit can agree with its own samples and still be wrong (a file edited with its samples, or
    // copied from another machine): one step, measured now on the smallest probe batch, checks it.
    memory::PeakSample fresh;
    std::int64_t ignored_oom_events = 0;
    keeping_random_streams(options.device, [&] {
      fresh = probe_within_budget(store, batches.front(), step.make, options, ignored_oom_events);
    });
    const auto problem = memory::fresh_sample_problem(cached->fit, fresh, kFreshSampleTolerance);
    if (problem.empty()) return std::move(*cached);
    fmt::print(stderr, "note: peak-fit cache file {} discarded: {}; measuring the peak again\n",
               cached->cache_file.string(), problem);
  }

  MeasuredPeak measured;
  keeping_random_streams(options.device, [&] {
    for (const auto& batch : batches)
      measured.samples.push_back(
          probe_within_budget(store, batch, step.make, options, measured.probe_oom_events));
  });
  measured.fit = memory::fit_peak(measured.samples);
  measured.cache_file = cache.store(key, measured.fit, measured.samples);
  return measured;
}

namespace {

// Rank 0 measures the step's peak (or reads its cached fit) while the other ranks wait, so that a
// job probes once; the others then read the fit rank 0 stored. Where one cannot (the cache is off,
// or not on a file system it shares with rank 0, or its device differs, so its key does too), it
// goes on without: adopt_rank0_sizing gives every rank rank 0's fit either way.
MeasuredPeak measure_step_peak_on_rank0(const TrainingConfig& config, const RunContext& context,
                                        const store::GraphStore& store, const ModelSpec& model,
                                        const ProbeTarget& step) {
  std::optional<MeasuredPeak> measured;
  collectives().run_on_rank0("measure the training step's peak memory", [&] {
    measured = measure_step_peak(config, context, store, model, step);
  });
  if (measured) return std::move(*measured);
  const auto plan = probe_plan(config, context, store, model, step);
  const memory::PeakFitCache cache(memory::default_peak_fit_cache_dir());
  const auto& role = context.role;
  MeasuredPeak read;
  if (auto cached = cached_measurement(cache, plan.key)) {
    read = std::move(*cached);
    fmt::print("rank {} of {}: peak fit read from {}, written by rank 0\n", role.rank,
               role.world_size, read.cache_file.string());
  } else {
    fmt::print("rank {} of {}: peak fit taken from rank 0 (this rank's cache has none{})\n",
               role.rank, role.world_size,
               cache.enabled() ? " at " + cache.file_for(plan.key).string() : ": it is off");
  }
  std::fflush(stdout);
  return read;
}

// memory_plan.json in the run directory: what `headroom report` draws as the plan's breakdown.
void record_memory_plan(const RunDirectory& run, const MeasuredPeak& measured, double budget,
                        double target_utilization, double reserved_bytes,
                        double packing_budget_bytes) {
  if (!util::process_role().writes()) return;
  const auto& f = measured.fit;
  nlohmann::json samples = nlohmann::json::array();
  for (const auto& s : measured.samples)
    samples.push_back({{"nodes", s.nodes},
                       {"edges", s.edges},
                       {"graphs", s.graphs},
                       {"peak_bytes", s.peak_bytes},
                       {"fixed_bytes", f.fixed_bytes},
                       {"node_bytes", f.bytes_per_node * static_cast<double>(s.nodes)},
                       {"edge_bytes", f.bytes_per_edge * static_cast<double>(s.edges)},
                       {"graph_bytes", f.bytes_per_graph * static_cast<double>(s.graphs)}});
  const nlohmann::json plan = {{"fixed_bytes", f.fixed_bytes},
                               {"bytes_per_node", f.bytes_per_node},
                               {"bytes_per_edge", f.bytes_per_edge},
                               {"bytes_per_graph", f.bytes_per_graph},
                               {"max_relative_error", f.max_relative_error},
                               {"from_cache", measured.from_cache},
                               {"probe_oom_events", measured.probe_oom_events},
                               {"memory_budget", budget},
                               {"target_utilization", target_utilization},
                               {"reserved_bytes", reserved_bytes},
                               {"packing_budget_bytes", packing_budget_bytes},
                               {"probe_batches", samples}};
  util::write_file_atomically(run.path() / "memory_plan.json", plan.dump(2) + "\n");
}

}  // namespace

AgreedStepPeak agreed_step_peak(const TrainingConfig& config, const RunContext& context,
                                const store::GraphStore& store, const ModelSpec& model,
                                const ProbeTarget& step, double reserved_bytes) {
  AgreedStepPeak agreed{measure_step_peak_on_rank0(config, context, store, model, step),
                        context.packing_budget_bytes() - reserved_bytes};
  BatchSizing sizing;
  sizing.fit = agreed.measured.fit;
  sizing.packing_budget_bytes = agreed.packing_budget_bytes;
  adopt_rank0_sizing(sizing);
  agreed.measured.fit = *sizing.fit;
  agreed.packing_budget_bytes = sizing.packing_budget_bytes;
  return agreed;
}

BatchSizing plan_batch_sizing(const TrainingConfig& config, const RunContext& context,
                              const store::GraphStore& store, const ModelSpec& model,
                              const ProbeTarget& step, RunDirectory& run, double reserved_bytes,
                              const MeasuredPeak* known) {
  BatchSizing sizing;
  sizing.max_graphs = config.optimisation.batch_size;
  if (!config.memory.pack_batches) return sizing;
  const auto budget = context.device_budget;
  auto agreed = known != nullptr
                    ? AgreedStepPeak{*known, context.packing_budget_bytes() - reserved_bytes}
                    : agreed_step_peak(config, context, store, model, step, reserved_bytes);
  const auto& measured = agreed.measured;
  sizing.fit = measured.fit;
  sizing.packing_budget_bytes = agreed.packing_budget_bytes;
  const auto& f = measured.fit;
  run.log(fmt::format(
      "memory plan: peak = {} + {:.0f} B/node + {:.0f} B/edge + {:.0f} B/graph ({} {} probe "
      "batches, error {:.1f}%); batches packed up to {} ({:.0f}% of the {} budget{}), at most {} "
      "graphs",
      util::format_byte_size(f.fixed_bytes), f.bytes_per_node, f.bytes_per_edge, f.bytes_per_graph,
      measured.from_cache ? "cached fit of" : "fit on", measured.samples.size(),
      100.0 * f.max_relative_error, util::format_byte_size(sizing.packing_budget_bytes),
      config.memory.target_utilization * 100.0, util::format_byte_size(static_cast<double>(budget)),
      reserved_bytes > 0 ? " less " + util::format_byte_size(reserved_bytes) + " for the teacher"
                         : "",
      config.optimisation.batch_size));
  record_memory_plan(run, measured, static_cast<double>(budget), config.memory.target_utilization,
                     reserved_bytes, sizing.packing_budget_bytes);
  return sizing;
}

InferenceLimits inference_limits(const TrainingConfig& config, const RunContext& context) {
  return InferenceLimits{
      .max_graphs = config.optimisation.eval_batch_size,
      .packing_budget_bytes = config.memory.pack_batches ? context.packing_budget_bytes() : 0.0,
      .prefetch_depth = 4};
}

std::vector<std::vector<std::uint32_t>> make_batches(
    const BatchSizing& sizing, const store::GraphStore& store,
    const std::vector<std::uint32_t>& ordered_ids) {
  if (!sizing.fit) return loader::chunk(ordered_ids, static_cast<std::size_t>(sizing.max_graphs));
  const auto index = store.size_index();
  return memory::pack_by_bytes(ordered_ids, index.num_nodes, index.num_edges,
                               sizing.fit->cost_model(), sizing.packing_budget_bytes,
                               static_cast<std::size_t>(sizing.max_graphs))
      .batches;
}

}  // namespace headroom::train
