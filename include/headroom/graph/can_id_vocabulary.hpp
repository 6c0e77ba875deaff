// The CAN-ID vocabulary: the sorted unique IDs of the training files get indices 0..K-1; every
// other ID maps to K, the out-of-vocabulary index.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace headroom::graph {

// Immutable after construction; safe to share between threads.
class CanIdVocabulary {
 public:
  CanIdVocabulary() = default;
  // `ids` may be unsorted and contain duplicates.
  explicit CanIdVocabulary(std::vector<std::uint32_t> ids);

  std::uint32_t index_of(std::uint32_t can_id) const;  // K for an unknown ID
  std::uint32_t out_of_vocabulary_index() const { return static_cast<std::uint32_t>(ids_.size()); }
  std::size_t size() const { return ids_.size(); }  // K
  std::span<const std::uint32_t> ids() const { return ids_; }

 private:
  std::vector<std::uint32_t> ids_;  // sorted, unique
};

}  // namespace headroom::graph
