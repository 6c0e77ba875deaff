// The classical baseline in an evaluation: its window scores, computed at most once for its own
// row and for the hybrid fusions that read them too, and its row. Private to the evaluation wing.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "headroom/baseline/store_baseline.hpp"
#include "headroom/store/graph_store.hpp"
#include "headroom/train/config/training_config.hpp"
#include "headroom/train/context/run_directory.hpp"
#include "scored_model.hpp"

namespace headroom::train::detail {

// The classical baseline's window scores (baseline/store_baseline.hpp), computed at most once per
// evaluation for its own row and for the hybrid fusions, which read them too.
class SharedBaseline {
 public:
  // Keeps references to its arguments, which must outlive it. Not thread-safe.
  SharedBaseline(const TrainingConfig& config, RunDirectory& run, const store::GraphStore& store,
                 std::span<const std::uint32_t> ids)
      : config_(config), run_(run), store_(store), ids_(ids) {}

  // The scores of the evaluated ids, label-free and label-picked ones adapted by
  // baseline_adaptation (fusion_scoring.hpp); computed on the first call, which logs what the
  // baseline learnt. Null when the store's CAN files cannot be read back (why_unavailable() says
  // why).
  const baseline::StoreBaseline* scores();
  const std::string& why_unavailable() const { return why_; }

 private:
  const TrainingConfig& config_;
  RunDirectory& run_;
  const store::GraphStore& store_;
  std::span<const std::uint32_t> ids_;
  bool tried_ = false;
  std::optional<baseline::StoreBaseline> scores_;
  std::string why_;
};

// The classical baseline: each window's frames of unknown IDs and mean frame surprise under the
// per-ID inter-arrival times and ID transitions learnt from the training windows, decided like an
// autoencoder's anomaly score; label-free, under a profile that also learnt the first half of each
// test file's adaptation windows, the second half setting the threshold (label-picked: the same
// with the file's calibration windows). nullopt, with the reason in the log, when the store's CAN
// files cannot be read back.
std::optional<ScoredModel> evaluate_baseline(const TrainingConfig& config, RunDirectory& run,
                                             const store::GraphStore& store,
                                             std::span<const std::uint32_t> ids,
                                             SharedBaseline& shared);

}  // namespace headroom::train::detail
