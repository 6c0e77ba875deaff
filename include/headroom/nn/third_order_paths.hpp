// The 3rd-order paths of a batch's graph, as a path-based encoder (SGMP: Zhang et al., "Spatial
// Graph Message Passing") gathers features over them: every i->j->k->p over the stored directed
// edges, exactly the paths store/graph_paths.hpp counts as "third" (so a store's size index
// predicts how many a batch has). Listed whole, or in chunks of a bounded size, so that the memory
// a caller spends on paths follows its plan instead of the batch's blow-up.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <functional>
#include <vector>

namespace headroom::nn {

// Where an enumeration stands (a value; copy it to come back to the same place). Starts at the
// first path; ThirdOrderPaths::next advances it.
struct PathCursor {
  std::int64_t middle = 0;  // the middle edge j->k being visited (index into the non-self-loop
                            // edges, in edge order); their count: the degenerate paths' phase
  std::int64_t in = 0;      // the next in-edge i->j of j (or, last, the next degenerate node)
  std::int64_t out = 0;     // the next out-edge k->p of k
};

// The paths, in this deterministic order: middle edges j->k in edge_index's column order; for
// each, the in-edges i->j in column order; for each, the out-edges k->p in column order; kept when
// i, j, k, p are pairwise distinct. Then one degenerate v->v->v->v per node, v = 0, 1, ... An edge
// given twice is two edges (its paths appear twice); a self-loop edge is no step of any path.
//
// Holds the edges grouped by node, O(nodes + edges) int64 on the host, built from a host copy of
// edge_index (any device). Immutable after construction: its const methods are thread-safe.
class ThirdOrderPaths {
 public:
  // edge_index: int64 [2, E], (source, target) rows of node indices in [0, num_nodes); throws
  // c10::Error otherwise.
  ThirdOrderPaths(const at::Tensor& edge_index, std::int64_t num_nodes);

  std::int64_t num_nodes() const { return num_nodes_; }
  // How many paths there are: one walk without writing any, O(paths + edges) time.
  std::int64_t count() const;
  // The next at most `max_paths` (>= 1) paths from `cursor`, which moves past them: int64
  // [4, n] on the host, rows (i, j, k, p); n < max_paths only at the end (0 once past it).
  at::Tensor next(PathCursor& cursor, std::int64_t max_paths) const;
  // Where each chunk of `max_paths` paths starts: chunk c is next(copy of starts[c], max_paths).
  // Empty when there are no paths. One walk, O(paths + edges) time, O(chunks) memory.
  std::vector<PathCursor> chunk_starts(std::int64_t max_paths) const;

 private:
  // Edges grouped by one end, each group in edge order: node v's other ends are
  // ends[offsets[v] .. offsets[v + 1]).
  struct Grouped {
    std::vector<std::int64_t> offsets;
    std::vector<std::int64_t> ends;
  };
  // Visits at most `max_paths` paths from `cursor`; writes them to rows[0..3][n] when `rows`
  // (4 row pointers) is not null; returns how many it visited.
  std::int64_t walk(PathCursor& cursor, std::int64_t max_paths, std::int64_t* const* rows) const;
  static Grouped group(const std::vector<std::int64_t>& keys,
                       const std::vector<std::int64_t>& values, std::int64_t num_nodes);

  std::int64_t num_nodes_ = 0;
  std::vector<std::int64_t> middle_source_;  // the non-self-loop edges, in edge order
  std::vector<std::int64_t> middle_target_;
  Grouped in_;   // i -> j grouped by j
  Grouped out_;  // k -> p grouped by k
};

// Every path at once: int64 [4, P] on edge_index's device. Memory 32 bytes per path.
at::Tensor third_order_paths(const at::Tensor& edge_index, std::int64_t num_nodes);

// Calls visit(paths) for consecutive chunks of at most `max_paths` paths (int64 [4, n] on the
// host), in the order above; at most one chunk is alive here at a time.
void for_each_third_order_path_chunk(const at::Tensor& edge_index, std::int64_t num_nodes,
                                     std::int64_t max_paths,
                                     const std::function<void(const at::Tensor& paths)>& visit);

}  // namespace headroom::nn
