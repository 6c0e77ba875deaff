#include "headroom/nn/third_order_paths.hpp"

#include <torch/torch.h>

#include <limits>

namespace headroom::nn {
namespace {

constexpr std::int64_t kAll = std::numeric_limits<std::int64_t>::max();

// A host copy of edge_index's two rows, checked.
at::Tensor host_edges(const at::Tensor& edge_index, std::int64_t num_nodes) {
  TORCH_CHECK(edge_index.dim() == 2 && edge_index.size(0) == 2,
              "third-order paths: edge_index must be [2, E], got ", edge_index.sizes());
  TORCH_CHECK(edge_index.scalar_type() == at::kLong,
              "third-order paths: edge_index must be int64, got ", edge_index.scalar_type());
  TORCH_CHECK(num_nodes >= 0, "third-order paths: num_nodes must be >= 0, got ", num_nodes);
  auto host = edge_index.to(torch::kCPU).contiguous();
  if (host.numel() > 0) {
    const auto low = host.min().item<std::int64_t>();
    const auto high = host.max().item<std::int64_t>();
    TORCH_CHECK(low >= 0 && high < num_nodes, "third-order paths: edge_index holds node ",
                low < 0 ? low : high, ", outside [0, ", num_nodes, ")");
  }
  return host;
}

}  // namespace

ThirdOrderPaths::ThirdOrderPaths(const at::Tensor& edge_index, std::int64_t num_nodes)
    : num_nodes_(num_nodes) {
  const auto host = host_edges(edge_index, num_nodes);
  const std::int64_t edges = host.size(1);
  const auto* source = host.data_ptr<std::int64_t>();
  const auto* target = source + edges;
  for (std::int64_t e = 0; e < edges; ++e) {
    if (source[e] == target[e]) continue;  // a self-loop is no step of a path
    middle_source_.push_back(source[e]);
    middle_target_.push_back(target[e]);
  }
  in_ = group(middle_target_, middle_source_, num_nodes);
  out_ = group(middle_source_, middle_target_, num_nodes);
}

ThirdOrderPaths::Grouped ThirdOrderPaths::group(const std::vector<std::int64_t>& keys,
                                                const std::vector<std::int64_t>& values,
                                                std::int64_t num_nodes) {
  Grouped grouped;
  grouped.offsets.assign(static_cast<std::size_t>(num_nodes) + 1, 0);
  for (const auto key : keys) ++grouped.offsets[static_cast<std::size_t>(key) + 1];
  for (std::size_t v = 0; v < static_cast<std::size_t>(num_nodes); ++v)
    grouped.offsets[v + 1] += grouped.offsets[v];
  grouped.ends.resize(keys.size());
  std::vector<std::int64_t> next(grouped.offsets.begin(), grouped.offsets.end() - 1);
  for (std::size_t e = 0; e < keys.size(); ++e)  // in edge order: each group stays in it
    grouped.ends[static_cast<std::size_t>(next[static_cast<std::size_t>(keys[e])]++)] = values[e];
  return grouped;
}

std::int64_t ThirdOrderPaths::walk(PathCursor& cursor, std::int64_t max_paths,
                                   std::int64_t* const* rows) const {
  std::int64_t n = 0;
  const auto emit = [&n, rows](std::int64_t i, std::int64_t j, std::int64_t k, std::int64_t p) {
    if (rows != nullptr) {
      rows[0][n] = i;
      rows[1][n] = j;
      rows[2][n] = k;
      rows[3][n] = p;
    }
    ++n;
  };
  const auto middles = static_cast<std::int64_t>(middle_source_.size());
  while (n < max_paths && cursor.middle < middles) {
    const auto m = static_cast<std::size_t>(cursor.middle);
    const auto j = static_cast<std::size_t>(middle_source_[m]);
    const auto k = static_cast<std::size_t>(middle_target_[m]);
    if (cursor.in == in_.offsets[j + 1] - in_.offsets[j]) {
      cursor = {cursor.middle + 1, 0, 0};
      continue;
    }
    const std::int64_t i = in_.ends[static_cast<std::size_t>(in_.offsets[j] + cursor.in)];
    if (i == static_cast<std::int64_t>(k) || cursor.out == out_.offsets[k + 1] - out_.offsets[k]) {
      cursor = {cursor.middle, cursor.in + 1, 0};
      continue;
    }
    const std::int64_t p = out_.ends[static_cast<std::size_t>(out_.offsets[k] + cursor.out++)];
    if (p != static_cast<std::int64_t>(j) && p != i)
      emit(i, static_cast<std::int64_t>(j), static_cast<std::int64_t>(k), p);
  }
  // The degenerate paths, one per node (cursor.in counts the nodes done).
  for (; n < max_paths && cursor.in < num_nodes_; ++cursor.in)
    emit(cursor.in, cursor.in, cursor.in, cursor.in);
  return n;
}

std::int64_t ThirdOrderPaths::count() const {
  PathCursor cursor;
  return walk(cursor, kAll, nullptr);
}

at::Tensor ThirdOrderPaths::next(PathCursor& cursor, std::int64_t max_paths) const {
  TORCH_CHECK(max_paths >= 1, "third-order paths: max_paths must be >= 1, got ", max_paths);
  PathCursor counting = cursor;
  const std::int64_t n = walk(counting, max_paths, nullptr);
  auto paths = torch::empty({4, n}, torch::kInt64);
  auto* data = paths.data_ptr<std::int64_t>();
  std::int64_t* const rows[4] = {data, data + n, data + 2 * n, data + 3 * n};
  walk(cursor, n, rows);
  return paths;
}

std::vector<PathCursor> ThirdOrderPaths::chunk_starts(std::int64_t max_paths) const {
  TORCH_CHECK(max_paths >= 1, "third-order paths: max_paths must be >= 1, got ", max_paths);
  std::vector<PathCursor> starts;
  PathCursor cursor;
  while (true) {
    const PathCursor start = cursor;
    const std::int64_t n = walk(cursor, max_paths, nullptr);
    if (n > 0) starts.push_back(start);
    if (n < max_paths) return starts;
  }
}

at::Tensor third_order_paths(const at::Tensor& edge_index, std::int64_t num_nodes) {
  const ThirdOrderPaths paths(edge_index, num_nodes);
  PathCursor cursor;
  return paths.next(cursor, kAll).to(edge_index.device());
}

void for_each_third_order_path_chunk(const at::Tensor& edge_index, std::int64_t num_nodes,
                                     std::int64_t max_paths,
                                     const std::function<void(const at::Tensor& paths)>& visit) {
  const ThirdOrderPaths paths(edge_index, num_nodes);
  PathCursor cursor;
  while (true) {
    const auto chunk = paths.next(cursor, max_paths);
    if (chunk.size(1) == 0) return;
    visit(chunk);
    if (chunk.size(1) < max_paths) return;
  }
}

}  // namespace headroom::nn
