#include "headroom/dataset/dataset_layout.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <cctype>
#include <stdexcept>

#include "headroom/can/log_format.hpp"
#include "headroom/util/printable_text.hpp"

namespace headroom::dataset {
namespace {

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

bool starts_with(const std::string& text, std::string_view prefix) {
  return text.size() >= prefix.size() && text.compare(0, prefix.size(), prefix) == 0;
}

}  // namespace

std::string attack_type_from_file_name(const std::filesystem::path& file) {
  std::string stem = lower(file.stem().string());
  const auto dash = stem.rfind('-');
  if (dash != std::string::npos && dash > 0) stem.resize(dash);
  return stem;
}

DatasetLayout scan_dataset(const std::filesystem::path& root, const ScanOptions& options) {
  std::error_code ec;
  if (!std::filesystem::exists(root, ec)) {
    throw std::runtime_error(
        fmt::format("dataset directory '{}' does not exist", util::printable_path(root)));
  }
  if (!std::filesystem::is_directory(root, ec)) {
    throw std::runtime_error(
        fmt::format("dataset path '{}' is not a directory", util::printable_path(root)));
  }

  DatasetLayout layout;
  layout.root = std::filesystem::absolute(root).lexically_normal();

  std::vector<std::string> train_dirs;
  std::vector<std::string> test_dirs;
  for (const auto& entry : std::filesystem::directory_iterator(layout.root)) {
    if (!entry.is_directory()) continue;
    const std::string name = entry.path().filename().string();
    const std::string folded = lower(name);
    if (starts_with(folded, "train_")) train_dirs.push_back(name);
    if (starts_with(folded, "test_")) test_dirs.push_back(name);
  }
  std::sort(train_dirs.begin(), train_dirs.end());
  std::sort(test_dirs.begin(), test_dirs.end());
  for (const auto& name : train_dirs) layout.splits.push_back({name, SplitRole::kTrain});
  for (const auto& name : test_dirs) layout.splits.push_back({name, SplitRole::kTest});

  for (std::size_t split = 0; split < layout.splits.size(); ++split) {
    std::vector<DatasetFile> files;
    const auto dir = layout.root / layout.splits[split].name;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
      if (!entry.is_regular_file() || !can::is_can_log_file(entry.path())) continue;
      DatasetFile file;
      file.path = entry.path();
      file.relative_path = entry.path().lexically_relative(layout.root).generic_string();
      const std::string name = lower(entry.path().filename().string());
      const bool excluded =
          std::any_of(options.exclude_substrings.begin(), options.exclude_substrings.end(),
                      [&](const std::string& pattern) {
                        return !pattern.empty() && name.find(lower(pattern)) != std::string::npos;
                      });
      if (excluded) {
        layout.excluded.push_back(file.relative_path);
        continue;
      }
      file.split = static_cast<std::uint16_t>(split);
      file.attack_type = attack_type_from_file_name(entry.path());
      file.size_bytes = entry.file_size();
      files.push_back(std::move(file));
    }
    std::sort(files.begin(), files.end(), [](const DatasetFile& a, const DatasetFile& b) {
      return a.relative_path < b.relative_path;
    });
    if (layout.splits[split].role == SplitRole::kTrain) layout.train_file_count += files.size();
    layout.files.insert(layout.files.end(), std::make_move_iterator(files.begin()),
                        std::make_move_iterator(files.end()));
  }
  std::sort(layout.excluded.begin(), layout.excluded.end());

  if (train_dirs.empty()) {
    throw std::runtime_error(fmt::format(
        "dataset '{}' has no training data: expected train_* directories holding CAN logs",
        util::printable_path(root)));
  }
  if (layout.train_file_count == 0) {
    throw std::runtime_error(
        fmt::format("dataset '{}' has no training files: its train_* directories hold no "
                    ".csv/.parquet/.log/.txt file",
                    util::printable_path(root)));
  }
  return layout;
}

}  // namespace headroom::dataset
