#include "headroom/train/batches/checkpointing_choice.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <utility>
#include <vector>

#include "headroom/util/byte_size.hpp"

namespace headroom::train {

std::string CheckpointingChoice::describe() const {
  if (!measured)
    return "gradient checkpointing on (auto): with --pack-batches false nothing is measured to "
           "choose by";
  return fmt::format(
      "gradient checkpointing {} (auto): without it the largest batch ({} graphs, {} nodes, {} "
      "edges) is predicted at {} ({} fit), {} the packing budget of {}{}",
      on ? "on" : "off", batch_graphs, batch_nodes, batch_edges,
      util::format_byte_size(unchecked_peak_bytes), fit_from_cache ? "cached" : "measured",
      on ? "over" : "within", util::format_byte_size(packing_budget_bytes),
      on ? ": recomputing each layer in the backward pass keeps the batches the budget packs"
         : ": no recomputation, the same batches");
}

CheckpointingChoice choose_gradient_checkpointing(
    const TrainingConfig& config, const RunContext& context, const store::GraphStore& store,
    const ModelSpec& unchecked, const ProbeTarget& unchecked_step, double reserved_bytes) {
  CheckpointingChoice choice;
  if (!config.memory.pack_batches) return choice;
  auto agreed = agreed_step_peak(config, context, store, unchecked, unchecked_step, reserved_bytes);
  auto& measured = agreed.measured;

  std::vector<std::uint32_t> population = unchecked_step.population;
  if (population.empty()) population.assign(store.train_ids().begin(), store.train_ids().end());
  const auto index = store.size_index();
  const auto count = std::min<std::size_t>(
      population.size(),
      static_cast<std::size_t>(std::max<std::int64_t>(1, config.optimisation.batch_size)));
  std::partial_sort(population.begin(), population.begin() + static_cast<std::ptrdiff_t>(count),
                    population.end(), [&index](std::uint32_t a, std::uint32_t b) {
                      return index.num_nodes[a] > index.num_nodes[b];
                    });
  choice.measured = true;
  choice.batch_graphs = static_cast<std::int64_t>(count);
  for (std::size_t k = 0; k < count; ++k) {
    choice.batch_nodes += index.num_nodes[population[k]];
    choice.batch_edges += index.num_edges[population[k]];
  }
  choice.unchecked_peak_bytes = measured.fit.predict(choice.batch_nodes, choice.batch_edges, count);
  choice.packing_budget_bytes = agreed.packing_budget_bytes;
  choice.fit_from_cache = measured.from_cache;
  choice.on = choice.unchecked_peak_bytes > choice.packing_budget_bytes;
  choice.unchecked = std::move(measured);
  return choice;
}

}  // namespace headroom::train
