#include "headroom/store/node_graph_summary.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "headroom/util/byte_size.hpp"
#include "headroom/util/printable_text.hpp"

namespace headroom::store {
namespace {

DegreeStatistics statistics_of(std::vector<std::uint64_t> degrees) {
  DegreeStatistics s;
  if (degrees.empty()) return s;
  std::sort(degrees.begin(), degrees.end());
  const auto at = [&](double q) {
    return degrees[static_cast<std::size_t>(q * static_cast<double>(degrees.size() - 1))];
  };
  s.min = degrees.front();
  s.p50 = at(0.5);
  s.p95 = at(0.95);
  s.max = degrees.back();
  std::uint64_t total = 0;
  for (const auto d : degrees) total += d;
  s.mean = static_cast<double>(total) / static_cast<double>(degrees.size());
  return s;
}

std::string kind_name(const NodeGraphMetadata& m, std::uint8_t kind) {
  return kind < m.node_kinds.size() ? m.node_kinds[kind] : fmt::format("kind {}", kind);
}

}  // namespace

NodeGraphSummary summarize_node_graph(const NodeGraphStore& store) {
  const NodeGraphMetadata& m = store.metadata();
  NodeGraphSummary s;
  s.path = store.path();
  s.nodes = store.num_nodes();
  s.stored_edges = store.num_edges();
  s.bytes_on_disk = store.bytes_on_disk();
  s.build = m.build;
  const auto kinds = store.node_kind();
  const auto rows = store.row_offsets();
  const auto columns = store.column_index();
  std::vector<std::vector<std::uint64_t>> degrees(m.node_kinds.size());
  std::map<std::pair<std::uint8_t, std::uint8_t>, std::uint64_t> by_kind_pair;
  std::uint64_t self_loops = 0;
  for (std::size_t i = 0; i < s.nodes; ++i) {
    std::uint64_t neighbours = 0;
    for (auto e = rows[i]; e < rows[i + 1]; ++e) {
      const auto j = static_cast<std::size_t>(columns[static_cast<std::size_t>(e)]);
      if (j == i) {
        ++self_loops;
        continue;
      }
      ++neighbours;
      if (j > i) ++by_kind_pair[std::minmax(kinds[i], kinds[j])];
    }
    degrees[kinds[i]].push_back(neighbours);
  }
  for (std::size_t k = 0; k < m.node_kinds.size(); ++k) {
    s.nodes_by_kind.emplace_back(m.node_kinds[k], degrees[k].size());
    s.degree_by_kind.emplace_back(m.node_kinds[k], statistics_of(std::move(degrees[k])));
  }
  for (const auto& [pair, count] : by_kind_pair)
    s.edges_by_kind.emplace_back(kind_name(m, pair.first) + "-" + kind_name(m, pair.second), count);
  s.edges_by_kind.emplace_back("self-loop", self_loops);

  std::vector<std::uint64_t> per_split(kNodeSplitNames.size(), 0);
  std::vector<std::uint64_t> per_class(m.classes.size(), 0);
  const auto splits = store.node_split();
  const auto labels = store.node_label();
  for (std::size_t i = 0; i < s.nodes; ++i) {
    ++per_split[splits[i]];
    if (labels[i] != kNoLabel) ++per_class[static_cast<std::size_t>(labels[i])];
  }
  for (std::size_t k = 1; k < kNodeSplitNames.size(); ++k)
    s.nodes_by_split.emplace_back(std::string(kNodeSplitNames[k]), per_split[k]);
  for (std::size_t c = 0; c < m.classes.size(); ++c)
    s.nodes_by_class.emplace_back(m.classes[c], per_class[c]);
  for (const auto& [name, record] : m.arrays) s.bytes_by_array.emplace_back(name, record.bytes);
  return s;
}

std::string render_node_graph_summary(const NodeGraphSummary& s) {
  std::string out;
  auto line = [&](const std::string& text) { out += text + "\n"; };
  auto list = [](const auto& pairs) {
    std::string text;
    for (const auto& [name, count] : pairs)
      text += fmt::format("{}{} {}", text.empty() ? "" : ", ", count, util::printable_name(name));
    return text;
  };
  line(fmt::format("store      {}  (node graph: one graph, nodes classified)",
                   util::printable_path(s.path)));
  line(fmt::format("nodes      {}: {}", s.nodes, list(s.nodes_by_kind)));
  std::uint64_t undirected = 0;
  for (const auto& [name, count] : s.edges_by_kind) undirected += count;
  line(fmt::format("edges      {} ({} stored, both directions): {}", undirected, s.stored_edges,
                   list(s.edges_by_kind)));
  for (const auto& [kind, d] : s.degree_by_kind)
    line(fmt::format("degree     {}: min {} / p50 {} / p95 {} / max {}, mean {:.1f}",
                     util::printable_name(kind), d.min, d.p50, d.p95, d.max, d.mean));
  line(fmt::format("splits     {}", list(s.nodes_by_split)));
  line(fmt::format("classes    {}: {}", s.nodes_by_class.size(), list(s.nodes_by_class)));
  std::string arrays;
  for (const auto& [name, bytes] : s.bytes_by_array)
    arrays += fmt::format("{}{} {}", arrays.empty() ? "" : ", ", name,
                          util::format_byte_size(static_cast<double>(bytes)));
  line(fmt::format("on disk    {} ({} bytes): {}",
                   util::format_byte_size(static_cast<double>(s.bytes_on_disk)), s.bytes_on_disk,
                   arrays));
  if (s.build.contains("summary") && s.build["summary"].is_array())
    for (const auto& text : s.build["summary"])
      if (text.is_string()) line("built      " + util::printable(text.get<std::string>()));
  return out;
}

nlohmann::json node_graph_summary_to_json(const NodeGraphSummary& s) {
  nlohmann::json degrees = nlohmann::json::object();
  for (const auto& [kind, d] : s.degree_by_kind)
    degrees[kind] = {
        {"min", d.min}, {"p50", d.p50}, {"p95", d.p95}, {"max", d.max}, {"mean", d.mean}};
  auto object = [](const auto& pairs) {
    nlohmann::json json = nlohmann::json::object();
    for (const auto& [name, count] : pairs) json[name] = count;
    return json;
  };
  return {{"store", s.path.string()},
          {"kind", kNodeGraphStoreKind},
          {"nodes", s.nodes},
          {"stored_edges", s.stored_edges},
          {"nodes_by_kind", object(s.nodes_by_kind)},
          {"edges_by_kind", object(s.edges_by_kind)},
          {"degree_by_kind", degrees},
          {"nodes_by_split", object(s.nodes_by_split)},
          {"nodes_by_class", object(s.nodes_by_class)},
          {"bytes_by_array", object(s.bytes_by_array)},
          {"bytes_on_disk", s.bytes_on_disk},
          {"build", s.build}};
}

}  // namespace headroom::store
