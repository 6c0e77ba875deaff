#include "headroom/train/batch_sizing.hpp"

#include <torch/torch.h>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <algorithm>

#include "headroom/loader/epoch_order.hpp"
#include "headroom/memory/batch_packer.hpp"
#include "headroom/train/precision.hpp"
#include "headroom/train/training_loop.hpp"
#include "headroom/util/byte_size.hpp"

namespace headroom::train {

memory::PeakFit measure_step_peak(const TrainingConfig& config, const store::GraphStore& store,
                                  const memory::ProbeModelConfig& model,
                                  std::vector<std::int64_t>* probe_sizes) {
  const auto train_graphs = static_cast<std::int64_t>(store.train_ids().size());
  std::vector<std::int64_t> sizes;
  for (const std::int64_t size : {16, 64, 256, 1024}) {
    const auto capped = std::min({size, train_graphs, config.batch_size});
    if (capped >= 1 && (sizes.empty() || capped > sizes.back())) sizes.push_back(capped);
  }
  memory::PeakProbeOptions options;
  options.device = training_device(config);
  options.precision = parse_precision(config.precision);
  options.learning_rate = effective_learning_rate(config);
  options.weight_decay = config.weight_decay;
  options.gradient_clip = config.gradient_clip;
  // Probing builds models: keep the training's random stream where the caller left it.
  auto generator = at::globalContext().defaultGenerator(at::kCPU);
  const auto state = generator.get_state();
  const auto samples = memory::probe_training_peaks(store, model, sizes, options);
  generator.set_state(state);
  if (probe_sizes != nullptr) *probe_sizes = sizes;
  return memory::fit_peak(samples);
}

BatchSizing plan_batch_sizing(const TrainingConfig& config, const store::GraphStore& store,
                              const memory::ProbeModelConfig& model, RunDirectory& run) {
  BatchSizing sizing;
  sizing.max_graphs = config.batch_size;
  if (config.memory_budget <= 0 || !config.pack_batches) return sizing;
  std::vector<std::int64_t> sizes;
  sizing.fit = measure_step_peak(config, store, model, &sizes);
  sizing.packing_budget_bytes =
      config.target_utilization * static_cast<double>(config.memory_budget);
  const auto& f = *sizing.fit;
  run.log(fmt::format(
      "memory plan: peak = {} + {:.0f} B/node + {:.0f} B/edge + {:.0f} B/graph (fit on {} probe "
      "batches of {}); batches packed up to {} ({:.0f}% of the {} budget)",
      util::format_byte_size(f.fixed_bytes), f.bytes_per_node, f.bytes_per_edge, f.bytes_per_graph,
      sizes.size(), fmt::join(sizes, "/"), util::format_byte_size(sizing.packing_budget_bytes),
      config.target_utilization * 100.0,
      util::format_byte_size(static_cast<double>(config.memory_budget))));
  return sizing;
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
