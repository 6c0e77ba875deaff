#include "headroom/eval/evaluation_report.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace headroom::eval {
namespace {

// Graph labels and scores of one group, in input order.
struct GroupData {
  std::vector<std::uint8_t> labels;
  std::vector<float> scores;
  void add(std::uint8_t label, float score) {
    labels.push_back(label);
    scores.push_back(score);
  }
};

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

std::string format_metric(double value) {
  return std::isnan(value) ? std::string("n/a") : fmt::format("{:.4f}", value);
}

}  // namespace

ModelEvaluation evaluate_scores(const store::GraphStore& store, std::string model,
                                std::span<const std::uint32_t> graph_ids,
                                std::span<const float> scores, double threshold) {
  if (graph_ids.size() != scores.size()) {
    throw std::invalid_argument(fmt::format("evaluate_scores: {} graph ids but {} scores",
                                            graph_ids.size(), scores.size()));
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
    splits[split].add(index.label[g], scores[i]);
    attack_types[{split, index.attack_type[g]}].add(index.label[g], scores[i]);
  }

  const auto split_name = [&](std::size_t split) {
    return split == 0 ? std::string("validation") : metadata.splits.at(split - 1).name;
  };
  const auto attack_name = [&](std::uint16_t attack_type) {
    return metadata.attack_types.at(attack_type);
  };

  ModelEvaluation evaluation;
  evaluation.model = std::move(model);
  for (const auto& [split, data] : splits) {
    evaluation.groups.push_back(
        {split_name(split), "", binary_metrics(data.labels, data.scores, threshold)});
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
  for (const auto& [split, attack, data] : rows) {
    evaluation.groups.push_back(
        {split_name(split), attack, binary_metrics(data->labels, data->scores, threshold)});
  }
  return evaluation;
}

void to_json(nlohmann::json& json, const ModelEvaluation& evaluation) {
  nlohmann::json groups = nlohmann::json::array();
  for (const auto& group : evaluation.groups) {
    groups.push_back(
        {{"split", group.split}, {"attack_type", group.attack_type}, {"metrics", group.metrics}});
  }
  json = nlohmann::json{{"model", evaluation.model}, {"groups", std::move(groups)}};
}

std::string render_table(const ModelEvaluation& evaluation) {
  constexpr std::size_t kColumns = 8;
  using Row = std::array<std::string, kColumns>;
  std::vector<Row> rows;
  rows.push_back({"split", "attack type", "n", "accuracy", "precision", "recall", "F1", "ROC AUC"});
  for (const auto& group : evaluation.groups) {
    const BinaryMetrics& m = group.metrics;
    rows.push_back({group.split, group.attack_type.empty() ? "all" : group.attack_type,
                    std::to_string(m.count), format_metric(m.accuracy), format_metric(m.precision),
                    format_metric(m.recall), format_metric(m.f1), format_metric(m.roc_auc)});
  }
  std::array<std::size_t, kColumns> width{};
  for (const auto& row : rows) {
    for (std::size_t c = 0; c < kColumns; ++c) width[c] = std::max(width[c], row[c].size());
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t c = 0; c < kColumns; ++c) {
      if (c > 0) line += "  ";
      // Names left-aligned, numbers right-aligned so their decimal points line up.
      line +=
          c < 2 ? fmt::format("{:<{}}", row[c], width[c]) : fmt::format("{:>{}}", row[c], width[c]);
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line;
    out += '\n';
  }
  return out;
}

}  // namespace headroom::eval
