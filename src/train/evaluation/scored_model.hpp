// One model's evaluation and the per-graph scores it was made from, and the scores table an
// evaluation writes of it (scores/{model}.csv). Private to the evaluation wing.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "headroom/eval/evaluation_report.hpp"
#include "headroom/store/graph_store.hpp"

namespace headroom::train::detail {

// `scores` in the order of the ids evaluated; `adapted_scores` only where the model adapts its
// scores to each vehicle without labels (a fusion, the baseline): the scores of its label-free
// decisions.
struct ScoredModel {
  eval::ModelEvaluation evaluation;
  std::vector<float> scores;
  std::vector<float> adapted_scores;
  // How the scoring pass's batches were planned (InferenceBatching::info); empty when not.
  nlohmann::json inference_batches = nlohmann::json::object();
};

// scores/{model}.csv of `scored`, scored on `ids` of `store`: one row per graph evaluated (graph,
// split, file, window, label, attack type, score, and the label-free score where there is one),
// so that a user can audit any decision or try another threshold without scoring again. Fields
// are quoted as RFC 4180 says where they hold a comma, quote or line break.
std::string scores_csv(const store::GraphStore& store, std::span<const std::uint32_t> ids,
                       const ScoredModel& scored);

}  // namespace headroom::train::detail
