// A run directory's training state across processes: last.pt (the modules, the optimiser, where the
// loop stands, the random streams), config.json (what a resumed run must agree with), and the
// check that recognises a finished run. Only the process that writes (util/process_role.hpp)
// writes.
#pragma once

#include <filesystem>

#include <string_view>

#include <torch/optim/optimizer.h>

#include <cstdint>
#include <limits>
#include <optional>

#include <nlohmann/json.hpp>

#include "headroom/train/config/training_config.hpp"
#include "headroom/train/context/run_directory.hpp"
#include "headroom/train/loop/training_outcome.hpp"
#include "headroom/train/loop/training_task.hpp"

namespace headroom::train {

// What last.pt holds besides the modules: where the loop stands.
struct LoopState {
  std::int64_t epochs_done = 0;
  std::int64_t best_epoch = -1;
  double best_loss = std::numeric_limits<double>::infinity();
  std::int64_t bad_epochs = 0;
  double loss_scale = 0;
  nlohmann::json best_metrics = nlohmann::json::object();
  std::int64_t peak_tensor_bytes = 0;
};

// Writes last.pt atomically: `task`'s model and auxiliary modules, `optimizer`, `state` and the
// CPU (and with `cuda`, the CUDA) random generators' states.
void save_state(const RunDirectory& run, const TrainingTask& task,
                torch::optim::Optimizer& optimizer, const LoopState& state, bool cuda);
// Restores what save_state wrote into `task`'s modules, `optimizer` and the random generators,
// mapping tensors to `device`; returns where the loop stood.
LoopState load_state(const RunDirectory& run, const TrainingTask& task,
                     torch::optim::Optimizer& optimizer, const c10::Device& device);

// The outcome stored in `run` when it holds this configuration's finished run on data with the
// identity `data_identity` (a store's store::content_identity) and config.run.resume is set, else
// nullopt. Throws std::runtime_error when `run` holds a run with a different configuration or one
// on different data, naming each key that differs with both values ("store.window (was 100, now
// 50)"). What every stage asks before it trains.
std::optional<TrainingOutcome> finished_training(const TrainingConfig& config, RunDirectory& run,
                                                 const nlohmann::json& data_identity);
// Whether `run` holds an interrupted run (last.pt and config.json) to continue.
bool resumable_training(const TrainingConfig& config, const RunDirectory& run);
// config.json: the configuration, and the part of it a resumed run must agree with (with the
// identity of the data it trains on).
void record_training_config(const TrainingConfig& config, const RunDirectory& run,
                            const nlohmann::json& data_identity);

// Refuses a model trained on another store than the one it is about to be used with: the store
// identity recorded by the run that wrote `checkpoint` (the config.json beside it) must equal
// `data_identity` (store::content_identity of the store in use). A checkpoint without a run
// configuration beside it (a model copied alone) is not checked. Throws std::runtime_error naming
// the checkpoint, `use` (what it was to be used for, e.g. "to teach this student") and each key
// that differs, and for a config.json that cannot be read.
void require_trained_on(const std::filesystem::path& checkpoint,
                        const nlohmann::json& data_identity, std::string_view use);

}  // namespace headroom::train
