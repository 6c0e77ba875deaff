#include "headroom/graph/can_id_vocabulary.hpp"

#include <algorithm>

namespace headroom::graph {

CanIdVocabulary::CanIdVocabulary(std::vector<std::uint32_t> ids) : ids_(std::move(ids)) {
  std::sort(ids_.begin(), ids_.end());
  ids_.erase(std::unique(ids_.begin(), ids_.end()), ids_.end());
}

std::uint32_t CanIdVocabulary::index_of(std::uint32_t can_id) const {
  const auto it = std::lower_bound(ids_.begin(), ids_.end(), can_id);
  if (it == ids_.end() || *it != can_id) return out_of_vocabulary_index();
  return static_cast<std::uint32_t>(it - ids_.begin());
}

}  // namespace headroom::graph
