// The classical baseline (traffic_profile.hpp) on a graph store's own windows and splits, so that
// evaluation scores it like any model: it learns from the normal frames of the store's training
// windows (validation windows left out, as the models never train on them) and scores each window
// by the mean surprise of its frames. The frames are re-read from the CAN files the store was
// built from (its dataset root and file paths), which must still be there, unchanged. Stateless:
// calls on one store may run concurrently (each reads its own copy of the files).
#pragma once

#include <cstdint>
#include <span>
#include <stdexcept>
#include <vector>

#include "headroom/baseline/traffic_profile.hpp"
#include "headroom/store/graph_store.hpp"

namespace headroom::baseline {

// The store's CAN files cannot be read back as the store read them: the store was not built from
// CAN logs (imported graph tables, a text corpus), or a file is missing or unreadable, or reads a
// different number of frames. The message names the store or file and the reason.
class BaselineUnavailable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Adaptation to the vehicle of each test file, as the evaluation's per-file decisions adapt
// (eval/evaluation_report.hpp). Label-free (eval::LabelFreeAdaptation): a test file with more than
// `adaptation_windows` windows whose vehicle the training profile does not know (the median of its
// first `learned_windows` windows holds a frame of an ID never seen in training) is scored again
// under the training profile extended with those windows, labels unread; a file of a known vehicle
// keeps the training profile, whose scores the label-free threshold then reads as they are. Only
// the windows whose training-profile score lies inside their robust fence (eval::robust_fence,
// `fence_mads`) are learnt. The evaluation then sets the file's threshold on the adaptation windows
// after those, which the profile did not learn from (LabelFreeAdaptation::learned_windows).
// Label-picked (eval::VehicleCalibration, the upper bound): the same on each test file's first
// `calibration_learned_windows` of its first `calibration_windows` normal windows by label.
struct BaselineAdaptation {
  std::size_t adaptation_windows = 0;  // 0: off
  std::size_t learned_windows = 0;     // at most adaptation_windows
  double fence_mads = 3.0;
  std::size_t calibration_windows = 0;          // 0: off
  std::size_t calibration_learned_windows = 0;  // at most calibration_windows
};

struct StoreBaseline {
  TrafficProfile profile;     // learnt from the training windows
  std::vector<float> scores;  // one per graph id asked for, in that order (window_score)
  // With adaptation: the same, each adapted test file's windows under its extended profile (the
  // others as in `scores`); empty without.
  std::vector<float> label_free_scores;
  // With label-picked adaptation: the same, under profiles extended with normal windows; empty
  // without.
  std::vector<float> calibration_scores;
};

// Learns the profile from the store's training windows and scores `graph_ids` (any split). Reads
// one file at a time; memory is one file's frames (24 bytes each) plus the profile. Throws
// BaselineUnavailable, std::out_of_range for a graph id outside the store, std::invalid_argument
// for learned windows above their adaptation or calibration windows.
StoreBaseline score_store_windows(const store::GraphStore& store,
                                  std::span<const std::uint32_t> graph_ids,
                                  const BaselineAdaptation& adaptation = {});

}  // namespace headroom::baseline
