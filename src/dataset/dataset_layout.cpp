#include "headroom/dataset/dataset_layout.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <cctype>
#include <map>
#include <stdexcept>

#include "headroom/can/log_format.hpp"
#include "headroom/util/printable_text.hpp"
#include "headroom/util/utf8.hpp"

namespace headroom::dataset {
namespace {

namespace fs = std::filesystem;

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

bool starts_with(const std::string& text, std::string_view prefix) {
  return text.size() >= prefix.size() && text.compare(0, prefix.size(), prefix) == 0;
}

// `name` without a trailing "-N" or "_N" (a capture or vehicle number); false when it has none.
bool drop_numeric_suffix(std::string& name) {
  const auto separator = name.find_last_of("-_");
  if (separator == std::string::npos || separator == 0 || separator + 1 == name.size()) {
    return false;
  }
  const bool numeric = std::all_of(name.begin() + static_cast<std::ptrdiff_t>(separator) + 1,
                                   name.end(), [](unsigned char c) { return std::isdigit(c); });
  if (numeric) name.resize(separator);
  return numeric;
}

bool excluded_by_name(const fs::path& file, const ScanOptions& options) {
  const std::string name = lower(file.filename().string());
  return std::any_of(options.exclude_substrings.begin(), options.exclude_substrings.end(),
                     [&](const std::string& pattern) {
                       return !pattern.empty() && name.find(lower(pattern)) != std::string::npos;
                     });
}

constexpr std::string_view kLogExtensions = ".csv, .parquet, .log and .txt";
constexpr std::string_view kNotUtf8 =
    "not read: its name is not UTF-8, and the store records names as text; rename it";

// One split's walk: its files, and the directories it has read (by canonical path, each with the
// path it was first read through) so that a link cycle or a second link is read once.
class SplitWalk {
 public:
  SplitWalk(const fs::path& root, std::uint16_t split, const ScanOptions& options,
            DatasetLayout& layout)
      : root_(root), split_(split), options_(options), layout_(layout) {}

  std::vector<DatasetFile> run(const fs::path& split_dir) {
    if (enter(split_dir)) walk(split_dir, /*inside_split=*/false);
    std::sort(files_.begin(), files_.end(), [](const DatasetFile& a, const DatasetFile& b) {
      return a.relative_path < b.relative_path;
    });
    return std::move(files_);
  }

 private:
  std::string relative(const fs::path& path) const {
    return path.lexically_relative(root_).generic_string();
  }

  // Marks `dir` read; false (with a skipped entry) when this split has read it already.
  bool enter(const fs::path& dir) {
    const auto [it, first] = read_dirs_.emplace(fs::canonical(dir), relative(dir));
    if (first) return true;
    layout_.skipped.push_back(
        {relative(dir), fmt::format("not read again: the same directory as {}, already read in "
                                    "this split (a link cycle, or a second link to it)",
                                    util::printable_path(it->second))});
    return false;
  }

  void walk(const fs::path& dir, bool inside_split) {
    std::vector<fs::directory_entry> entries(fs::directory_iterator(dir), {});
    std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) {
      return a.path().filename() < b.path().filename();
    });
    for (const auto& entry : entries) {
      std::error_code ec;
      const fs::file_status status = entry.status(ec);  // follows links
      if (!util::is_utf8(entry.path().filename().native())) {
        skip(entry.path(), std::string(kNotUtf8));
      } else if (entry.is_symlink(ec) && !fs::exists(status)) {
        skip(entry.path(), "not read: a broken link");
      } else if (fs::is_directory(status)) {
        if (enter(entry.path())) walk(entry.path(), /*inside_split=*/true);
      } else if (!fs::is_regular_file(status)) {
        // Read, a FIFO could block forever and a link to /dev/zero would never end.
        skip(entry.path(), fmt::format("not read: {}, not a regular file", kind_of(status)));
      } else if (!can::is_can_log_file(entry.path())) {
        skip(entry.path(), not_a_log_reason(entry.path()));
      } else {
        add_file(entry.path(), inside_split ? dir.filename().string() : std::string());
      }
    }
  }

  void skip(const fs::path& path, std::string reason) {
    layout_.skipped.push_back({relative(path), std::move(reason)});
  }

  static const char* kind_of(const fs::file_status& status) {
    switch (status.type()) {
      case fs::file_type::fifo:
        return "a FIFO (named pipe)";
      case fs::file_type::character:
        return "a character device";
      case fs::file_type::block:
        return "a block device";
      case fs::file_type::socket:
        return "a socket";
      default:
        return "not a file headroom can read";
    }
  }

  static std::string not_a_log_reason(const fs::path& path) {
    const std::string extension = lower(path.extension().string());
    if (extension == ".gz" || extension == ".bz2" || extension == ".xz" || extension == ".zst" ||
        extension == ".zip" || extension == ".7z")
      return fmt::format(
          "not read: a compressed file ({}); headroom reads {} files, decompress it "
          "first",
          extension, kLogExtensions);
    return fmt::format("not read: not a CAN log by its name (headroom reads {} files)",
                       kLogExtensions);
  }

  void add_file(const fs::path& path, const std::string& parent_dir) {
    DatasetFile file;
    file.path = path;
    file.relative_path = relative(path);
    if (excluded_by_name(path, options_)) {
      layout_.excluded.push_back(file.relative_path);
      return;
    }
    file.split = split_;
    file.attack_type =
        options_.attack_type_from == AttackTypeSource::kDirectory && !parent_dir.empty()
            ? attack_type_from_directory_name(parent_dir)
            : attack_type_from_file_name(path);
    file.size_bytes = fs::file_size(path);
    files_.push_back(std::move(file));
  }

  const fs::path& root_;
  std::uint16_t split_;
  const ScanOptions& options_;
  DatasetLayout& layout_;
  std::map<fs::path, std::string> read_dirs_;
  std::vector<DatasetFile> files_;
};

}  // namespace

std::string attack_type_from_file_name(const std::filesystem::path& file) {
  std::string stem = lower(file.stem().string());
  if (drop_numeric_suffix(stem)) return stem;
  const auto dash = stem.rfind('-');
  if (dash != std::string::npos && dash > 0) stem.resize(dash);
  return stem;
}

std::string attack_type_from_directory_name(std::string_view name) {
  std::string type = lower(std::string(name));
  drop_numeric_suffix(type);
  return type;
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
  if (!util::is_utf8(layout.root.native()))
    throw std::runtime_error(fmt::format(
        "dataset path '{}' is not UTF-8, and the store records it as text; rename it, or reach it "
        "through a link whose path is",
        util::printable_path(layout.root)));

  std::vector<std::string> train_dirs;
  std::vector<std::string> test_dirs;
  for (const auto& entry : std::filesystem::directory_iterator(layout.root)) {
    if (!entry.is_directory()) continue;
    const std::string name = entry.path().filename().string();
    const std::string folded = lower(name);
    if (!starts_with(folded, "train_") && !starts_with(folded, "test_")) continue;
    if (!util::is_utf8(name))
      layout.skipped.push_back({name, std::string(kNotUtf8)});
    else if (starts_with(folded, "train_"))
      train_dirs.push_back(name);
    else
      test_dirs.push_back(name);
  }
  std::sort(train_dirs.begin(), train_dirs.end());
  std::sort(test_dirs.begin(), test_dirs.end());
  for (const auto& name : train_dirs) layout.splits.push_back({name, SplitRole::kTrain});
  for (const auto& name : test_dirs) layout.splits.push_back({name, SplitRole::kTest});

  for (std::size_t split = 0; split < layout.splits.size(); ++split) {
    SplitWalk walk(layout.root, static_cast<std::uint16_t>(split), options, layout);
    auto files = walk.run(layout.root / layout.splits[split].name);
    const bool training = layout.splits[split].role == SplitRole::kTrain;
    if (training) layout.train_file_count += files.size();
    if (files.empty())
      layout.skipped.push_back(
          {layout.splits[split].name,
           training ? "this training split holds no CAN log file to read: it adds nothing"
                    : "this test split holds no CAN log file to read: its condition is not "
                      "evaluated"});
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
