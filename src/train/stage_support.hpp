// Internal helpers shared by the stage implementations.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include <torch/nn/module.h>

#include "headroom/store/graph_store.hpp"

namespace headroom::train::detail {

// The ids among `ids` whose graph label equals `label`.
inline std::vector<std::uint32_t> with_label(const store::GraphStore& store,
                                             std::span<const std::uint32_t> ids,
                                             std::uint8_t label) {
  const auto labels = store.size_index().label;
  std::vector<std::uint32_t> out;
  for (const auto id : ids)
    if (labels[id] == label) out.push_back(id);
  return out;
}

// Bytes of a module's parameters and buffers.
inline double parameter_bytes(const torch::nn::Module& module) {
  double bytes = 0;
  for (const auto& p : module.parameters()) bytes += static_cast<double>(p.nbytes());
  for (const auto& b : module.buffers()) bytes += static_cast<double>(b.nbytes());
  return bytes;
}

inline std::int64_t num_ids(const store::GraphStore& store) {
  return static_cast<std::int64_t>(store.metadata().vocabulary.size()) + 1;
}

}  // namespace headroom::train::detail
