// What an evaluation writes: per model, its table and memory line in the log, {model}.json and
// scores/{model}.csv in the run directory, and its entry of evaluation.json, merged into what
// earlier evaluations left there. Entries measured against another basis (the store, the decision
// settings) are dropped, so that one summary never mixes stores or decision rules, and so is the
// entry of a model asked for and not evaluated now: it no longer holds. Every file is written
// atomically, by the process that writes (util/process_role.hpp). Private to the evaluation wing.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "headroom/eval/evaluation_report.hpp"
#include "headroom/store/graph_store.hpp"
#include "headroom/train/config/training_config.hpp"
#include "headroom/train/context/run_context.hpp"
#include "headroom/train/context/run_directory.hpp"
#include "scored_model.hpp"

namespace headroom::train::detail {

// The settings of the per-file decisions and the anomaly score, as the evaluation run's
// config.json records them.
nlohmann::json per_file_decision_settings(const EvaluationOptions& e);

// Keeps references to everything it is given, which must outlive it. Not thread-safe.
class EvaluationResults {
 public:
  // Reads run/evaluation.json as an earlier evaluation left it and drops its entries of another
  // basis, saying which in the log. Throws std::runtime_error naming the file when it does not
  // parse as a JSON object (it is never silently replaced).
  EvaluationResults(const TrainingConfig& config, const RunContext& context, RunDirectory& run,
                    const store::GraphStore& store, std::span<const std::uint32_t> ids);

  // Logs and writes `scored`, scored from `source` (its checkpoint, or what it is) with a tensor
  // peak of `peak_bytes`, and records it for evaluation.json and the stage's result.
  void record(ScoredModel& scored, const std::string& source, std::int64_t peak_bytes);
  // Drops the earlier entry of `name` from evaluation.json, saying `why` in the log.
  void drop(const std::string& name, const std::string& why);
  // Writes evaluation.json.
  void finish();

  // The evaluations recorded, in order, and each one's scoring peak (tensor bytes) by model.
  std::vector<eval::ModelEvaluation>& models() { return models_; }
  const std::map<std::string, std::int64_t>& peak_tensor_bytes() const { return peaks_; }

 private:
  const RunContext& context_;
  RunDirectory& run_;
  const store::GraphStore& store_;
  std::span<const std::uint32_t> ids_;
  nlohmann::json basis_;
  nlohmann::json summary_;
  std::vector<eval::ModelEvaluation> models_;
  std::map<std::string, std::int64_t> peaks_;
};

}  // namespace headroom::train::detail
