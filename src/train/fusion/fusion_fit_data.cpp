#include "fusion_fit_data.hpp"

#include <torch/torch.h>

#include <fmt/format.h>
#include <algorithm>
#include <utility>

#include "headroom/baseline/store_baseline.hpp"

namespace headroom::train {
namespace {

// The split's held-out share of `graphs`: at least one row on each side.
std::int64_t held_out_count(double fraction, std::int64_t graphs) {
  return std::clamp<std::int64_t>(static_cast<std::int64_t>(fraction * static_cast<double>(graphs)),
                                  1, graphs - 1);
}

std::vector<std::uint8_t> labels_at(const std::vector<std::uint8_t>& labels,
                                    const at::Tensor& rows) {
  std::vector<std::uint8_t> picked;
  for (std::int64_t i = 0; i < rows.size(0); ++i)
    picked.push_back(labels[static_cast<std::size_t>(rows.data_ptr<std::int64_t>()[i])]);
  return picked;
}

}  // namespace

at::Tensor row_order(std::int64_t count, std::uint64_t seed, std::int64_t epoch,
                     loader::OrderStream stream) {
  const auto order = loader::epoch_permutation(static_cast<std::uint64_t>(count), seed,
                                               static_cast<std::uint64_t>(epoch), stream);
  return torch::tensor(std::vector<std::int64_t>(order.begin(), order.end()), torch::kLong);
}

FusionFitData score_fusion_fit_data(const TrainingConfig& config, const store::GraphStore& store,
                                    const RunContext& context, const FusionSources& sources,
                                    std::vector<std::uint8_t> validation_labels,
                                    RunDirectory& run) {
  const auto ids = store.validation_ids();
  at::Tensor signals = FusionSignals(store, ids, config, context).of(sources);
  if (config.fusion.with_baseline) {
    // Validation windows are outside what the baseline learns from, as they are for the models.
    const auto baseline = baseline::score_store_windows(store, ids);
    signals = with_baseline_signal(signals, baseline.scores);
    run.log(fmt::format("hybrid: with the classical baseline's window score ({} CAN IDs)",
                        baseline.profile.ids()));
  }
  const auto graphs = static_cast<std::int64_t>(ids.size());
  const at::Tensor order = row_order(graphs, config.run.seed, 0, loader::OrderStream::kFusionSplit);
  const auto held_out = held_out_count(config.fusion.holdout_fraction, graphs);
  const at::Tensor holdout_rows = std::get<0>(order.slice(0, 0, held_out).sort());
  const at::Tensor fit_rows = std::get<0>(order.slice(0, held_out).sort());

  FusionFitData data;
  data.validation_labels = std::move(validation_labels);
  data.holdout_labels = labels_at(data.validation_labels, holdout_rows);
  data.scaling = FusionScaling::fit(signals.index_select(0, fit_rows),
                                    labels_at(data.validation_labels, fit_rows));
  data.all = fusion_data(signals, data.validation_labels, data.scaling);
  data.fit = data.all.rows(fit_rows);
  data.holdout = data.all.rows(holdout_rows);
  return data;
}

}  // namespace headroom::train
