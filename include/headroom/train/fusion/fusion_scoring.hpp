// Scoring graphs with a trained fusion (fusion_stage.hpp) outside its stage: what evaluation runs
// for every fusion and hybrid it finds. A fusion reads the GNN signals of its two frozen models
// (fusion_features.hpp), a hybrid also the classical baseline's window scores; both can be
// computed once and shared by every fusion an evaluation scores.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <span>
#include <stdexcept>
#include <string_view>
#include <utility>
#include <vector>

#include <ATen/Tensor.h>

#include "headroom/baseline/store_baseline.hpp"
#include "headroom/store/graph_store.hpp"
#include "headroom/train/config/training_config.hpp"
#include "headroom/train/context/run_context.hpp"
#include "headroom/train/families/model_checkpoint.hpp"
#include "headroom/train/fusion/fusion_features.hpp"
#include "headroom/train/fusion/fusion_learner.hpp"

namespace headroom::train {

// Whether a checkpoint kind is a fusion's.
bool is_fusion_kind(std::string_view kind);
// Whether a fusion checkpoint is a hybrid's (FusionOptions::with_baseline).
bool is_hybrid_fusion(const CheckpointInfo& info);

// How the classical baseline adapts to each test file (baseline::BaselineAdaptation): label-free
// it learns the first half of the file's --label-free-windows, label-picked the first half of its
// --vehicle-calibration normal windows; the other half sets the threshold. Its own row and the
// hybrid fusions read the same scores.
baseline::BaselineAdaptation baseline_adaptation(const EvaluationOptions& evaluation);

// The two frozen models a fusion reads: their best.pt files.
struct FusionSources {
  std::filesystem::path classifier;
  std::filesystem::path autoencoder;
};

// The store's validation split lacks normal or attack graphs: there is nothing to fit a fusion on
// (stage fusion, fusion_stage.hpp, throws it; `headroom run` skips that fusion).
class FusionUnavailable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The GNN signals (fusion_signals) of one list of graphs, computed once per pair of models: an
// evaluation that scores several fusions of the same two students runs the students once. Keeps
// references to the store, the graph ids, the configuration and the context, which must outlive
// it. Not thread-safe.
class FusionSignals {
 public:
  FusionSignals(const store::GraphStore& store, std::span<const std::uint32_t> graph_ids,
                const TrainingConfig& config, const RunContext& context);

  // The signals of `sources` for the graph ids, one row each, on the CPU; computed on the first
  // call for this pair (on the context's device and precision) and kept. Throws as loading the
  // checkpoints does, and std::runtime_error when a model was trained on another kind of store.
  const at::Tensor& of(const FusionSources& sources);

 private:
  const store::GraphStore& store_;
  std::span<const std::uint32_t> graph_ids_;
  const TrainingConfig& config_;
  const RunContext& context_;
  std::map<std::pair<std::filesystem::path, std::filesystem::path>, at::Tensor> computed_;
};

// The learner's input for graphs with `signals` and `labels`, scaled by `scaling`.
FusionData fusion_data(const at::Tensor& signals, std::span<const std::uint8_t> labels,
                       const FusionScaling& scaling);

// `values` (any device, any floating type) as floats on the host, in order.
std::vector<float> to_float_vector(const at::Tensor& values);

// The store's label of each of `graph_ids` (1: attack).
std::vector<std::uint8_t> graph_labels(const store::GraphStore& store,
                                       std::span<const std::uint32_t> graph_ids);

// What an evaluation computes once and shares between the fusions it scores; not owned, both
// for the same graph ids as the call. Null: computed for the call.
struct SharedFusionInputs {
  FusionSignals* signals = nullptr;
  // The baseline's scores, computed with baseline_adaptation(config.evaluation); read by hybrids.
  const baseline::StoreBaseline* baseline = nullptr;
};

// A fusion's scores of a list of graphs, one per graph id, in that order.
struct FusedScores {
  CheckpointInfo info;        // the fusion checkpoint's
  std::vector<float> scores;  // fused P(attack)
  // For the per-file decisions (config.evaluation), empty where that decision is off:
  // - with vehicle calibration, each calibrated test file's states scaled against that file's
  //   calibration windows (eval::vehicle_calibration_windows) instead of the fitting graphs, so
  //   that the VGAE's signals of a new vehicle are measured against that vehicle's normal traffic;
  // - with label-free adaptation, the same against each file's first windows whatever their
  //   labels (eval::label_free_adaptation_windows), no label read.
  std::vector<float> vehicle;
  std::vector<float> label_free;
};

// The fusion checkpoint `checkpoint`'s scores of `graph_ids`, computed with the classifier and VGAE
// it names on config.run's device and precision. A hybrid also reads the baseline's window scores;
// its label-free and vehicle states read the baseline's adapted scores and are rescaled on the
// adaptation or calibration windows the baseline did not learn. Throws std::runtime_error for a
// checkpoint that is not a fusion's, baseline::BaselineUnavailable when the store's CAN files
// cannot be read back for a hybrid.
FusedScores fused_attack_scores(const std::filesystem::path& checkpoint,
                                const store::GraphStore& store,
                                std::span<const std::uint32_t> graph_ids,
                                const TrainingConfig& config, const RunContext& context,
                                const SharedFusionInputs& shared = {});

}  // namespace headroom::train
