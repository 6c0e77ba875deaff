#include "headroom/train/loop/run_resume.hpp"

#include <torch/torch.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "headroom/train/families/model_checkpoint.hpp"
#include "headroom/util/bounded_json.hpp"
#include "headroom/util/file_reader.hpp"
#include "headroom/util/printable_text.hpp"
#include "headroom/util/regular_file.hpp"

namespace headroom::train {
namespace {

// What a run computes: the configuration without the settings that change only how it executes
// (a resumed run may differ in them), and in place of the store's path the data's identity, so
// that a store rebuilt with other settings or from other data is a different run.
nlohmann::json semantic_config(const TrainingConfig& config, const nlohmann::json& data_identity) {
  nlohmann::json json = config;
  for (const char* key : {"threads", "prefetch_depth", "runs_dir", "store", "models",
                          "clear_cache_every_n", "step_metrics_every", "offload_teacher_to_cpu"})
    json.erase(key);
  json["store"] = data_identity;
  return json;
}

// Each key in which `before` and `now` differ, nested ones dotted ("store.window"), with both
// values where they are scalars ("learning_rate (was 0.003, now 0.01)").
void collect_differences(const nlohmann::json& before, const nlohmann::json& now,
                         const std::string& prefix, std::vector<std::string>& out) {
  for (const auto& [key, value] : before.items()) {
    const auto name = prefix + key;
    if (!now.contains(key)) {
      out.push_back(name + " (no longer recorded)");
    } else if (value.is_object() && now.at(key).is_object()) {
      collect_differences(value, now.at(key), name + ".", out);
    } else if (now.at(key) != value) {
      out.push_back(value.is_primitive() && now.at(key).is_primitive()
                        ? fmt::format("{} (was {}, now {})", name, value.dump(), now.at(key).dump())
                        : name);
    }
  }
  for (const auto& [key, value] : now.items())
    if (!before.contains(key)) out.push_back(prefix + key + " (not recorded before)");
}

}  // namespace

namespace {

constexpr const char* kStartOver = "pass --resume false to start this stage over";

[[noreturn]] void refuse_state(const std::filesystem::path& file, const std::string& why) {
  throw std::runtime_error(fmt::format("{}: {}; {}", util::printable_path(file), why, kStartOver));
}

// A JSON value as an error quotes it: escaped and bounded.
std::string quoted(const nlohmann::json& value) { return util::printable(value.dump()); }

// The JSON string entry `key` of last.pt, which must be an object.
nlohmann::json state_json(torch::serialize::InputArchive& archive,
                          const std::filesystem::path& file, const char* key) {
  c10::IValue value;
  if (!archive.try_read(key, value) || !value.isString())
    refuse_state(file, fmt::format("holds no \"{}\" entry, which every last.pt headroom writes "
                                   "has (written by a headroom before it recorded one, or not "
                                   "by headroom): it cannot be shown to be this run's state",
                                   key));
  auto json = util::parse_json_or_discarded(value.toStringRef());
  if (!json.is_object())
    refuse_state(file, fmt::format("its \"{}\" entry is not the JSON object headroom writes", key));
  return json;
}

std::int64_t whole_field(const nlohmann::json& loop, const char* name,
                         const std::filesystem::path& file) {
  if (!loop.contains(name) || !loop.at(name).is_number_integer())
    refuse_state(file, fmt::format("its loop state's field \"{}\" is {}, not a whole number", name,
                                   loop.contains(name) ? quoted(loop.at(name)) : "missing"));
  return loop.at(name).get<std::int64_t>();
}

double number_field(const nlohmann::json& loop, const char* name,
                    const std::filesystem::path& file) {
  if (!loop.contains(name) || !loop.at(name).is_number())
    refuse_state(file, fmt::format("its loop state's field \"{}\" is {}, not a number", name,
                                   loop.contains(name) ? quoted(loop.at(name)) : "missing"));
  return loop.at(name).get<double>();
}

}  // namespace

void write_state_owner(torch::serialize::OutputArchive& archive, const TrainingConfig& config,
                       const nlohmann::json& data_identity) {
  archive.write("run", c10::IValue(semantic_config(config, data_identity).dump()));
}

torch::serialize::InputArchive open_state(const std::filesystem::path& file,
                                          const c10::Device& device) {
  torch::serialize::InputArchive archive;
  util::open_regular_for_reading(file);  // LibTorch's open would block on a FIFO
  try {
    archive.load_from(file.string(), device);
  } catch (const c10::Error& e) {
    refuse_state(file, fmt::format("cannot be read as the stage's resumable state ({})",
                                   util::printable(e.what_without_backtrace())));
  }
  return archive;
}

nlohmann::json require_state_owner(torch::serialize::InputArchive& archive,
                                   const std::filesystem::path& file, const TrainingConfig& config,
                                   const nlohmann::json& data_identity, std::int64_t max_epochs) {
  const auto owner = state_json(archive, file, "run");
  std::vector<std::string> diff;
  collect_differences(owner, semantic_config(config, data_identity), "", diff);
  if (!diff.empty())
    refuse_state(file, fmt::format("was written by another run than this one (differs in: {}), "
                                   "so it is not resumed as this run's",
                                   fmt::join(diff, ", ")));
  auto loop = state_json(archive, file, "loop");
  const auto epochs_done = whole_field(loop, "epochs_done", file);
  if (epochs_done < 0 || epochs_done > max_epochs)
    refuse_state(file, fmt::format("says {} epochs are done, but this run trains at most {}",
                                   epochs_done, max_epochs));
  const auto best_epoch = whole_field(loop, "best_epoch", file);
  if (best_epoch < -1 || best_epoch >= epochs_done)
    refuse_state(file, fmt::format("says its best epoch is epoch {} of the {} done", best_epoch + 1,
                                   epochs_done));
  const auto bad_epochs = whole_field(loop, "bad_epochs", file);
  if (bad_epochs < 0 || bad_epochs > epochs_done)
    refuse_state(file, fmt::format("says {} epochs without improvement of the {} done", bad_epochs,
                                   epochs_done));
  return loop;
}

void read_state_module(torch::serialize::InputArchive& archive, const std::filesystem::path& file,
                       const std::string& key, torch::nn::Module& module) {
  try {
    torch::serialize::InputArchive module_archive;
    archive.read(key, module_archive);
    module.load(module_archive);
  } catch (const c10::Error& e) {
    refuse_state(file, fmt::format("its \"{}\" does not fit this run's (another model?): {}", key,
                                   util::printable(e.what_without_backtrace())));
  }
}

namespace {

// The training state of a task that trains its own epochs (training_task.hpp: OwnEpochs).
void read_own_epochs(torch::serialize::InputArchive& archive, const std::filesystem::path& file,
                     OwnEpochs& own_epochs) {
  try {
    torch::serialize::InputArchive own_archive;
    archive.read("own_epochs", own_archive);
    own_epochs.load_state(own_archive);
  } catch (const c10::Error& e) {
    refuse_state(file, fmt::format("its task's own training state (\"own_epochs\": optimiser, "
                                   "replay memory) does not fit this run's: {}",
                                   util::printable(e.what_without_backtrace())));
  }
}

}  // namespace

void save_state(const RunDirectory& run, const TrainingConfig& config, const TrainingTask& task,
                torch::optim::Optimizer& optimizer, const LoopState& state, bool cuda) {
  torch::serialize::OutputArchive archive;
  torch::serialize::OutputArchive model_archive;
  task.model->save(model_archive);
  archive.write("model", model_archive);
  for (std::size_t i = 0; i < task.auxiliary.size(); ++i) {
    torch::serialize::OutputArchive aux;
    task.auxiliary[i]->save(aux);
    archive.write(fmt::format("auxiliary_{}", i), aux);
  }
  torch::serialize::OutputArchive optimizer_archive;
  optimizer.save(optimizer_archive);
  archive.write("optimizer", optimizer_archive);
  if (task.own_epochs) {
    torch::serialize::OutputArchive own_archive;
    task.own_epochs->save_state(own_archive);
    archive.write("own_epochs", own_archive);
  }
  const nlohmann::json loop = {{"epochs_done", state.epochs_done},
                               {"best_epoch", state.best_epoch},
                               {"best_loss", state.best_loss},
                               {"bad_epochs", state.bad_epochs},
                               {"loss_scale", state.loss_scale},
                               {"best_metrics", state.best_metrics},
                               {"peak_tensor_bytes", state.peak_tensor_bytes}};
  archive.write("loop", c10::IValue(loop.dump()));
  write_state_owner(archive, config, task.data_identity);
  archive.write("rng_cpu", at::globalContext().defaultGenerator(at::kCPU).get_state(),
                /*is_buffer=*/true);
  if (cuda)
    archive.write("rng_cuda", at::globalContext().defaultGenerator(at::kCUDA).get_state(),
                  /*is_buffer=*/true);
  save_archive_atomically(archive, run.state_checkpoint());
}

LoopState load_state(const RunDirectory& run, const TrainingConfig& config,
                     const TrainingTask& task, torch::optim::Optimizer& optimizer,
                     const c10::Device& device) {
  const auto file = run.state_checkpoint();
  auto archive = open_state(file, device);
  // Whose state it is, before anything of it is loaded.
  const auto loop = require_state_owner(archive, file, config, task.data_identity,
                                        config.optimisation.max_epochs);
  LoopState state;
  state.epochs_done = loop.at("epochs_done").get<std::int64_t>();
  state.best_epoch = loop.at("best_epoch").get<std::int64_t>();
  state.bad_epochs = loop.at("bad_epochs").get<std::int64_t>();
  // JSON has no infinity: the best loss before any epoch is written as null.
  state.best_loss = loop.contains("best_loss") && loop.at("best_loss").is_null()
                        ? std::numeric_limits<double>::infinity()
                        : number_field(loop, "best_loss", file);
  state.loss_scale = number_field(loop, "loss_scale", file);
  state.peak_tensor_bytes = whole_field(loop, "peak_tensor_bytes", file);
  if (!loop.contains("best_metrics") || !loop.at("best_metrics").is_object())
    refuse_state(file, "its loop state's field \"best_metrics\" is not an object");
  state.best_metrics = loop.at("best_metrics");

  read_state_module(archive, file, "model", *task.model);
  for (std::size_t i = 0; i < task.auxiliary.size(); ++i)
    read_state_module(archive, file, fmt::format("auxiliary_{}", i), *task.auxiliary[i]);
  try {
    torch::serialize::InputArchive optimizer_archive;
    archive.read("optimizer", optimizer_archive);
    optimizer.load(optimizer_archive);
    at::Tensor rng;
    archive.read("rng_cpu", rng, /*is_buffer=*/true);
    at::Generator cpu_generator = at::globalContext().defaultGenerator(at::kCPU);  // a handle
    cpu_generator.set_state(rng.cpu());
    if (device.is_cuda() && archive.try_read("rng_cuda", rng, /*is_buffer=*/true)) {
      at::Generator cuda_generator = at::globalContext().defaultGenerator(at::kCUDA);
      cuda_generator.set_state(rng.cpu());
    }
  } catch (const c10::Error& e) {
    refuse_state(file, fmt::format("its optimiser state or random streams cannot be restored: {}",
                                   util::printable(e.what_without_backtrace())));
  }
  if (task.own_epochs) read_own_epochs(archive, file, *task.own_epochs);
  return state;
}

namespace {

// What config.json records of the run a resume must agree with; throws naming the file when it
// is not what headroom writes (edited, or another program's).
const nlohmann::json& recorded_semantic(const nlohmann::json& recorded,
                                        const std::filesystem::path& file) {
  if (!recorded.is_object() || !recorded.contains("semantic") ||
      !recorded.at("semantic").is_object())
    throw std::runtime_error(fmt::format(
        "{}: not a run configuration headroom wrote (a JSON object whose field \"semantic\" is "
        "an object), but {}; pass --resume false to start this stage over, or choose another "
        "--runs-dir",
        util::printable_path(file),
        !recorded.is_object() ? std::string("a JSON ") + recorded.type_name()
        : recorded.contains("semantic")
            ? fmt::format("\"semantic\" is {}", quoted(recorded.at("semantic")))
            : std::string("one without \"semantic\"")));
  return recorded.at("semantic");
}

// result.json's outcome, each field checked by name before it is read.
TrainingOutcome recorded_outcome(const nlohmann::json& result, const std::filesystem::path& file) {
  const auto refuse = [&](const std::string& why) {
    return std::runtime_error(fmt::format(
        "{}: not the result headroom writes: {}; pass --resume false to train this stage again",
        util::printable_path(file), why));
  };
  if (!result.is_object() || !result.contains("training") || !result.at("training").is_object())
    throw refuse("no object \"training\"");
  const auto& training = result.at("training");
  const auto is_whole = [](const nlohmann::json& v) { return v.is_number_integer(); };
  const auto is_number = [](const nlohmann::json& v) { return v.is_number(); };
  // An infinite loss (no epoch improved on the start) is written as null: JSON has no infinity.
  const auto is_loss = [](const nlohmann::json& v) { return v.is_number() || v.is_null(); };
  const auto is_bool = [](const nlohmann::json& v) { return v.is_boolean(); };
  const auto is_object = [](const nlohmann::json& v) { return v.is_object(); };
  const std::vector<std::pair<const char*, std::function<bool(const nlohmann::json&)>>> fields = {
      {"epochs", is_whole},
      {"best_epoch", is_whole},
      {"best_validation_loss", is_loss},
      {"early_stopped", is_bool},
      {"resumed_after", is_whole},
      {"seconds", is_number},
      {"batch_wait_seconds", is_number},
      {"graphs_per_second", is_number},
      {"peak_tensor_bytes", is_whole},
      {"best_metrics", is_object}};
  for (const auto& [name, fits] : fields)
    if (!training.contains(name) || !fits(training.at(name)))
      throw refuse(fmt::format("field \"training.{}\" is {}", name,
                               training.contains(name) ? quoted(training.at(name)) : "missing"));
  auto copy = training;
  if (copy.at("best_validation_loss").is_null())
    copy["best_validation_loss"] = std::numeric_limits<double>::infinity();
  return copy.get<TrainingOutcome>();
}

}  // namespace

std::optional<TrainingOutcome> finished_training(const TrainingConfig& config, RunDirectory& run,
                                                 const nlohmann::json& data_identity) {
  // --resume false starts over whatever the directory holds: nothing of it is read.
  if (!config.run.resume) return std::nullopt;
  const auto semantic = semantic_config(config, data_identity);
  const auto previous = run.read_config();
  if (previous.is_null()) return std::nullopt;
  std::vector<std::string> diff;
  collect_differences(recorded_semantic(previous, run.config_file()), semantic, "", diff);
  if (!diff.empty())
    throw std::runtime_error(fmt::format(
        "{}: holds a run with a different configuration (differs in: {}); pass --resume false "
        "to start over there, or choose another --runs-dir",
        util::printable_path(run.path()), fmt::join(diff, ", ")));
  const auto result = run.read_result();
  if (result.is_null()) return std::nullopt;
  auto outcome = recorded_outcome(result, run.result_file());
  outcome.already_complete = true;
  run.log(fmt::format("{}: already complete ({} epochs, best epoch {}); nothing to do",
                      util::printable_path(run.path()), outcome.epochs, outcome.best_epoch + 1));
  return outcome;
}

bool resumable_training(const TrainingConfig& config, const RunDirectory& run) {
  return config.run.resume && std::filesystem::exists(run.state_checkpoint()) &&
         std::filesystem::exists(run.config_file());
}

void record_training_config(const TrainingConfig& config, const RunDirectory& run,
                            const nlohmann::json& data_identity) {
  nlohmann::json config_json = config;
  run.write_config({{"config", config_json}, {"semantic", semantic_config(config, data_identity)}});
}

void require_trained_on(const std::filesystem::path& checkpoint,
                        const nlohmann::json& data_identity, std::string_view use) {
  const auto refuse_other_store = [&](const std::vector<std::string>& diff) {
    return std::runtime_error(fmt::format(
        "{}: trained on another store than the one it is {} (differs in: {}); train it again on "
        "this store (`headroom run` retrains what changed), or use the store it was trained on",
        util::printable_path(checkpoint), use, fmt::join(diff, ", ")));
  };
  // The checkpoint's own record first: a best.pt copied into another run directory carries it
  // along, where the config.json beside it speaks for the directory, not the file.
  if (std::filesystem::is_regular_file(checkpoint)) {
    const auto recorded = read_checkpoint_info(checkpoint).store_identity;
    if (recorded.is_object()) {
      std::vector<std::string> diff;
      collect_differences(recorded, data_identity, "store.", diff);
      if (!diff.empty()) throw refuse_other_store(diff);
    }
  }
  const auto config_file = checkpoint.parent_path() / "config.json";
  std::error_code ec;
  if (!std::filesystem::is_regular_file(config_file, ec)) return;
  const nlohmann::json recorded = util::parse_json_or_discarded(util::read_file(config_file));
  if (recorded.is_discarded())
    throw std::runtime_error(fmt::format("{}: cannot be read as JSON (the run configuration of {})",
                                         util::printable_path(config_file),
                                         util::printable_path(checkpoint)));
  if (!recorded.is_object())
    throw std::runtime_error(fmt::format(
        "{}: not a run configuration headroom wrote (a JSON object), but a JSON {} (the run "
        "configuration of {})",
        util::printable_path(config_file), recorded.type_name(), util::printable_path(checkpoint)));
  const auto semantic = recorded.value("semantic", nlohmann::json::object());
  if (!semantic.is_object() || !semantic.contains("store") || !semantic.at("store").is_object())
    return;
  std::vector<std::string> diff;
  collect_differences(semantic.at("store"), data_identity, "store.", diff);
  if (!diff.empty()) throw refuse_other_store(diff);
}

}  // namespace headroom::train
