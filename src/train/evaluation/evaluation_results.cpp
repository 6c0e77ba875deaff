#include "evaluation_results.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <filesystem>
#include <stdexcept>
#include <utility>
#include <vector>

#include "headroom/train/context/command_budget.hpp"
#include "headroom/util/bounded_json.hpp"
#include "headroom/util/file_reader.hpp"
#include "headroom/util/file_writer.hpp"
#include "headroom/util/printable_text.hpp"
#include "headroom/util/process_role.hpp"

namespace headroom::train::detail {
namespace {

// evaluation.json as an earlier evaluation left it (an empty object when there is none). A file
// that does not parse is an error naming it, never silently replaced.
nlohmann::json read_summary(const std::filesystem::path& file) {
  try {
    // Not blocking on a FIFO, nor reading a device without end (util/file_reader.hpp).
    const auto text = util::read_file_if_present(file);
    if (!text) return nlohmann::json::object();
    auto json = util::parse_json(*text);
    if (!json.is_object()) throw std::runtime_error("not a JSON object");
    return json;
  } catch (const std::exception& e) {
    throw std::runtime_error(
        fmt::format("{}: cannot merge into it ({}); move it away to start a new summary",
                    file.string(), e.what()));
  }
}

// What an entry of evaluation.json was measured against: the store's identity and the settings of
// the decisions. Entries of an earlier evaluation against another basis are dropped when merging,
// so that one summary never mixes stores or decision rules.
nlohmann::json evaluation_basis(const TrainingConfig& config, const store::GraphStore& store) {
  auto basis = per_file_decision_settings(config.evaluation);
  basis["store"] = store::content_identity(store.metadata());
  basis["calibration"] = config.evaluation.calibration;
  basis["target_fpr"] = config.evaluation.target_fpr;
  return basis;
}

// Drops the entries of `summary` measured against another basis (or before entries recorded one),
// saying which in the log.
void drop_entries_of_another_basis(nlohmann::json& summary, const nlohmann::json& basis,
                                   RunDirectory& run) {
  std::vector<std::string> dropped;
  for (auto it = summary.begin(); it != summary.end();) {
    if (it->is_object() && it->value("basis", nlohmann::json()) == basis) {
      ++it;
      continue;
    }
    dropped.push_back(util::printable_name(it.key()));
    it = summary.erase(it);
  }
  if (!dropped.empty())
    run.log(fmt::format(
        "evaluation.json: dropped the earlier entries of {}, measured on another store or with "
        "other decision settings",
        fmt::join(dropped, ", ")));
}

}  // namespace

nlohmann::json per_file_decision_settings(const EvaluationOptions& e) {
  return {{"vehicle_calibration", e.vehicle_calibration_windows},
          {"label_free_windows", e.label_free_windows},
          {"label_free_fence", e.label_free_fence_mads},
          {"anomaly_top_nodes", e.anomaly_top_nodes},
          {"label_free_batch_norm", e.label_free_batch_norm}};
}

EvaluationResults::EvaluationResults(const TrainingConfig& config, const RunContext& context,
                                     RunDirectory& run, const store::GraphStore& store,
                                     std::span<const std::uint32_t> ids)
    : context_(context),
      run_(run),
      store_(store),
      ids_(ids),
      basis_(evaluation_basis(config, store)),
      // Earlier evaluations of other models stay: a model's entry is replaced only by its own.
      summary_(read_summary(run.path() / "evaluation.json")) {
  drop_entries_of_another_basis(summary_, basis_, run_);
}

void EvaluationResults::record(ScoredModel& scored, const std::string& source,
                               std::int64_t peak_bytes) {
  auto& evaluation = scored.evaluation;
  run_.log(fmt::format("\n{} ({})\n{}", util::printable_name(evaluation.model),
                       util::printable_path(source), eval::render_table(evaluation)));
  run_.log(fmt::format("{} on {}: tensor {}", util::printable_name(evaluation.model),
                       context_.device.str(), phase_peak_text(peak_bytes, context_.device_budget)));
  nlohmann::json json = evaluation;
  json["checkpoint"] = source;
  json["basis"] = basis_;
  json["memory"] = {{"device", context_.device.str()},
                    {"peak_tensor_bytes", peak_bytes},
                    {"memory_budget", context_.device_budget},
                    {"inference_batches", scored.inference_batches}};
  if (util::process_role().writes()) {
    util::write_file_atomically(run_.path() / (evaluation.model + ".json"), json.dump(2) + "\n");
    std::filesystem::create_directories(run_.path() / "scores");
    util::write_file_atomically(run_.path() / "scores" / (evaluation.model + ".csv"),
                                scores_csv(store_, ids_, scored));
  }
  summary_[evaluation.model] = json;
  peaks_[evaluation.model] = peak_bytes;
  models_.push_back(std::move(evaluation));
}

void EvaluationResults::drop(const std::string& name, const std::string& why) {
  if (summary_.erase(name) > 0)
    run_.log(fmt::format("evaluation.json: dropped the earlier entry of {} ({})",
                         util::printable_name(name), why));
}

void EvaluationResults::finish() {
  if (util::process_role().writes())
    util::write_file_atomically(run_.path() / "evaluation.json", summary_.dump(2) + "\n");
}

}  // namespace headroom::train::detail
