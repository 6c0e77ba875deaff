#include "headroom/report/run_manifest.hpp"

#include <fmt/format.h>
#include <stdexcept>
#include <utility>

#include "headroom/util/file_reader.hpp"
#include "headroom/util/file_writer.hpp"
#include "headroom/util/printable_text.hpp"

namespace headroom::report {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

// A run manifest is a few kilobytes; anything far larger is not one headroom wrote.
constexpr std::uint64_t kMaxManifestBytes = 16ULL << 20;
// It nests three levels; a document nested thousands deep would overflow the stack in the
// recursive copies that follow parsing, so it is refused while parsed.
constexpr int kMaxManifestDepth = 32;

json parse_bounded(const std::string& text, const fs::path& file) {
  const json::parser_callback_t bounded = [&file](int depth, json::parse_event_t, json&) {
    if (depth > kMaxManifestDepth)
      throw std::runtime_error(fmt::format("{}: nested deeper than {} levels; not a run manifest",
                                           util::printable_path(file), kMaxManifestDepth));
    return true;
  };
  try {
    return json::parse(text, bounded);
  } catch (const json::exception& e) {
    throw std::runtime_error(
        fmt::format("{}: not valid JSON: {}", util::printable_path(file), e.what()));
  }
}

// The store's kind and the seal of its manifest (docs/store-format.md: manifest_xxh3 covers every
// field, every array's checksum included): what identifies the store's content.
json store_record(const fs::path& store) {
  const auto manifest_file = store / "manifest.json";
  const auto manifest = parse_bounded(util::read_file(manifest_file), manifest_file);
  if (!manifest.is_object() || !manifest.contains("manifest_xxh3") ||
      !manifest["manifest_xxh3"].is_string())
    throw std::runtime_error(fmt::format("{}: has no manifest_xxh3 seal; not a store's manifest",
                                         util::printable_path(manifest_file)));
  return {{"path", fs::absolute(store).lexically_normal().string()},
          {"kind", manifest.value("kind", "windows")},
          {"manifest_xxh3", manifest["manifest_xxh3"]}};
}

}  // namespace

json headline_metric(const json& best_metrics) {
  if (!best_metrics.is_object()) return nullptr;
  for (const char* name : {"f1", "accuracy", "loss"}) {
    const auto found = best_metrics.find(name);
    if (found != best_metrics.end() && found->is_number())
      return {{"name", name}, {"value", *found}};
  }
  return nullptr;
}

RunManifestWriter::RunManifestWriter(const fs::path& run_root, const fs::path& store,
                                     std::string task)
    : run_root_(fs::absolute(run_root).lexically_normal()) {
  document_ = {{"format", kRunManifestFormat}, {"version", kRunManifestVersion},
               {"task", std::move(task)},      {"complete", false},
               {"store", store_record(store)}, {"stages", json::array()},
               {"evaluation", nullptr}};
  // Written before the first stage creates the run root.
  fs::create_directories(run_root_);
  write();
}

std::string RunManifestWriter::relative(const fs::path& path) const {
  return fs::absolute(path).lexically_normal().lexically_relative(run_root_).string();
}

void RunManifestWriter::add_stage(const ManifestStage& stage) {
  const auto optional_file = [this, &stage](const char* name) -> json {
    std::error_code ec;
    return fs::is_regular_file(stage.run_dir / name, ec) ? json(relative(stage.run_dir / name))
                                                         : json(nullptr);
  };
  document_["stages"].push_back({{"name", stage.name},
                                 {"run_dir", relative(stage.run_dir)},
                                 {"result", optional_file("result.json")},
                                 {"reused", stage.reused},
                                 {"metric", headline_metric(stage.best_metrics)},
                                 {"memory_plan", optional_file("memory_plan.json")}});
  write();
}

void RunManifestWriter::set_evaluation(const fs::path& evaluation_file) {
  document_["evaluation"] = relative(evaluation_file);
  write();
}

void RunManifestWriter::finish() {
  document_["complete"] = true;
  write();
}

void RunManifestWriter::write() const {
  util::write_file_atomically(run_root_ / kRunManifestFileName, document_.dump(2) + "\n");
}

std::optional<json> read_run_manifest(const fs::path& run_root) {
  const auto file = run_root / kRunManifestFileName;
  const auto text = util::read_file_if_present(file, kMaxManifestBytes);
  if (!text) return std::nullopt;
  auto manifest = parse_bounded(*text, file);
  if (!manifest.is_object() || manifest.value("format", json()) != kRunManifestFormat)
    throw std::runtime_error(
        fmt::format("{}: not a run manifest (no \"format\": \"{}\"); move it away",
                    util::printable_path(file), kRunManifestFormat));
  const auto version = manifest.value("version", json());
  if (!version.is_number_integer() || version.get<int>() < 1 ||
      version.get<int>() > kRunManifestVersion)
    throw std::runtime_error(
        fmt::format("{}: run manifest version {} (this headroom reads 1 to {})",
                    util::printable_path(file), version.dump(), kRunManifestVersion));
  return manifest;
}

std::vector<fs::path> manifest_stage_directories(const json& manifest, const fs::path& run_root) {
  const auto file = util::printable_path(run_root / kRunManifestFileName);
  const auto stages = manifest.value("stages", json::array());
  if (!stages.is_array())
    throw std::runtime_error(fmt::format("{}: \"stages\" is not an array", file));
  std::vector<fs::path> dirs;
  for (const auto& stage : stages) {
    const auto run_dir = stage.is_object() ? stage.value("run_dir", json()) : json();
    const fs::path relative = run_dir.is_string() ? run_dir.get<std::string>() : std::string();
    const auto normal = relative.lexically_normal();
    if (relative.empty() || relative.is_absolute() || normal.begin() == normal.end() ||
        *normal.begin() == "..")
      throw std::runtime_error(fmt::format(
          "{}: stage {} has no \"run_dir\" inside the run root; not a manifest headroom wrote",
          file, dirs.size() + 1));
    dirs.push_back(run_root / normal);
  }
  return dirs;
}

}  // namespace headroom::report
