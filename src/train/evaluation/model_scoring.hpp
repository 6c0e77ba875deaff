// Scoring one trained model in an evaluation, by its kind: a classifier by its attack log-odds, an
// autoencoder by its anomaly score, a fusion by its fused attack log-odds; each decided as
// decision_rules.hpp says. Private to the evaluation wing.
#pragma once

#include <filesystem>
#include <optional>
#include <span>
#include <string>

#include "baseline_scoring.hpp"
#include "headroom/store/graph_store.hpp"
#include "headroom/train/config/training_config.hpp"
#include "headroom/train/context/run_context.hpp"
#include "headroom/train/context/run_directory.hpp"
#include "headroom/train/fusion/fusion_scoring.hpp"
#include "scored_model.hpp"

namespace headroom::train::detail {

// What the models of one evaluation share: the baseline's scores and the GNN signals of each pair
// of models a fusion reads, each computed once.
struct SharedScores {
  SharedBaseline baseline;
  FusionSignals fusion_signals;
};

// The evaluation of the model in `checkpoint` on `ids` of `store` (the validation split first),
// under entry `name`, scored on `context`'s device within its budget. A classifier's attack
// log-odds are decided at even odds and at the threshold its stage calibrated; an autoencoder's
// anomaly score (AutoencoderFamily::graph_scores, or the mean z of its most anomalous nodes) at
// validation_threshold; a fusion's fused P(attack), as log-odds, at 0 and at its calibrated
// threshold. nullopt, with the reason in `run`'s log, when the model cannot be evaluated on this
// store's splits. Throws std::runtime_error for a model trained on another store.
std::optional<ScoredModel> evaluate_model(const TrainingConfig& config, const RunContext& context,
                                          RunDirectory& run, const store::GraphStore& store,
                                          std::span<const std::uint32_t> ids,
                                          const std::filesystem::path& checkpoint, std::string name,
                                          SharedScores& shared);

}  // namespace headroom::train::detail
