#include "headroom/eval/evaluation_report.hpp"

#include "headroom/eval/decision_threshold.hpp"
#include "headroom/eval/label_free_threshold.hpp"

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

// Graph labels and scores of one group, in input order; `ids` the graphs'. `vehicle_scores` and
// `label_free_scores` are the scores of the per-file decisions (VehicleCalibration::scores and
// LabelFreeAdaptation::scores, else the same as `scores`).
struct GroupData {
  std::vector<std::uint8_t> labels;
  std::vector<float> scores;
  std::vector<float> vehicle_scores;
  std::vector<float> label_free_scores;
  std::vector<std::uint32_t> ids;
};

// Per-file decisions: a threshold per test file (one recording of one vehicle) and the graphs
// each was set on, which are left out of the metrics of those decisions.
struct FileDecisions {
  std::map<std::uint32_t, double> threshold_by_file;
  std::vector<std::uint32_t> adaptation_ids;  // sorted
  bool adapts(std::uint32_t id) const {
    return std::binary_search(adaptation_ids.begin(), adaptation_ids.end(), id);
  }
};

// `scores` (of `data`'s graphs) without the adaptation graphs, each decided at its file's
// threshold (graphs of a file without a threshold are left out too).
BinaryMetrics per_file_metrics(const GroupData& data, std::span<const float> scores,
                               const FileDecisions& decisions,
                               std::span<const std::uint32_t> file_of) {
  std::vector<std::uint8_t> labels;
  std::vector<float> margins;  // score minus the file's threshold: decided at 0
  for (std::size_t i = 0; i < data.ids.size(); ++i) {
    const auto it = decisions.threshold_by_file.find(file_of[data.ids[i]]);
    if (it == decisions.threshold_by_file.end() || decisions.adapts(data.ids[i])) continue;
    labels.push_back(data.labels[i]);
    margins.push_back(static_cast<float>(static_cast<double>(scores[i]) - it->second));
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

// Each adapted test file's threshold, `threshold_of` the scores of its adaptation windows
// (`windows`; their scores `score_of` by graph id), recorded by file path in `thresholds`.
template <typename ThresholdOf>
FileDecisions decide_files(const store::GraphStore& store,
                           const std::map<std::uint32_t, std::vector<std::uint32_t>>& windows,
                           const std::vector<float>& score_of, ThresholdOf threshold_of,
                           std::map<std::string, double>& thresholds) {
  FileDecisions decisions;
  for (const auto& [file, ids] : windows) {
    std::vector<float> scores;
    for (const auto id : ids) scores.push_back(score_of[id]);
    const double threshold = threshold_of(std::span<const float>(scores));
    decisions.threshold_by_file[file] = threshold;
    thresholds[store.metadata().files.at(file).path] = threshold;
    decisions.adaptation_ids.insert(decisions.adaptation_ids.end(), ids.begin(), ids.end());
  }
  std::sort(decisions.adaptation_ids.begin(), decisions.adaptation_ids.end());
  return decisions;
}

// The scores by graph id (0 for graphs not among `graph_ids`).
std::vector<float> score_by_graph(const store::GraphStore& store,
                                  std::span<const std::uint32_t> graph_ids,
                                  std::span<const float> scores) {
  std::vector<float> by_graph(store.num_graphs(), 0.0F);
  for (std::size_t i = 0; i < graph_ids.size(); ++i) by_graph[graph_ids[i]] = scores[i];
  return by_graph;
}

// Whether attack type `type` has attack frames in a training file: the attack types a model can
// have seen. nullopt for a type without attack frames anywhere (normal traffic).
std::optional<bool> seen_in_training(const store::StoreMetadata& metadata, std::uint16_t type) {
  bool attacks = false;
  bool seen = false;
  for (const auto& file : metadata.files) {
    if (file.attack_type != type || file.attack_rows == 0) continue;
    attacks = true;
    seen = seen || metadata.splits.at(file.split).role == "train";
  }
  if (!attacks) return std::nullopt;
  return seen;
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

// A decision that barely discriminates: it flags at least 1 - kNearDegenerate of a split's normal
// windows, or catches at most kNearDegenerate of its attack windows (docs/detection.md).
constexpr double kNearDegenerate = 0.05;

// What makes decision `m` degenerate or near it, in words; empty when nothing does. Only for a
// split with both classes.
std::string degeneracy(const BinaryMetrics& m) {
  if (m.positives == 0 || m.positives == m.count) return {};
  const auto flagged = m.confusion.true_positives + m.confusion.false_positives;
  if (flagged == m.count) return "flags every window";
  if (flagged == 0) return "flags no window";
  const double normals = static_cast<double>(m.count - m.positives);
  const double flagged_normal = static_cast<double>(m.confusion.false_positives) / normals;
  const double caught =
      static_cast<double>(m.confusion.true_positives) / static_cast<double>(m.positives);
  if (flagged_normal >= 1 - kNearDegenerate)
    return fmt::format("flags {:.1f}% of the normal windows (near-degenerate: the cut is {:.0f}%)",
                       100 * flagged_normal, 100 * (1 - kNearDegenerate));
  if (caught <= kNearDegenerate)
    return fmt::format(
        "catches {:.1f}% of the attack windows (near-degenerate: the cut is {:.0f}%)", 100 * caught,
        100 * kNearDegenerate);
  return {};
}

// Warns when a decision of the last group (a whole split) is degenerate or near it, and when a
// per-file decision covers only part of the split.
void add_decision_warnings(ModelEvaluation& evaluation, const std::string& split) {
  const auto& g = evaluation.groups.back();
  const auto name = util::printable_name(split);
  const auto check = [&](const std::optional<BinaryMetrics>& m, const std::string& decision) {
    if (!m) return;
    if (const auto what = degeneracy(*m); !what.empty())
      evaluation.warnings.push_back(fmt::format("{}: {} {}", name, what, decision));
  };
  check(g.metrics, fmt::format("at {:.4g}", evaluation.decision_threshold));
  if (g.calibrated)
    check(g.calibrated,
          fmt::format("at the calibrated threshold {:.4g}", *evaluation.calibrated_threshold));
  check(g.vehicle, "at the per-vehicle thresholds");
  check(g.label_free, "at the label-free thresholds");
  const auto coverage = [&](const std::optional<BinaryMetrics>& m, std::size_t adaptation,
                            const std::string& decision) {
    if (!m) return;
    const auto total = g.metrics.count;
    const auto adapted = static_cast<std::int64_t>(adaptation);
    if (m->count + adapted >= total) return;
    evaluation.warnings.push_back(fmt::format(
        "{}: the {} decision judges {} of its {} windows ({} set the thresholds; {} are in files "
        "too short to adapt on)",
        name, decision, m->count, total, adapted, total - adapted - m->count));
  };
  coverage(g.vehicle, g.vehicle_calibration_windows, "per-vehicle");
  coverage(g.label_free, g.adaptation_windows, "label-free");
}

// Per test file, its first `count` graphs among `graph_ids` in store (time) order (only normal
// ones with `normal_only`), for files with more such graphs than that; validation graphs never
// count. The one rule of both per-file decisions.
std::map<std::uint32_t, std::vector<std::uint32_t>> first_test_windows(
    const store::GraphStore& store, std::span<const std::uint32_t> graph_ids, std::size_t count,
    bool normal_only) {
  std::map<std::uint32_t, std::vector<std::uint32_t>> by_file;
  if (count == 0) return by_file;
  std::vector<std::uint32_t> validation(store.validation_ids().begin(),
                                        store.validation_ids().end());
  std::sort(validation.begin(), validation.end());
  const store::GraphSizeIndex index = store.size_index();
  for (const auto id : graph_ids) {
    if (id >= store.num_graphs() || (normal_only && index.label[id] != 0)) continue;
    const std::size_t split = report_split(store, validation, id);
    if (split == 0 || split == kNotEvaluated) continue;
    by_file[index.file[id]].push_back(id);
  }
  for (auto it = by_file.begin(); it != by_file.end();) {
    auto& ids = it->second;
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    if (ids.size() <= count) {
      it = by_file.erase(it);
      continue;
    }
    ids.resize(count);
    ++it;
  }
  return by_file;
}

}  // namespace

std::map<std::uint32_t, std::vector<std::uint32_t>> vehicle_calibration_windows(
    const store::GraphStore& store, std::span<const std::uint32_t> graph_ids,
    std::size_t normal_windows) {
  return first_test_windows(store, graph_ids, normal_windows, /*normal_only=*/true);
}

std::map<std::uint32_t, std::vector<std::uint32_t>> label_free_adaptation_windows(
    const store::GraphStore& store, std::span<const std::uint32_t> graph_ids, std::size_t windows) {
  return first_test_windows(store, graph_ids, windows, /*normal_only=*/false);
}

ModelEvaluation evaluate_scores(const store::GraphStore& store, std::string model,
                                std::span<const std::uint32_t> graph_ids,
                                std::span<const float> scores,
                                std::optional<double> calibrated_threshold,
                                double decision_threshold, const VehicleCalibration& vehicle,
                                const LabelFreeAdaptation& label_free) {
  if (graph_ids.size() != scores.size()) {
    throw std::invalid_argument(fmt::format("evaluate_scores: {} graph ids but {} scores",
                                            graph_ids.size(), scores.size()));
  }
  const std::span<const float> vehicle_scores = vehicle.scores.empty() ? scores : vehicle.scores;
  const std::span<const float> label_free_scores =
      label_free.scores.empty() ? scores : label_free.scores;
  if (vehicle_scores.size() != scores.size() || label_free_scores.size() != scores.size()) {
    throw std::invalid_argument(
        fmt::format("evaluate_scores: {} scores but {} vehicle and {} label-free scores",
                    scores.size(), vehicle_scores.size(), label_free_scores.size()));
  }
  const auto& metadata = store.metadata();
  const store::GraphSizeIndex index = store.size_index();
  std::vector<std::uint32_t> validation(store.validation_ids().begin(),
                                        store.validation_ids().end());
  std::sort(validation.begin(), validation.end());  // stored ascending; sorting costs nothing

  std::map<std::size_t, GroupData> splits;
  std::map<std::pair<std::size_t, std::uint16_t>, GroupData> attack_types;
  const auto add = [&](GroupData& data, std::size_t i) {
    data.labels.push_back(index.label[graph_ids[i]]);
    data.scores.push_back(scores[i]);
    data.vehicle_scores.push_back(vehicle_scores[i]);
    data.label_free_scores.push_back(label_free_scores[i]);
    data.ids.push_back(graph_ids[i]);
  };
  for (std::size_t i = 0; i < graph_ids.size(); ++i) {
    const std::uint32_t g = graph_ids[i];
    if (g >= store.num_graphs()) {
      throw std::out_of_range(fmt::format(
          "evaluate_scores: graph id {} is not in the store ({} graphs)", g, store.num_graphs()));
    }
    const std::size_t split = report_split(store, validation, g);
    if (split == kNotEvaluated) continue;
    add(splits[split], i);
    add(attack_types[{split, index.attack_type[g]}], i);
  }

  const auto split_name = [&](std::size_t split) {
    return split == 0 ? std::string("validation") : metadata.splits.at(split - 1).name;
  };

  ModelEvaluation evaluation;
  evaluation.model = std::move(model);
  evaluation.decision_threshold = decision_threshold;
  evaluation.calibrated_threshold = calibrated_threshold;
  FileDecisions vehicle_decisions;
  if (vehicle.normal_windows > 0) {
    if (vehicle.learned_windows >= vehicle.normal_windows)
      throw std::invalid_argument(
          fmt::format("evaluate_scores: {} of {} vehicle calibration windows learnt from: none "
                      "left to set the threshold on",
                      vehicle.learned_windows, vehicle.normal_windows));
    vehicle_decisions = decide_files(
        store, vehicle_calibration_windows(store, graph_ids, vehicle.normal_windows),
        score_by_graph(store, graph_ids, vehicle_scores),
        [&](std::span<const float> calibration) {
          const auto normal = calibration.subspan(vehicle.learned_windows);
          const std::vector<std::uint8_t> labels(normal.size(), 0);
          return fpr_threshold(labels, normal, vehicle.target_fpr);
        },
        evaluation.vehicle_thresholds);
  }
  FileDecisions label_free_decisions;
  if (label_free.windows > 0) {
    if (label_free.learned_windows >= label_free.windows)
      throw std::invalid_argument(fmt::format(
          "evaluate_scores: {} of {} label-free adaptation windows learnt from: none left to set "
          "the threshold on",
          label_free.learned_windows, label_free.windows));
    label_free_decisions = decide_files(
        store, label_free_adaptation_windows(store, graph_ids, label_free.windows),
        score_by_graph(store, graph_ids, label_free_scores),
        [&](std::span<const float> first) {
          return label_free_threshold(first.subspan(label_free.learned_windows),
                                      label_free.target_fpr, label_free.fence_mads);
        },
        evaluation.label_free_thresholds);
  }
  // A per-file decision asked for that no test file could make says so, rather than vanish.
  const bool has_test_graphs =
      std::any_of(splits.begin(), splits.end(), [](const auto& entry) { return entry.first != 0; });
  if (has_test_graphs && vehicle.normal_windows > 0 && vehicle_decisions.threshold_by_file.empty())
    evaluation.warnings.push_back(fmt::format(
        "the per-vehicle decision judges no window: no test file has more than {} normal windows "
        "(--vehicle-calibration {})",
        vehicle.normal_windows, vehicle.normal_windows));
  if (has_test_graphs && label_free.windows > 0 && label_free_decisions.threshold_by_file.empty())
    evaluation.warnings.push_back(fmt::format(
        "the label-free decision judges no window: no test file has more than {} windows "
        "(--label-free-windows {})",
        label_free.windows, label_free.windows));
  const auto group = [&](std::size_t split, std::string attack, const GroupData& data) {
    EvaluationGroup g{.split = split_name(split),
                      .attack_type = std::move(attack),
                      .metrics = binary_metrics(data.labels, data.scores, decision_threshold),
                      .roc = roc_curve(data.labels, data.scores)};
    if (calibrated_threshold)
      g.calibrated = binary_metrics(data.labels, data.scores, *calibrated_threshold);
    if (split != 0 && !vehicle_decisions.threshold_by_file.empty()) {
      g.vehicle = per_file_metrics(data, data.vehicle_scores, vehicle_decisions, index.file);
      for (const auto id : data.ids) g.vehicle_calibration_windows += vehicle_decisions.adapts(id);
    }
    if (split != 0 && !label_free_decisions.threshold_by_file.empty()) {
      g.label_free =
          per_file_metrics(data, data.label_free_scores, label_free_decisions, index.file);
      for (std::size_t i = 0; i < data.ids.size(); ++i) {
        if (!label_free_decisions.adapts(data.ids[i])) continue;
        ++g.adaptation_windows;
        g.adaptation_attack_windows += data.labels[i] != 0;
      }
    }
    for (auto* m : {&g.calibrated, &g.vehicle, &g.label_free})
      if (*m) undefined_without_attacks(**m);
    undefined_without_attacks(g.metrics);
    return g;
  };
  for (const auto& [split, data] : splits) {
    evaluation.groups.push_back(group(split, "", data));
    add_decision_warnings(evaluation, split_name(split));
    add_unlabelled_warning(evaluation, split_name(split));
  }
  // Attack-type rows: split order first, then attack type by name.
  std::vector<std::tuple<std::size_t, std::string, std::uint16_t, const GroupData*>> rows;
  rows.reserve(attack_types.size());
  for (const auto& [key, data] : attack_types)
    rows.emplace_back(key.first, metadata.attack_types.at(key.second), key.second, &data);
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
    return std::tie(std::get<0>(a), std::get<1>(a)) < std::tie(std::get<0>(b), std::get<1>(b));
  });
  for (const auto& [split, attack, type, data] : rows) {
    evaluation.groups.push_back(group(split, attack, *data));
    evaluation.groups.back().seen_in_training = seen_in_training(metadata, type);
  }
  return evaluation;
}

void to_json(nlohmann::json& json, const ModelEvaluation& evaluation) {
  nlohmann::json groups = nlohmann::json::array();
  for (const auto& group : evaluation.groups) {
    nlohmann::json g = {
        {"split", group.split}, {"attack_type", group.attack_type}, {"metrics", group.metrics}};
    if (group.calibrated) g["calibrated_metrics"] = *group.calibrated;
    if (group.vehicle) {
      g["vehicle_calibrated_metrics"] = *group.vehicle;
      g["vehicle_calibrated_coverage"] = {
          {"judged", group.vehicle->count},
          {"calibration_windows", group.vehicle_calibration_windows},
          {"windows", group.metrics.count}};
    }
    if (group.label_free) {
      g["label_free_metrics"] = *group.label_free;
      g["label_free_coverage"] = {{"judged", group.label_free->count},
                                  {"adaptation_windows", group.adaptation_windows},
                                  {"adaptation_attack_windows", group.adaptation_attack_windows},
                                  {"windows", group.metrics.count}};
    }
    if (group.seen_in_training) g["seen_in_training"] = *group.seen_in_training;
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
  if (evaluation.hybrid) json["hybrid"] = true;
  if (evaluation.calibrated_threshold)
    json["calibrated_threshold"] = *evaluation.calibrated_threshold;
  if (!evaluation.vehicle_thresholds.empty())
    json["vehicle_thresholds"] = evaluation.vehicle_thresholds;
  if (!evaluation.label_free_thresholds.empty())
    json["label_free_thresholds"] = evaluation.label_free_thresholds;
}

std::string render_table(const ModelEvaluation& evaluation) {
  const bool calibrated = evaluation.calibrated_threshold.has_value();
  using Row = std::vector<std::string>;
  std::vector<Row> rows;
  Row header = {"split",  "attack type", "seen", "n",   "accuracy", "precision",
                "recall", "F1",          "FPR",  "MCC", "ROC AUC",  "PR AUC"};
  if (calibrated)
    for (const char* name : {"cal precision", "cal recall", "cal F1", "cal FPR"})
      header.emplace_back(name);
  const bool vehicle = !evaluation.vehicle_thresholds.empty();
  if (vehicle)
    for (const char* name : {"veh precision", "veh recall", "veh F1", "veh FPR"})
      header.emplace_back(name);
  const bool label_free = !evaluation.label_free_thresholds.empty();
  if (label_free)
    for (const char* name : {"lf precision", "lf recall", "lf F1", "lf FPR", "lf judged"})
      header.emplace_back(name);
  rows.push_back(header);
  for (const auto& group : evaluation.groups) {
    const BinaryMetrics& m = group.metrics;
    // Split and attack-type names come from directory and file names: escaped.
    Row row = {util::printable_name(group.split),
               group.attack_type.empty() ? "all" : util::printable_name(group.attack_type),
               !group.seen_in_training ? "-" : (*group.seen_in_training ? "yes" : "no"),
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
    if (label_free) {
      if (group.label_free) {
        for (const double value : {group.label_free->precision, group.label_free->recall,
                                   group.label_free->f1, group.label_free->false_positive_rate})
          row.push_back(format_metric(value));
        row.push_back(fmt::format("{}/{}", group.label_free->count, m.count));
      } else {
        row.insert(row.end(), 5, "-");
      }
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
  if (label_free)
    out += fmt::format(
        ", and per test file at a label-free threshold set on its first windows whatever their "
        "labels (lf; they are left out of the lf columns, which judge the windows shown)");
  out += '\n';
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t c = 0; c < row.size(); ++c) {
      if (c > 0) line += "  ";
      // Names left-aligned, numbers right-aligned so their decimal points line up.
      line +=
          c < 3 ? fmt::format("{:<{}}", row[c], width[c]) : fmt::format("{:>{}}", row[c], width[c]);
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line;
    out += '\n';
  }
  for (const auto& warning : evaluation.warnings) out += "WARNING: " + warning + "\n";
  return out;
}

}  // namespace headroom::eval
