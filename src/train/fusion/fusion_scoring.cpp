#include "headroom/train/fusion/fusion_scoring.hpp"

#include <torch/torch.h>

#include <fmt/format.h>
#include <algorithm>
#include <optional>
#include <stdexcept>

#include "headroom/eval/evaluation_report.hpp"
#include "headroom/train/families/model_family.hpp"
#include "headroom/train/loop/run_resume.hpp"

namespace headroom::train {
namespace {

// `scores` with each adapted test file's graphs fused again on states scaled against the file's
// adaptation windows (`windows`, by file; every one is taken as normal traffic).
std::vector<float> rescaled_per_file(
    FusionLearner& learner, const at::Tensor& signals, std::span<const std::uint8_t> labels,
    std::vector<float> scores, const store::GraphStore& store,
    std::span<const std::uint32_t> graph_ids,
    const std::map<std::uint32_t, std::vector<std::uint32_t>>& windows) {
  const auto file_of = store.size_index().file;
  std::map<std::uint32_t, std::vector<std::int64_t>> rows_of_file;
  for (std::size_t i = 0; i < graph_ids.size(); ++i)
    if (windows.contains(file_of[graph_ids[i]]))
      rows_of_file[file_of[graph_ids[i]]].push_back(static_cast<std::int64_t>(i));
  for (const auto& [file, rows] : rows_of_file) {
    const auto& calibration = windows.at(file);
    std::vector<std::int64_t> calibration_rows;
    std::vector<std::uint8_t> file_labels;
    for (const auto row : rows) {
      const auto id = graph_ids[static_cast<std::size_t>(row)];
      file_labels.push_back(labels[static_cast<std::size_t>(row)]);
      if (std::binary_search(calibration.begin(), calibration.end(), id))
        calibration_rows.push_back(row);
    }
    const auto file_signals = signals.index_select(0, torch::tensor(rows, torch::kLong));
    const auto calibration_signals =
        signals.index_select(0, torch::tensor(calibration_rows, torch::kLong));
    const std::vector<std::uint8_t> normal(calibration_rows.size(), 0);
    const auto scaling = FusionScaling::fit(calibration_signals, normal);
    const auto fused =
        to_float_vector(learner.fused_scores(fusion_data(file_signals, file_labels, scaling)));
    for (std::size_t k = 0; k < rows.size(); ++k)
      scores[static_cast<std::size_t>(rows[k])] = fused[k];
  }
  return scores;
}

// Each file's adaptation windows after its first `learned`, which a hybrid's baseline learnt from.
std::map<std::uint32_t, std::vector<std::uint32_t>> unlearned(
    std::map<std::uint32_t, std::vector<std::uint32_t>> windows, std::size_t learned) {
  for (auto& [file, ids] : windows)
    ids.erase(ids.begin(),
              ids.begin() + static_cast<std::ptrdiff_t>(std::min(learned, ids.size())));
  return windows;
}

}  // namespace

bool is_fusion_kind(std::string_view kind) { return kind.rfind("fusion-", 0) == 0; }

bool is_hybrid_fusion(const CheckpointInfo& info) {
  return is_fusion_kind(info.kind) && info.model_config.value("baseline", false);
}

baseline::BaselineAdaptation baseline_adaptation(const EvaluationOptions& evaluation) {
  const auto windows = static_cast<std::size_t>(evaluation.label_free_windows);
  const auto calibration = static_cast<std::size_t>(evaluation.vehicle_calibration_windows);
  return {.adaptation_windows = windows,
          .learned_windows = windows / 2,
          .fence_mads = evaluation.label_free_fence_mads,
          .calibration_windows = calibration,
          .calibration_learned_windows = calibration / 2};
}

FusionSignals::FusionSignals(const store::GraphStore& store,
                             std::span<const std::uint32_t> graph_ids, const TrainingConfig& config,
                             const RunContext& context)
    : store_(store), graph_ids_(graph_ids), config_(config), context_(context) {}

const at::Tensor& FusionSignals::of(const FusionSources& sources) {
  auto& signals = computed_[{sources.classifier, sources.autoencoder}];
  if (signals.defined()) return signals;
  const auto& device = context_.device;
  for (const auto& source : {sources.classifier, sources.autoencoder}) {
    require_trained_on(source, store::content_identity(store_.metadata()), "to be fused on");
    require_store_inputs(read_checkpoint_info(source).model_config, store_, source);
  }
  auto classifier = load_classifier_checkpoint(sources.classifier, device);
  const auto autoencoder = load_autoencoder_checkpoint(sources.autoencoder, device);
  // The VGAE's neighbourhood logits are [nodes, IDs]: its batches stay small.
  const std::int64_t batch = std::min<std::int64_t>(config_.optimisation.eval_batch_size, 1024);
  signals = fusion_signals(*classifier, autoencoder, store_, graph_ids_, batch, device,
                           context_.precision);
  return signals;
}

FusionData fusion_data(const at::Tensor& signals, std::span<const std::uint8_t> labels,
                       const FusionScaling& scaling) {
  std::vector<float> y(labels.begin(), labels.end());
  return {fusion_states(signals, scaling), torch::tensor(y, torch::kFloat),
          attack_levels(signals, scaling), anomaly_levels(signals, scaling)};
}

std::vector<std::uint8_t> graph_labels(const store::GraphStore& store,
                                       std::span<const std::uint32_t> graph_ids) {
  const auto all = store.size_index().label;
  std::vector<std::uint8_t> labels;
  labels.reserve(graph_ids.size());
  for (const auto id : graph_ids) labels.push_back(all[id]);
  return labels;
}

std::vector<float> to_float_vector(const at::Tensor& values) {
  const auto host = values.to(torch::kCPU, torch::kFloat).contiguous();
  return {host.data_ptr<float>(), host.data_ptr<float>() + host.numel()};
}

FusedScores fused_attack_scores(const std::filesystem::path& checkpoint,
                                const store::GraphStore& store,
                                std::span<const std::uint32_t> graph_ids,
                                const TrainingConfig& config, const RunContext& context,
                                const SharedFusionInputs& shared) {
  FusedScores result;
  const auto& info = result.info = read_checkpoint_info(checkpoint);
  if (!is_fusion_kind(info.kind))
    throw std::runtime_error(
        fmt::format("{}: holds a {} model, not a fusion", checkpoint.string(), info.kind));
  auto learner = make_fusion_learner(info.kind, info.model_config.at("network"));
  load_checkpoint_weights(checkpoint, learner->model());
  const auto scaling = info.model_config.at("scaling").get<FusionScaling>();
  const FusionSources sources{info.model_config.at("classifier").get<std::string>(),
                              info.model_config.at("autoencoder").get<std::string>()};
  std::optional<FusionSignals> own_signals;
  FusionSignals& signal_cache =
      shared.signals ? *shared.signals : own_signals.emplace(store, graph_ids, config, context);
  const at::Tensor& gnn_signals = signal_cache.of(sources);
  const bool hybrid = is_hybrid_fusion(info);
  const auto adaptation = baseline_adaptation(config.evaluation);
  const baseline::StoreBaseline* baseline = shared.baseline;
  std::optional<baseline::StoreBaseline> computed;
  if (hybrid && baseline == nullptr)
    baseline = &computed.emplace(baseline::score_store_windows(store, graph_ids, adaptation));
  const auto signals = hybrid ? with_baseline_signal(gnn_signals, baseline->scores) : gnn_signals;
  const auto labels = graph_labels(store, graph_ids);
  const auto& scores = result.scores =
      to_float_vector(learner->fused_scores(fusion_data(signals, labels, scaling)));
  const auto& evaluation = config.evaluation;
  // Rescaled on each file's `windows` (after those a hybrid's baseline learnt from); a hybrid's
  // states read the baseline's scores adapted the same way (`adapted_scores`).
  const auto per_file = [&](std::map<std::uint32_t, std::vector<std::uint32_t>> windows,
                            std::size_t baseline_learned,
                            std::vector<float> baseline::StoreBaseline::*adapted_scores) {
    const bool adapted_baseline = hybrid && !(baseline->*adapted_scores).empty();
    if (hybrid) windows = unlearned(std::move(windows), baseline_learned);
    return rescaled_per_file(
        *learner,
        adapted_baseline ? with_baseline_signal(gnn_signals, baseline->*adapted_scores) : signals,
        labels, scores, store, graph_ids, windows);
  };
  if (evaluation.vehicle_calibration_windows > 0)
    result.vehicle = per_file(
        eval::vehicle_calibration_windows(store, graph_ids, adaptation.calibration_windows),
        adaptation.calibration_learned_windows, &baseline::StoreBaseline::calibration_scores);
  if (evaluation.label_free_windows > 0)
    result.label_free = per_file(
        eval::label_free_adaptation_windows(store, graph_ids, adaptation.adaptation_windows),
        adaptation.learned_windows, &baseline::StoreBaseline::label_free_scores);
  return result;
}

}  // namespace headroom::train
