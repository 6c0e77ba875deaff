#include "headroom/eval/evaluation_report.hpp"

#include "headroom/eval/decision_threshold.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "headroom/util/printable_text.hpp"

namespace headroom::eval {
namespace {

// Graph labels and scores of one group, in input order; `ids` the graphs'. `vehicle_scores` are the
// scores of the per-file decisions (VehicleCalibration::scores, else the same as `scores`).
struct GroupData {
  std::vector<std::uint8_t> labels;
  std::vector<float> scores;
  std::vector<float> vehicle_scores;
  std::vector<std::uint32_t> ids;
  void add(std::uint8_t label, float score, float vehicle_score, std::uint32_t id) {
    labels.push_back(label);
    scores.push_back(score);
    vehicle_scores.push_back(vehicle_score);
    ids.push_back(id);
  }
};

// Vehicle calibration: a threshold per test file (one recording of one vehicle) and the graphs
// each was chosen on.
struct VehicleDecisions {
  std::map<std::uint32_t, double> threshold_by_file;
  std::vector<std::uint32_t> calibration_ids;  // sorted
  bool calibrates(std::uint32_t id) const {
    return std::binary_search(calibration_ids.begin(), calibration_ids.end(), id);
  }
};

// `data` without the calibration graphs, each decided at its file's threshold (graphs of a file
// that could not be calibrated are left out too).
BinaryMetrics vehicle_metrics(const GroupData& data, const VehicleDecisions& decisions,
                              std::span<const std::uint32_t> file_of) {
  std::vector<std::uint8_t> labels;
  std::vector<float> margins;  // score minus the file's threshold: decided at 0
  for (std::size_t i = 0; i < data.ids.size(); ++i) {
    const auto it = decisions.threshold_by_file.find(file_of[data.ids[i]]);
    if (it == decisions.threshold_by_file.end() || decisions.calibrates(data.ids[i])) continue;
    labels.push_back(data.labels[i]);
    margins.push_back(static_cast<float>(static_cast<double>(data.vehicle_scores[i]) - it->second));
  }
  return binary_metrics(labels, margins, 0.0);
}

constexpr std::size_t kNotEvaluated = static_cast<std::size_t>(-1);

// Position of a graph's split in the report: 0 = validation, 1 + k = store split k (a test
// directory); kNotEvaluated for training graphs outside the validation ids.
std::size_t report_split(const store::GraphStore& store, std::span<const std::uint32_t> validation,
                         std::uint32_t graph_id) {
  if (std::binary_search(validation.begin(), validation.end(), graph_id)) return 0;
  const std::size_t split = store.size_index().split[graph_id];
  if (store.metadata().splits.at(split).role == "test") return 1 + split;
  return kNotEvaluated;
}

// Each calibrated test file's threshold, set on its calibration windows' vehicle scores
// (`vehicle_score_of` by graph id).
VehicleDecisions decide_vehicles(const store::GraphStore& store,
                                 std::span<const std::uint32_t> graph_ids,
                                 const std::vector<float>& vehicle_score_of,
                                 const VehicleCalibration& vehicle, ModelEvaluation& evaluation) {
  VehicleDecisions decisions;
  for (const auto& [file, ids] :
       vehicle_calibration_windows(store, graph_ids, vehicle.normal_windows)) {
    const std::vector<std::uint8_t> labels(ids.size(), 0);
    std::vector<float> scores;
    for (const auto id : ids) scores.push_back(vehicle_score_of[id]);
    const double threshold = fpr_threshold(labels, scores, vehicle.target_fpr);
    decisions.threshold_by_file[file] = threshold;
    evaluation.vehicle_thresholds[store.metadata().files.at(file).path] = threshold;
    decisions.calibration_ids.insert(decisions.calibration_ids.end(), ids.begin(), ids.end());
  }
  std::sort(decisions.calibration_ids.begin(), decisions.calibration_ids.end());
  return decisions;
}

// Without a single attack label, accuracy, precision, recall, F1 and MCC measure nothing (F1 0
// beside accuracy 1.0 reads like a verdict on the model): they become NaN, printed "n/a" and
// written null. The false-positive rate keeps its meaning.
void undefined_without_attacks(BinaryMetrics& m) {
  if (m.positives > 0) return;
  constexpr double kUndefined = std::numeric_limits<double>::quiet_NaN();
  m.accuracy = m.precision = m.recall = m.f1 = m.mcc = kUndefined;
}

// Says so when the last group (a whole split) holds windows but no attack label.
void add_unlabelled_warning(ModelEvaluation& evaluation, const std::string& split) {
  const auto& m = evaluation.groups.back().metrics;
  if (m.count == 0 || m.positives > 0) return;
  evaluation.warnings.push_back(
      fmt::format("{}: no attack labels (all {} windows are normal): accuracy, precision, recall, "
                  "F1 and MCC are n/a; only the false-positive rate measures the model there",
                  util::printable_name(split), m.count));
}

std::string format_metric(double value) {
  return std::isnan(value) ? std::string("n/a") : fmt::format("{:.4f}", value);
}

// Warns when the last group (a whole split with both classes) flags every window or none.
void add_degenerate_warnings(ModelEvaluation& evaluation, const std::string& split) {
  const auto& g = evaluation.groups.back();
  const auto check = [&](const BinaryMetrics& m, const std::string& decision) {
    if (m.positives == 0 || m.positives == m.count) return;
    const auto flagged = m.confusion.true_positives + m.confusion.false_positives;
    if (flagged == m.count)
      evaluation.warnings.push_back(util::printable_name(split) + ": flags every window " +
                                    decision);
    else if (flagged == 0)
      evaluation.warnings.push_back(util::printable_name(split) + ": flags no window " + decision);
  };
  check(g.metrics, fmt::format("at {:.4g}", evaluation.decision_threshold));
  if (g.calibrated)
    check(*g.calibrated,
          fmt::format("at the calibrated threshold {:.4g}", *evaluation.calibrated_threshold));
}

}  // namespace

std::map<std::uint32_t, std::vector<std::uint32_t>> vehicle_calibration_windows(
    const store::GraphStore& store, std::span<const std::uint32_t> graph_ids,
    std::size_t normal_windows) {
  std::map<std::uint32_t, std::vector<std::uint32_t>> windows;
  if (normal_windows == 0) return windows;
  std::vector<std::uint32_t> validation(store.validation_ids().begin(),
                                        store.validation_ids().end());
  std::sort(validation.begin(), validation.end());
  const store::GraphSizeIndex index = store.size_index();
  for (const auto id : graph_ids) {
    if (id >= store.num_graphs() || index.label[id] != 0) continue;
    const std::size_t split = report_split(store, validation, id);
    if (split == 0 || split == kNotEvaluated) continue;
    windows[index.file[id]].push_back(id);
  }
  for (auto it = windows.begin(); it != windows.end();) {
    auto& ids = it->second;
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    if (ids.size() <= normal_windows) {
      it = windows.erase(it);
      continue;
    }
    ids.resize(normal_windows);
    ++it;
  }
  return windows;
}

ModelEvaluation evaluate_scores(const store::GraphStore& store, std::string model,
                                std::span<const std::uint32_t> graph_ids,
                                std::span<const float> scores,
                                std::optional<double> calibrated_threshold,
                                double decision_threshold, const VehicleCalibration& vehicle) {
  if (graph_ids.size() != scores.size()) {
    throw std::invalid_argument(fmt::format("evaluate_scores: {} graph ids but {} scores",
                                            graph_ids.size(), scores.size()));
  }
  const std::span<const float> vehicle_scores = vehicle.scores.empty() ? scores : vehicle.scores;
  if (vehicle_scores.size() != scores.size()) {
    throw std::invalid_argument(fmt::format("evaluate_scores: {} scores but {} vehicle scores",
                                            scores.size(), vehicle_scores.size()));
  }
  const auto& metadata = store.metadata();
  const store::GraphSizeIndex index = store.size_index();
  std::vector<std::uint32_t> validation(store.validation_ids().begin(),
                                        store.validation_ids().end());
  std::sort(validation.begin(), validation.end());  // stored ascending; sorting costs nothing

  std::map<std::size_t, GroupData> splits;
  std::map<std::pair<std::size_t, std::uint16_t>, GroupData> attack_types;
  for (std::size_t i = 0; i < graph_ids.size(); ++i) {
    const std::uint32_t g = graph_ids[i];
    if (g >= store.num_graphs()) {
      throw std::out_of_range(
          fmt::format("evaluate_scores: graph id {} is not in the store ({} "
                      "graphs)",
                      g, store.num_graphs()));
    }
    const std::size_t split = report_split(store, validation, g);
    if (split == kNotEvaluated) continue;
    splits[split].add(index.label[g], scores[i], vehicle_scores[i], g);
    attack_types[{split, index.attack_type[g]}].add(index.label[g], scores[i], vehicle_scores[i],
                                                    g);
  }

  const auto split_name = [&](std::size_t split) {
    return split == 0 ? std::string("validation") : metadata.splits.at(split - 1).name;
  };
  const auto attack_name = [&](std::uint16_t attack_type) {
    return metadata.attack_types.at(attack_type);
  };

  ModelEvaluation evaluation;
  evaluation.model = std::move(model);
  evaluation.decision_threshold = decision_threshold;
  evaluation.calibrated_threshold = calibrated_threshold;
  VehicleDecisions vehicle_decisions;
  if (vehicle.normal_windows > 0) {
    std::vector<float> vehicle_score_of(store.num_graphs(), 0.0F);
    for (std::size_t i = 0; i < graph_ids.size(); ++i)
      vehicle_score_of[graph_ids[i]] = vehicle_scores[i];
    vehicle_decisions = decide_vehicles(store, graph_ids, vehicle_score_of, vehicle, evaluation);
  }
  const auto group = [&](std::size_t split, std::string attack, const GroupData& data) {
    EvaluationGroup g{split_name(split),
                      std::move(attack),
                      binary_metrics(data.labels, data.scores, decision_threshold),
                      std::nullopt,
                      std::nullopt,
                      roc_curve(data.labels, data.scores)};
    if (calibrated_threshold)
      g.calibrated = binary_metrics(data.labels, data.scores, *calibrated_threshold);
    if (split != 0 && !vehicle_decisions.threshold_by_file.empty())
      g.vehicle = vehicle_metrics(data, vehicle_decisions, index.file);
    undefined_without_attacks(g.metrics);
    if (g.calibrated) undefined_without_attacks(*g.calibrated);
    if (g.vehicle) undefined_without_attacks(*g.vehicle);
    return g;
  };
  for (const auto& [split, data] : splits) {
    evaluation.groups.push_back(group(split, "", data));
    add_degenerate_warnings(evaluation, split_name(split));
    add_unlabelled_warning(evaluation, split_name(split));
  }
  // Attack-type rows: split order first, then attack type by name.
  std::vector<std::tuple<std::size_t, std::string, const GroupData*>> rows;
  rows.reserve(attack_types.size());
  for (const auto& [key, data] : attack_types) {
    rows.emplace_back(key.first, attack_name(key.second), &data);
  }
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
    return std::tie(std::get<0>(a), std::get<1>(a)) < std::tie(std::get<0>(b), std::get<1>(b));
  });
  for (const auto& [split, attack, data] : rows)
    evaluation.groups.push_back(group(split, attack, *data));
  return evaluation;
}

void to_json(nlohmann::json& json, const ModelEvaluation& evaluation) {
  nlohmann::json groups = nlohmann::json::array();
  for (const auto& group : evaluation.groups) {
    nlohmann::json g = {
        {"split", group.split}, {"attack_type", group.attack_type}, {"metrics", group.metrics}};
    if (group.calibrated) g["calibrated_metrics"] = *group.calibrated;
    if (group.vehicle) g["vehicle_calibrated_metrics"] = *group.vehicle;
    if (!group.roc.false_positive_rate.empty())
      g["roc"] = {{"false_positive_rate", group.roc.false_positive_rate},
                  {"true_positive_rate", group.roc.true_positive_rate}};
    groups.push_back(std::move(g));
  }
  json = nlohmann::json{{"model", evaluation.model},
                        {"score", evaluation.score},
                        {"decision_threshold", evaluation.decision_threshold},
                        {"groups", std::move(groups)},
                        {"warnings", evaluation.warnings}};
  if (evaluation.calibrated_threshold)
    json["calibrated_threshold"] = *evaluation.calibrated_threshold;
  if (!evaluation.vehicle_thresholds.empty())
    json["vehicle_thresholds"] = evaluation.vehicle_thresholds;
}

std::string render_table(const ModelEvaluation& evaluation) {
  const bool calibrated = evaluation.calibrated_threshold.has_value();
  using Row = std::vector<std::string>;
  std::vector<Row> rows;
  Row header = {"split", "attack type", "n",   "accuracy", "precision", "recall",
                "F1",    "FPR",         "MCC", "ROC AUC",  "PR AUC"};
  if (calibrated)
    for (const char* name : {"cal precision", "cal recall", "cal F1", "cal FPR"})
      header.emplace_back(name);
  const bool vehicle = !evaluation.vehicle_thresholds.empty();
  if (vehicle)
    for (const char* name : {"veh precision", "veh recall", "veh F1", "veh FPR"})
      header.emplace_back(name);
  rows.push_back(header);
  for (const auto& group : evaluation.groups) {
    const BinaryMetrics& m = group.metrics;
    // Split and attack-type names come from directory and file names: escaped.
    Row row = {util::printable_name(group.split),
               group.attack_type.empty() ? "all" : util::printable_name(group.attack_type),
               std::to_string(m.count),
               format_metric(m.accuracy),
               format_metric(m.precision),
               format_metric(m.recall),
               format_metric(m.f1),
               format_metric(m.false_positive_rate),
               format_metric(m.mcc),
               format_metric(m.roc_auc),
               format_metric(m.pr_auc)};
    if (group.calibrated)
      for (const double value : {group.calibrated->precision, group.calibrated->recall,
                                 group.calibrated->f1, group.calibrated->false_positive_rate})
        row.push_back(format_metric(value));
    if (vehicle) {
      if (group.vehicle)
        for (const double value : {group.vehicle->precision, group.vehicle->recall,
                                   group.vehicle->f1, group.vehicle->false_positive_rate})
          row.push_back(format_metric(value));
      else
        row.insert(row.end(), 4, "-");
    }
    rows.push_back(std::move(row));
  }
  std::vector<std::size_t> width(header.size(), 0);
  for (const auto& row : rows)
    for (std::size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  std::string out =
      fmt::format("{}: decisions at {:.6g}", evaluation.score, evaluation.decision_threshold);
  if (calibrated)
    out += fmt::format(", and at the calibrated threshold {:.6g} (cal)",
                       *evaluation.calibrated_threshold);
  if (vehicle)
    out += fmt::format(
        ", and per test file at a threshold set on its first normal windows (veh; they are left "
        "out of the veh columns)");
  out += '\n';
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t c = 0; c < row.size(); ++c) {
      if (c > 0) line += "  ";
      // Names left-aligned, numbers right-aligned so their decimal points line up.
      line +=
          c < 2 ? fmt::format("{:<{}}", row[c], width[c]) : fmt::format("{:>{}}", row[c], width[c]);
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line;
    out += '\n';
  }
  for (const auto& warning : evaluation.warnings) out += "WARNING: " + warning + "\n";
  return out;
}

}  // namespace headroom::eval
