#include "headroom/store/node_subgraph.hpp"

#include <stdexcept>
#include <string>

namespace headroom::store {

std::vector<std::uint32_t> NodeSubgraph::nodes_in(NodeSplit split) const {
  std::vector<std::uint32_t> chosen;
  for (std::size_t i = 0; i < splits.size(); ++i) {
    if (splits[i] == static_cast<std::uint8_t>(split))
      chosen.push_back(static_cast<std::uint32_t>(i));
  }
  return chosen;
}

NodeSubgraph induced_subgraph(const NodeGraphStore& store, std::span<const std::uint32_t> nodes) {
  const auto total = store.num_nodes();
  // New id of each store node, -1 when it is not chosen.
  std::vector<std::int32_t> renumbered(total, -1);
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i] >= total || (i > 0 && nodes[i] <= nodes[i - 1]))
      throw std::invalid_argument(
          "induced subgraph: the nodes must be ascending, distinct and "
          "below " +
          std::to_string(total));
    renumbered[nodes[i]] = static_cast<std::int32_t>(i);
  }
  const auto offsets = store.row_offsets();
  const auto columns = store.column_index();
  const auto weights = store.edge_weight();
  NodeSubgraph sub;
  sub.row_offsets.reserve(nodes.size() + 1);
  sub.row_offsets.push_back(0);
  for (const auto node : nodes) {
    // Renumbering keeps the order of the chosen nodes, so each row's columns stay ascending.
    for (auto e = offsets[node]; e < offsets[node + 1]; ++e) {
      const auto column =
          renumbered[static_cast<std::size_t>(columns[static_cast<std::size_t>(e)])];
      if (column < 0) continue;
      sub.columns.push_back(column);
      sub.weights.push_back(weights[static_cast<std::size_t>(e)]);
    }
    sub.row_offsets.push_back(static_cast<std::int64_t>(sub.columns.size()));
    sub.labels.push_back(store.node_label()[node]);
    sub.splits.push_back(store.node_split()[node]);
  }
  return sub;
}

}  // namespace headroom::store
