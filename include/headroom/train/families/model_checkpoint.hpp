// Model checkpoints (best.pt): a LibTorch archive holding the module's parameters and buffers
// ("model"), its kind and its configuration as JSON, so a checkpoint alone rebuilds its model.
// Writes are atomic (temporary file, fsync, rename).
#pragma once

#include <torch/nn/module.h>
#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "headroom/eval/decision_threshold.hpp"
#include "headroom/models/gat_with_jk.hpp"
#include "headroom/models/graph_autoencoder.hpp"
#include "headroom/models/graph_classifier.hpp"
#include "headroom/models/model_config.hpp"

namespace headroom::train {

class AutoencoderFamily;  // model_family.hpp

struct CheckpointInfo {
  std::string kind = "gat";     // the model family's name (model_family.hpp)
  nlohmann::json model_config;  // the family's model configuration as JSON
  std::int64_t epoch = -1;      // the epoch whose weights these are (0-based)
  double validation_loss = 0;
  // A classifier's decision threshold, calibrated on the validation split when its stage finished
  // (eval/decision_threshold.hpp); unset: decide at 0.5.
  std::optional<eval::DecisionCalibration> decision;
  // The identity of the store the weights were trained on (store::content_identity, or the node
  // graph's): the checkpoint's own record, which no copied config.json can vouch for. null when
  // not recorded (a checkpoint of an older headroom).
  nlohmann::json store_identity;
};

// A run directory stands for its best.pt. Throws std::runtime_error when neither exists.
std::filesystem::path resolve_checkpoint_path(const std::filesystem::path& path);

// Serialises an archive to `file` atomically.
void save_archive_atomically(torch::serialize::OutputArchive& archive,
                             const std::filesystem::path& file);

void save_model_checkpoint(const std::filesystem::path& file, const torch::nn::Module& model,
                           const CheckpointInfo& info);
CheckpointInfo read_checkpoint_info(const std::filesystem::path& file);
// Loads the weights of checkpoint `file` into `module`, which must have the checkpoint's
// structure (built from its CheckpointInfo). Throws std::runtime_error naming the file when it is
// unreadable or the weights do not fit.
void load_checkpoint_weights(const std::filesystem::path& file, torch::nn::Module& module);

// Rebuild the model from a checkpoint, in eval mode, on `device`. Throws std::runtime_error
// naming the file when it is missing, unreadable or holds another model kind.
models::GATWithJK load_gat_checkpoint(const std::filesystem::path& file, const c10::Device& device);
// An autoencoder family's checkpoint, rebuilt through its family, in eval mode on `device`.
struct LoadedAutoencoder {
  const AutoencoderFamily* family = nullptr;  // the registry's (static storage)
  models::GraphAutoencoder model;
  CheckpointInfo info;
};
// Throws std::runtime_error naming the file when it is missing, unreadable or not an autoencoder.
LoadedAutoencoder load_autoencoder_checkpoint(const std::filesystem::path& file,
                                              const c10::Device& device);
// Any classifier family's checkpoint (GAT, GCN, ...), rebuilt through its family, in eval mode on
// `device`; its info in *info when given. Throws std::runtime_error naming the file when it is
// missing, unreadable or not a classifier.
models::GraphClassifier load_classifier_checkpoint(const std::filesystem::path& file,
                                                   const c10::Device& device,
                                                   CheckpointInfo* info = nullptr);

}  // namespace headroom::train
