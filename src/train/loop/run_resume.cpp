#include "headroom/train/loop/run_resume.hpp"

#include <torch/torch.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "headroom/util/printable_text.hpp"

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

void save_state(const RunDirectory& run, const TrainingTask& task,
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
  const nlohmann::json loop = {{"epochs_done", state.epochs_done},
                               {"best_epoch", state.best_epoch},
                               {"best_loss", state.best_loss},
                               {"bad_epochs", state.bad_epochs},
                               {"loss_scale", state.loss_scale},
                               {"best_metrics", state.best_metrics},
                               {"peak_tensor_bytes", state.peak_tensor_bytes}};
  archive.write("loop", c10::IValue(loop.dump()));
  archive.write("rng_cpu", at::globalContext().defaultGenerator(at::kCPU).get_state(),
                /*is_buffer=*/true);
  if (cuda)
    archive.write("rng_cuda", at::globalContext().defaultGenerator(at::kCUDA).get_state(),
                  /*is_buffer=*/true);
  save_archive_atomically(archive, run.state_checkpoint());
}

LoopState load_state(const RunDirectory& run, const TrainingTask& task,
                     torch::optim::Optimizer& optimizer, const c10::Device& device) {
  torch::serialize::InputArchive archive;
  archive.load_from(run.state_checkpoint().string(), device);
  torch::serialize::InputArchive model_archive;
  archive.read("model", model_archive);
  task.model->load(model_archive);
  for (std::size_t i = 0; i < task.auxiliary.size(); ++i) {
    torch::serialize::InputArchive aux;
    archive.read(fmt::format("auxiliary_{}", i), aux);
    task.auxiliary[i]->load(aux);
  }
  torch::serialize::InputArchive optimizer_archive;
  archive.read("optimizer", optimizer_archive);
  optimizer.load(optimizer_archive);
  c10::IValue loop_value;
  archive.read("loop", loop_value);
  const auto loop = nlohmann::json::parse(loop_value.toStringRef());
  LoopState state;
  state.epochs_done = loop.at("epochs_done").get<std::int64_t>();
  state.best_epoch = loop.at("best_epoch").get<std::int64_t>();
  state.best_loss = loop.at("best_loss").is_null() ? std::numeric_limits<double>::infinity()
                                                   : loop.at("best_loss").get<double>();
  state.bad_epochs = loop.at("bad_epochs").get<std::int64_t>();
  state.loss_scale = loop.at("loss_scale").get<double>();
  state.best_metrics = loop.at("best_metrics");
  state.peak_tensor_bytes = loop.at("peak_tensor_bytes").get<std::int64_t>();
  at::Tensor rng;
  archive.read("rng_cpu", rng, /*is_buffer=*/true);
  at::Generator cpu_generator = at::globalContext().defaultGenerator(at::kCPU);  // a handle
  cpu_generator.set_state(rng.cpu());
  if (device.is_cuda() && archive.try_read("rng_cuda", rng, /*is_buffer=*/true)) {
    at::Generator cuda_generator = at::globalContext().defaultGenerator(at::kCUDA);
    cuda_generator.set_state(rng.cpu());
  }
  return state;
}

std::optional<TrainingOutcome> finished_training(const TrainingConfig& config, RunDirectory& run,
                                                 const nlohmann::json& data_identity) {
  const auto semantic = semantic_config(config, data_identity);
  const auto previous = run.read_config();
  if (previous.is_null() || !config.run.resume) return std::nullopt;
  std::vector<std::string> diff;
  collect_differences(previous.value("semantic", nlohmann::json::object()), semantic, "", diff);
  if (!diff.empty())
    throw std::runtime_error(fmt::format(
        "{}: holds a run with a different configuration (differs in: {}); pass --resume false "
        "to start over there, or choose another --runs-dir",
        util::printable_path(run.path()), fmt::join(diff, ", ")));
  const auto result = run.read_result();
  if (result.is_null()) return std::nullopt;
  auto outcome = result.at("training").get<TrainingOutcome>();
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
  const auto config_file = checkpoint.parent_path() / "config.json";
  std::error_code ec;
  if (!std::filesystem::is_regular_file(config_file, ec)) return;
  nlohmann::json recorded;
  {
    std::ifstream in(config_file);
    recorded = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  }
  if (recorded.is_discarded())
    throw std::runtime_error(fmt::format("{}: cannot be read as JSON (the run configuration of {})",
                                         util::printable_path(config_file),
                                         util::printable_path(checkpoint)));
  const auto semantic = recorded.value("semantic", nlohmann::json::object());
  if (!semantic.contains("store") || !semantic.at("store").is_object()) return;
  std::vector<std::string> diff;
  collect_differences(semantic.at("store"), data_identity, "store.", diff);
  if (!diff.empty())
    throw std::runtime_error(fmt::format(
        "{}: trained on another store than the one it is {} (differs in: {}); train it again on "
        "this store (`headroom run` retrains what changed), or use the store it was trained on",
        util::printable_path(checkpoint), use, fmt::join(diff, ", ")));
}

}  // namespace headroom::train
