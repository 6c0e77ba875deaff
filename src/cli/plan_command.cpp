#include <unistd.h>

#include <torch/torch.h>

#include <ATen/cuda/CUDAContext.h>
#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <algorithm>
#include <memory>
#include <nlohmann/json.hpp>

#include "headroom/cli/commands.hpp"
#include "headroom/cli/training_flags.hpp"
#include "headroom/memory/memory_plan.hpp"
#include "headroom/models/gat_with_jk.hpp"
#include "headroom/models/vgae.hpp"
#include "headroom/train/batch_sizing.hpp"
#include "headroom/train/training_loop.hpp"

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

double default_budget(const c10::Device& device) {
  if (device.is_cuda())
    return static_cast<double>(
        at::cuda::getDeviceProperties(std::max<int>(0, device.index()))->totalGlobalMem);
  return static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGE_SIZE));
}

}  // namespace

void add_plan_command(CLI::App& app) {
  auto* command = app.add_subcommand(
      "plan", "Measure a model's training-step memory and print the budget breakdown");
  auto flags = std::make_shared<TrainingFlags>();
  auto json = std::make_shared<bool>(false);
  flags->add_to(*command);
  command->add_flag("--json", *json, "Print the plan as JSON");
  command->footer(
      "Example: headroom plan --store stores/hcrl_sa --preset gat,teacher --memory-budget 1GB\n"
      "         headroom plan --store stores/hcrl_sa --preset vgae,student --precision bf16-mixed");
  command->callback([flags, json] {
    auto config = flags->resolve(train::Stage::kNormal);
    train::apply_thread_count(config);
    const auto device = train::training_device(config);
    const auto store = store::GraphStore::open(config.store);
    const auto num_ids = static_cast<std::int64_t>(store.metadata().vocabulary.size()) + 1;
    memory::ProbeModelConfig model;
    std::int64_t parameters = 0;
    std::string name = models::to_string(config.size) + " " + models::to_string(config.model);
    if (config.model == models::ModelKind::kGat) {
      const auto gat = train::resolve_gat_config(config, num_ids);
      model = gat;
      for (const auto& p : models::GATWithJK(gat)->parameters()) parameters += p.numel();
    } else {
      const auto vgae = train::resolve_vgae_config(config, num_ids);
      model = vgae;
      for (const auto& p : models::VGAE(vgae)->parameters()) parameters += p.numel();
    }
    name += fmt::format(", {}, precision {}, checkpointing {}", device.str(), config.precision,
                        config.gradient_checkpointing ? "on" : "off");
    const auto fit = train::measure_step_peak(config, store, model);
    const double budget = config.memory_budget > 0 ? static_cast<double>(config.memory_budget)
                                                   : default_budget(device);
    const auto plan = memory::make_memory_plan(
        fit, name, parameters, static_cast<std::int64_t>(store.metadata().node_feature_count),
        quantile_graph(store, 0.5), quantile_graph(store, 0.95), budget, config.target_utilization);
    if (*json) {
      fmt::print("{}\n", nlohmann::json(plan).dump(2));
    } else {
      fmt::print("{}", memory::render_memory_plan(plan));
    }
  });
}

}  // namespace headroom::cli
