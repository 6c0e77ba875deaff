#include "headroom/store/graph_paths.hpp"

#include <vector>

namespace headroom::store {
namespace {

// Edges grouped by one end (CSR): node v's other ends are ends[offsets[v] .. offsets[v+1]).
struct Adjacency {
  std::vector<std::uint32_t> offsets;
  std::vector<std::uint32_t> ends;

  std::uint32_t degree(std::uint32_t v) const { return offsets[v + 1] - offsets[v]; }
};

// Self-loops are dropped: they are no paths (graph_paths.hpp).
Adjacency group_by(std::span<const std::int32_t> edges, std::uint32_t num_nodes, bool by_source) {
  Adjacency adjacency;
  adjacency.offsets.assign(num_nodes + 1, 0);
  const std::size_t key_end = by_source ? 0 : 1;
  for (std::size_t e = 0; e + 1 < edges.size(); e += 2)
    if (edges[e] != edges[e + 1]) ++adjacency.offsets[edges[e + key_end] + 1];
  for (std::uint32_t v = 0; v < num_nodes; ++v) adjacency.offsets[v + 1] += adjacency.offsets[v];
  adjacency.ends.resize(adjacency.offsets[num_nodes]);
  std::vector<std::uint32_t> next(adjacency.offsets.begin(), adjacency.offsets.end() - 1);
  for (std::size_t e = 0; e + 1 < edges.size(); e += 2)
    if (edges[e] != edges[e + 1])
      adjacency.ends[next[edges[e + key_end]]++] =
          static_cast<std::uint32_t>(edges[e + 1 - key_end]);
  return adjacency;
}

}  // namespace

PathCounts count_paths(std::span<const std::int32_t> edges, std::uint32_t num_nodes) {
  const Adjacency out = group_by(edges, num_nodes, true);  // k -> p
  const Adjacency in = group_by(edges, num_nodes, false);  // i -> j, grouped by j
  PathCounts counts;
  counts.first = out.ends.size();
  // edges_from_k[v]: how many edges k -> v, for the node k whose middle edges are being counted.
  std::vector<std::uint32_t> edges_from_k(num_nodes, 0);
  for (std::uint32_t k = 0; k < num_nodes; ++k) {
    for (std::uint32_t e = out.offsets[k]; e < out.offsets[k + 1]; ++e) ++edges_from_k[out.ends[e]];
    const std::uint64_t out_k = out.degree(k);
    for (std::uint32_t m = in.offsets[k]; m < in.offsets[k + 1]; ++m) {  // middle edge j -> k
      const std::uint32_t j = in.ends[m];
      const std::uint64_t back = edges_from_k[j];  // k -> j: would step straight back
      counts.second += out_k - back;
      // i -> j (i != k) times k -> p (p != j), less the pairs where p == i: the directed
      // triangles i -> j -> k -> i. i == k is no triangle: edges_from_k[k] is 0 (no self-loops).
      std::uint64_t triangles = 0;
      for (std::uint32_t e = in.offsets[j]; e < in.offsets[j + 1]; ++e)
        triangles += edges_from_k[in.ends[e]];
      counts.third += (in.degree(j) - back) * (out_k - back) - triangles;
    }
    for (std::uint32_t e = out.offsets[k]; e < out.offsets[k + 1]; ++e)
      edges_from_k[out.ends[e]] = 0;
  }
  counts.third += num_nodes;  // v -> v -> v -> v, one per node
  return counts;
}

}  // namespace headroom::store
