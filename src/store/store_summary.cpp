#include "headroom/store/store_summary.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "headroom/util/printable_text.hpp"

namespace headroom::store {
namespace {

CountDistribution distribution(std::vector<std::uint64_t> values) {
  CountDistribution d;
  if (values.empty()) return d;
  std::sort(values.begin(), values.end());
  auto rank = [&](double q) {
    const auto r = static_cast<std::size_t>(std::ceil(q * static_cast<double>(values.size())));
    return values[std::clamp<std::size_t>(r, 1, values.size()) - 1];
  };
  d.p50 = rank(0.50);
  d.p95 = rank(0.95);
  d.max = values.back();
  return d;
}

SplitSummary summarize_ids(std::string name, const GraphSizeIndex& index,
                           std::span<const std::uint32_t> ids) {
  SplitSummary s;
  s.name = std::move(name);
  std::vector<std::uint64_t> nodes;
  std::vector<std::uint64_t> edges;
  nodes.reserve(ids.size());
  edges.reserve(ids.size());
  for (std::uint32_t id : ids) {
    nodes.push_back(index.num_nodes[id]);
    edges.push_back(index.num_edges[id]);
    s.attack_graphs += index.label[id];
  }
  s.graphs = ids.size();
  s.nodes = distribution(std::move(nodes));
  s.edges = distribution(std::move(edges));
  return s;
}

nlohmann::json to_json(const CountDistribution& d) {
  return {{"p50", d.p50}, {"p95", d.p95}, {"max", d.max}};
}

std::string human_bytes(std::uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024.0 && unit < 4) {
    value /= 1024.0;
    ++unit;
  }
  return unit == 0 ? fmt::format("{} B", bytes) : fmt::format("{:.1f} {}", value, units[unit]);
}

}  // namespace

StoreSummary summarize_store(const GraphStore& store) {
  const StoreMetadata& m = store.metadata();
  const GraphSizeIndex index = store.size_index();
  StoreSummary s;
  s.path = store.path().string();
  s.graphs = m.num_graphs;
  s.nodes = m.num_nodes;
  s.edges = m.num_edges;
  s.bytes_on_disk = store.bytes_on_disk();
  s.window = m.window;
  s.stride = m.stride;
  s.vocabulary_size = m.vocabulary.size();
  s.vocabulary_from = m.vocabulary_from;
  s.node_identity = graph::node_identity_name(m.node_features.identity);
  s.node_feature_groups = m.node_features.group_names();
  s.node_feature_count = m.node_feature_count;
  s.nodes_per_graph = distribution({index.num_nodes.begin(), index.num_nodes.end()});
  s.edges_per_graph = distribution({index.num_edges.begin(), index.num_edges.end()});

  s.splits.push_back(summarize_ids("train", index, store.train_ids()));
  s.splits.push_back(summarize_ids("validation", index, store.validation_ids()));
  s.splits.push_back(summarize_ids("test", index, store.test_ids()));
  for (std::size_t split = 0; split < m.splits.size(); ++split) {
    if (m.splits[split].role != "test") continue;
    std::vector<std::uint32_t> ids;
    for (std::uint32_t id : store.test_ids()) {
      if (index.split[id] == split) ids.push_back(id);
    }
    s.splits.push_back(summarize_ids("test/" + m.splits[split].name, index, ids));
    // Counted while preprocessing (the frames are gone by now); training files have none.
    for (const auto& f : m.files) {
      if (f.split != split) continue;
      s.splits.back().mostly_unknown_graphs += f.mostly_unknown_graphs;
      s.splits[2].mostly_unknown_graphs += f.mostly_unknown_graphs;
    }
  }
  for (const auto& f : m.files) {
    s.files.push_back({f.path, m.splits.at(f.split).name, m.attack_types.at(f.attack_type), f.rows,
                       f.skipped_rows, f.graphs});
  }
  return s;
}

nlohmann::json summary_to_json(const StoreSummary& s) {
  nlohmann::json splits = nlohmann::json::array();
  for (const auto& split : s.splits) {
    splits.push_back({{"name", split.name},
                      {"graphs", split.graphs},
                      {"attack_graphs", split.attack_graphs},
                      {"normal_graphs", split.graphs - split.attack_graphs},
                      {"nodes", to_json(split.nodes)},
                      {"edges", to_json(split.edges)},
                      {"mostly_unknown_graphs", split.mostly_unknown_graphs}});
  }
  nlohmann::json files = nlohmann::json::array();
  for (const auto& f : s.files) {
    files.push_back({{"path", f.path},
                     {"split", f.split},
                     {"attack_type", f.attack_type},
                     {"rows", f.rows},
                     {"skipped_rows", f.skipped_rows},
                     {"graphs", f.graphs}});
  }
  std::vector<std::string> warnings = vocabulary_warnings(s);
  for (auto& warning : label_warnings(s)) warnings.push_back(std::move(warning));
  return {{"store", s.path},
          {"graphs", s.graphs},
          {"nodes", s.nodes},
          {"edges", s.edges},
          {"bytes_on_disk", s.bytes_on_disk},
          {"window", s.window},
          {"stride", s.stride},
          {"vocabulary_size", s.vocabulary_size},
          {"vocabulary_from", s.vocabulary_from},
          {"node_identity", s.node_identity},
          {"node_feature_groups", s.node_feature_groups},
          {"node_feature_count", s.node_feature_count},
          {"nodes_per_graph", to_json(s.nodes_per_graph)},
          {"edges_per_graph", to_json(s.edges_per_graph)},
          {"splits", splits},
          {"files", files},
          {"warnings", warnings}};
}

std::vector<std::string> vocabulary_warnings(const StoreSummary& s) {
  std::vector<std::string> warnings;
  for (const auto& split : s.splits) {
    if (split.name.rfind("test/", 0) != 0 || 2 * split.mostly_unknown_graphs <= split.graphs)
      continue;
    warnings.push_back(fmt::format(
        "{}: {} of {} windows are mostly CAN IDs outside the training vocabulary; {}",
        util::printable_name(split.name), split.mostly_unknown_graphs, split.graphs,
        s.node_identity == "can-id"
            ? "their graphs collapse onto the out-of-vocabulary node, and classifiers trained on "
              "other vehicles cannot be trusted on them (--node-identity frequency-rank keeps "
              "them apart)"
            : "node identity " + s.node_identity +
                  " keeps their nodes apart, but their traffic "
                  "is that of a vehicle not seen in training"));
  }
  return warnings;
}

std::vector<std::string> label_warnings(const StoreSummary& s) {
  std::vector<std::string> warnings;
  bool training_unlabelled = false;
  for (const auto& split : s.splits) {
    if (split.graphs == 0 || split.attack_graphs > 0) continue;
    if (split.name == "train") {
      training_unlabelled = true;
      warnings.push_back(fmt::format(
          "train: no attack labels (all {} windows are normal): the classifier stages (normal, "
          "curriculum) have no attack to learn; the autoencoder, trained on normal windows, is "
          "the stage for unlabelled data",
          split.graphs));
    } else if (split.name == "validation" && !training_unlabelled) {
      warnings.push_back(fmt::format(
          "validation: no attack labels (all {} windows are normal): F1 and recall cannot be "
          "measured on it, nor a decision threshold calibrated for F1",
          split.graphs));
    } else if (split.name.rfind("test/", 0) == 0) {
      warnings.push_back(fmt::format(
          "{}: no attack labels (all {} windows are normal): detection cannot be measured there "
          "(recall, precision and F1 are n/a); only false alarms can",
          util::printable_name(split.name), split.graphs));
    }
  }
  return warnings;
}

std::string render_summary(const StoreSummary& s) {
  std::string out;
  auto line = [&](const std::string& text) { out += text + "\n"; };
  line(fmt::format("store      {}", util::printable_path(s.path)));
  // A dataset written from outside (identity "given") has no windows and no CAN IDs.
  const bool given = s.node_identity == graph::node_identity_name(graph::NodeIdentity::kGiven);
  if (given)
    line(fmt::format("graphs     {}  (a graph dataset written into the store, not CAN windows)",
                     s.graphs));
  else
    line(fmt::format("graphs     {}  (window {}, stride {})", s.graphs, s.window, s.stride));
  line(fmt::format("nodes      {}  per graph p50 {} / p95 {} / max {}", s.nodes,
                   s.nodes_per_graph.p50, s.nodes_per_graph.p95, s.nodes_per_graph.max));
  line(fmt::format("edges      {}  per graph p50 {} / p95 {} / max {}", s.edges,
                   s.edges_per_graph.p50, s.edges_per_graph.p95, s.edges_per_graph.max));
  if (!given)
    line(fmt::format("CAN IDs    {} in the training vocabulary (+1 out-of-vocabulary index){}",
                     s.vocabulary_size,
                     s.vocabulary_from == "normal" ? ", from normal frames only" : ""));
  line(fmt::format("features   {} per node ({}), identity {}", s.node_feature_count,
                   fmt::join(s.node_feature_groups, ", "), s.node_identity));
  line(fmt::format("on disk    {} ({} bytes)", human_bytes(s.bytes_on_disk), s.bytes_on_disk));
  line("");
  line(fmt::format("{:<48} {:>8} {:>8} {:>8} {:>7}  {:>14}  {:>14}  {:>8}", "split", "graphs",
                   "normal", "attack", "attack%", "nodes p50/95/max", "edges p50/95/max",
                   "unknown%"));
  for (const auto& split : s.splits) {
    const double share = split.graphs == 0 ? 0.0
                                           : 100.0 * static_cast<double>(split.attack_graphs) /
                                                 static_cast<double>(split.graphs);
    line(fmt::format(
        "{:<48} {:>8} {:>8} {:>8} {:>6.1f}%  {:>14}  {:>14}  {:>8}",
        util::printable_name(split.name), split.graphs, split.graphs - split.attack_graphs,
        split.attack_graphs, share,
        fmt::format("{}/{}/{}", split.nodes.p50, split.nodes.p95, split.nodes.max),
        fmt::format("{}/{}/{}", split.edges.p50, split.edges.p95, split.edges.max),
        fmt::format("{:.1f}%", split.graphs == 0
                                   ? 0.0
                                   : 100.0 * static_cast<double>(split.mostly_unknown_graphs) /
                                         static_cast<double>(split.graphs))));
  }
  for (const auto& warning : vocabulary_warnings(s)) line("warning: " + warning);
  for (const auto& warning : label_warnings(s)) line("warning: " + warning);
  return out;
}

}  // namespace headroom::store
