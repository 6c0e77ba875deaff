#include "headroom/train/families/model_checkpoint.hpp"

#include <torch/torch.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <stdexcept>
#include "headroom/train/families/model_family.hpp"

#include "headroom/util/bounded_json.hpp"
#include "headroom/util/file_writer.hpp"
#include "headroom/util/printable_text.hpp"
#include "headroom/util/regular_file.hpp"

namespace headroom::train {

std::filesystem::path resolve_checkpoint_path(const std::filesystem::path& path) {
  if (std::filesystem::is_directory(path)) {
    const auto best = path / "best.pt";
    if (std::filesystem::exists(best)) return best;
    throw std::runtime_error(fmt::format(
        "{}: run directory has no best.pt (has its stage finished an epoch?)", path.string()));
  }
  if (!std::filesystem::exists(path))
    throw std::runtime_error(fmt::format("{}: checkpoint not found", path.string()));
  return path;
}

void save_archive_atomically(torch::serialize::OutputArchive& archive,
                             const std::filesystem::path& file) {
  std::string bytes;
  archive.save_to([&bytes](const void* data, std::size_t size) {
    bytes.append(static_cast<const char*>(data), size);
    return size;
  });
  util::write_file_atomically(file, bytes);
}

void save_model_checkpoint(const std::filesystem::path& file, const torch::nn::Module& model,
                           const CheckpointInfo& info) {
  torch::serialize::OutputArchive archive;
  torch::serialize::OutputArchive model_archive;
  model.save(model_archive);
  archive.write("model", model_archive);
  archive.write("kind", c10::IValue(info.kind));
  archive.write("config", c10::IValue(info.model_config.dump()));
  archive.write("epoch", c10::IValue(info.epoch));
  archive.write("validation_loss", c10::IValue(info.validation_loss));
  if (info.decision) archive.write("decision", c10::IValue(nlohmann::json(*info.decision).dump()));
  if (!info.store_identity.is_null())
    archive.write("store", c10::IValue(info.store_identity.dump()));
  save_archive_atomically(archive, file);
}

namespace {

torch::serialize::InputArchive open_archive(const std::filesystem::path& file,
                                            const c10::Device& device) {
  torch::serialize::InputArchive archive;
  util::open_regular_for_reading(file);  // LibTorch's open would block on a FIFO (--teacher-path)
  try {
    archive.load_from(file.string(), device);
  } catch (const c10::Error& e) {
    throw std::runtime_error(fmt::format("{}: not a readable headroom checkpoint ({})",
                                         file.string(), e.what_without_backtrace()));
  }
  return archive;
}

// What a checkpoint records besides its weights. An entry of the wrong kind or JSON that is not
// the configuration headroom writes (a file edited, or another program's) is an error naming the
// file and the entry, never the library's message alone.
CheckpointInfo read_info(torch::serialize::InputArchive& archive,
                         const std::filesystem::path& file) {
  c10::IValue kind, config, epoch, loss;
  if (!archive.try_read("kind", kind) || !archive.try_read("config", config))
    throw std::runtime_error(fmt::format("{}: not a headroom model checkpoint", file.string()));
  const auto refuse = [&](const char* entry, const std::string& why) {
    return std::runtime_error(fmt::format("{}: its \"{}\" entry is not what headroom writes ({})",
                                          util::printable_path(file), entry, why));
  };
  if (!kind.isString()) throw refuse("kind", "not a string");
  if (!config.isString()) throw refuse("config", "not a string");
  CheckpointInfo info;
  info.kind = kind.toStringRef();
  info.model_config = util::parse_json_or_discarded(config.toStringRef());
  if (!info.model_config.is_object()) throw refuse("config", "not a JSON object");
  if (archive.try_read("epoch", epoch)) {
    if (!epoch.isInt()) throw refuse("epoch", "not a whole number");
    info.epoch = epoch.toInt();
  }
  if (archive.try_read("validation_loss", loss)) {
    if (!loss.isDouble()) throw refuse("validation_loss", "not a number");
    info.validation_loss = loss.toDouble();
  }
  c10::IValue store;
  if (archive.try_read("store", store)) {
    if (!store.isString()) throw refuse("store", "not a string");
    info.store_identity = util::parse_json_or_discarded(store.toStringRef());
    if (!info.store_identity.is_object()) throw refuse("store", "not a JSON object");
  }
  c10::IValue decision;
  if (archive.try_read("decision", decision)) {
    if (!decision.isString()) throw refuse("decision", "not a string");
    try {
      info.decision = util::parse_json(decision.toStringRef()).get<eval::DecisionCalibration>();
    } catch (const nlohmann::json::exception& e) {
      throw refuse("decision", util::printable(e.what()));
    }
  }
  return info;
}

void read_weights(torch::serialize::InputArchive& archive, torch::nn::Module& module,
                  const std::filesystem::path& file) {
  try {
    torch::serialize::InputArchive model_archive;
    archive.read("model", model_archive);
    module.load(model_archive);
  } catch (const c10::Error& e) {
    throw std::runtime_error(fmt::format("{}: weights do not fit the model ({})", file.string(),
                                         e.what_without_backtrace()));
  }
}

// The model a checkpoint's configuration describes; a configuration that cannot build one (a
// field of the wrong type, a size out of range) is named with the file.
template <typename Build>
auto build_recorded(const std::filesystem::path& file, const CheckpointInfo& info, Build build) {
  try {
    return build();
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(fmt::format(
        "{}: its recorded configuration cannot build a {} model ({})", util::printable_path(file),
        util::printable(info.kind), util::printable(e.what())));
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(fmt::format(
        "{}: its recorded configuration cannot build a {} model ({})", util::printable_path(file),
        util::printable(info.kind), util::printable(e.what())));
  }
}

template <typename Model>
Model load_weights(torch::serialize::InputArchive& archive, Model model,
                   const std::filesystem::path& file, const c10::Device& device) {
  read_weights(archive, *model, file);
  model->to(device);
  model->eval();
  return model;
}

CheckpointInfo expect_kind(torch::serialize::InputArchive& archive,
                           const std::filesystem::path& file, std::string_view kind) {
  auto info = read_info(archive, file);
  if (info.kind != kind)
    throw std::runtime_error(
        fmt::format("{}: holds a {} model, expected {}", file.string(), info.kind, kind));
  return info;
}

}  // namespace

void load_checkpoint_weights(const std::filesystem::path& file, torch::nn::Module& module) {
  auto archive = open_archive(file, torch::kCPU);
  read_weights(archive, module, file);
}

CheckpointInfo read_checkpoint_info(const std::filesystem::path& file) {
  auto archive = open_archive(file, torch::kCPU);
  return read_info(archive, file);
}

models::GATWithJK load_gat_checkpoint(const std::filesystem::path& file,
                                      const c10::Device& device) {
  auto archive = open_archive(file, device);
  const auto info = expect_kind(archive, file, "gat");
  return load_weights(
      archive,
      build_recorded(file, info,
                     [&] { return models::GATWithJK(info.model_config.get<models::GatConfig>()); }),
      file, device);
}

LoadedAutoencoder load_autoencoder_checkpoint(const std::filesystem::path& file,
                                              const c10::Device& device) {
  auto archive = open_archive(file, device);
  LoadedAutoencoder loaded;
  loaded.info = read_info(archive, file);
  try {
    loaded.family = &autoencoder_family(loaded.info.kind);
  } catch (const std::invalid_argument&) {
    throw std::runtime_error(
        fmt::format("{}: holds a {} model, expected {}", file.string(), loaded.info.kind,
                    fmt::join(model_family_names(FamilyRole::kAutoencoder), " or ")));
  }
  loaded.model = load_weights(
      archive,
      build_recorded(file, loaded.info,
                     [&] { return loaded.family->build_autoencoder(loaded.info.model_config); }),
      file, device);
  return loaded;
}

models::GraphClassifier load_classifier_checkpoint(const std::filesystem::path& file,
                                                   const c10::Device& device,
                                                   CheckpointInfo* info_out) {
  auto archive = open_archive(file, device);
  const auto info = read_info(archive, file);
  const ClassifierFamily* family = nullptr;
  try {
    family = &classifier_family(info.kind);
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(fmt::format("{}: {}", file.string(), e.what()));
  }
  auto model = load_weights(
      archive,
      build_recorded(file, info, [&] { return family->build_classifier(info.model_config); }), file,
      device);
  if (info_out != nullptr) *info_out = info;
  return model;
}

}  // namespace headroom::train
