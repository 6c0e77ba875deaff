// A run directory's training state across processes: last.pt (the modules, the optimiser, where the
// loop stands, the random streams), config.json (what a resumed run must agree with), and the
// check that recognises a finished run. Only the process that writes (util/process_role.hpp)
// writes.
#pragma once

#include <filesystem>

#include <string_view>

#include <torch/nn/module.h>
#include <torch/optim/optimizer.h>
#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <string>

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

// Writes last.pt atomically: `task`'s model and auxiliary modules, `optimizer`, `state`, the
// CPU (and with `cuda`, the CUDA) random generators' states, and the run it belongs to
// (write_state_owner with `config` and task.data_identity).
void save_state(const RunDirectory& run, const TrainingConfig& config, const TrainingTask& task,
                torch::optim::Optimizer& optimizer, const LoopState& state, bool cuda);
// Restores what save_state wrote into `task`'s modules, `optimizer` and the random generators,
// mapping tensors to `device`; returns where the loop stood. First refuses a last.pt that is not
// this run's (require_state_owner, against config.optimisation.max_epochs). Throws
// std::runtime_error naming last.pt and the cause (unreadable, another run's, a field that is not
// what headroom writes, weights of another model), and how to start over; nothing is changed then.
LoopState load_state(const RunDirectory& run, const TrainingConfig& config,
                     const TrainingTask& task, torch::optim::Optimizer& optimizer,
                     const c10::Device& device);

// last.pt's owner: the run configuration a resume must agree with (what config.json records as
// "semantic", the store's identity `data_identity` included), written into `archive` as "run".
// Without it a last.pt copied in from another run's directory (another store, another stage or
// preset, more epochs) resumed as this run's, since config.json beside it is this run's.
void write_state_owner(torch::serialize::OutputArchive& archive, const TrainingConfig& config,
                       const nlohmann::json& data_identity);
// Opens the resumable state `file` (last.pt) with its tensors mapped to `device`. Throws
// std::runtime_error naming the file when it is not a readable archive (truncated, not a
// checkpoint).
torch::serialize::InputArchive open_state(const std::filesystem::path& file,
                                          const c10::Device& device);
// Refuses a last.pt that is not this run's: the owner it records ("run", write_state_owner) must
// be `config` on `data_identity`, and the epochs it says are done (its "loop" entry's
// "epochs_done") at most `max_epochs`. Returns that entry (what the loop resumes from). Throws
// std::runtime_error naming `file`, each key that differs ("store.content (was …, now …)") or the
// field that is wrong, and how to start over (--resume false); also for a last.pt that records
// no owner (written before headroom recorded one, or not by headroom).
nlohmann::json require_state_owner(torch::serialize::InputArchive& archive,
                                   const std::filesystem::path& file, const TrainingConfig& config,
                                   const nlohmann::json& data_identity, std::int64_t max_epochs);
// Loads entry `key` of `archive` into `module` (the model, an auxiliary module). Throws
// std::runtime_error naming `file` when the weights do not fit `module` (another family or size).
void read_state_module(torch::serialize::InputArchive& archive, const std::filesystem::path& file,
                       const std::string& key, torch::nn::Module& module);

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
