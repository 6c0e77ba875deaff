// The classical baseline (traffic_profile.hpp) on a graph store's own windows and splits, so that
// evaluation scores it like any model: it learns from the normal frames of the store's training
// windows (validation windows left out, as the models never train on them) and scores each window
// by the mean surprise of its frames. The frames are re-read from the CAN files the store was
// built from (its dataset root and file paths), which must still be there, unchanged.
#pragma once

#include <cstdint>
#include <span>
#include <stdexcept>
#include <vector>

#include "headroom/baseline/traffic_profile.hpp"
#include "headroom/store/graph_store.hpp"

namespace headroom::baseline {

// The store's CAN files cannot be read back as the store read them: a file is missing or
// unreadable, or reads a different number of frames. The message names the file and the reason.
class BaselineUnavailable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct StoreBaseline {
  TrafficProfile profile;
  std::vector<float> scores;  // one per graph id asked for, in that order
};

// Learns the profile from the store's training windows and scores `graph_ids` (any split). Reads
// one file at a time; memory is one file's frames (24 bytes each) plus the profile. Throws
// BaselineUnavailable, std::out_of_range for a graph id outside the store.
StoreBaseline score_store_windows(const store::GraphStore& store,
                                  std::span<const std::uint32_t> graph_ids);

}  // namespace headroom::baseline
