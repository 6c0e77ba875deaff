#include "evaluated_models.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <stdexcept>
#include <system_error>

#include "headroom/train/families/model_checkpoint.hpp"
#include "headroom/util/printable_text.hpp"

namespace headroom::train::detail {
namespace {

// A model's entry name: the name of its run directory (the one given, or the one holding a given
// checkpoint file).
std::string model_name(const std::filesystem::path& path) {
  return std::filesystem::is_directory(path) ? path.filename().string()
                                             : path.parent_path().filename().string();
}

}  // namespace

std::vector<std::filesystem::path> discover_models(const std::filesystem::path& dataset_dir) {
  std::vector<std::filesystem::path> found;
  if (!std::filesystem::is_directory(dataset_dir)) return found;
  for (const auto& entry : std::filesystem::directory_iterator(dataset_dir)) {
    const auto best = entry.path() / "best.pt";
    if (!entry.is_directory() || !std::filesystem::exists(best)) continue;
    found.push_back(entry.path());
  }
  const auto rank = [](const std::filesystem::path& path) {
    const auto name = path.filename().string();
    if (name.rfind("teacher", 0) == 0) return 0;
    if (name.rfind("hybrid", 0) == 0) return 3;
    return name.rfind("fusion", 0) == 0 ? 2 : 1;
  };
  std::sort(found.begin(), found.end(), [&](const auto& a, const auto& b) {
    if (rank(a) != rank(b)) return rank(a) < rank(b);
    return a.filename() < b.filename();
  });
  return found;
}

std::vector<std::pair<std::string, std::filesystem::path>> named_checkpoints(
    const std::vector<std::filesystem::path>& sources, std::string_view origin) {
  std::vector<std::pair<std::string, std::filesystem::path>> named;
  std::vector<std::filesystem::path> given;  // each entry of `named` as its source spelled it
  for (const auto& source : sources) {
    const auto checkpoint = resolve_checkpoint_path(source);
    const auto name = model_name(source);
    for (std::size_t i = 0; i < named.size(); ++i) {
      std::error_code unknown;  // a checkpoint that cannot be compared is no duplicate
      if (!std::filesystem::equivalent(named[i].second, checkpoint, unknown)) continue;
      throw std::runtime_error(
          fmt::format("{}: {} and {} are one checkpoint ({}); give each model once", origin,
                      util::printable_path(given[i]), util::printable_path(source),
                      util::printable_path(std::filesystem::weakly_canonical(checkpoint))));
    }
    const auto same = std::find_if(named.begin(), named.end(),
                                   [&](const auto& entry) { return entry.first == name; });
    if (same != named.end())
      throw std::runtime_error(fmt::format(
          "{}: two models named {} ({} and {}) would share one entry of evaluation.json; "
          "evaluate them into different --runs-dir, or rename one run directory",
          origin, util::printable_name(name), util::printable_path(same->second),
          util::printable_path(checkpoint)));
    named.emplace_back(name, checkpoint);
    given.push_back(source);
  }
  return named;
}

}  // namespace headroom::train::detail
