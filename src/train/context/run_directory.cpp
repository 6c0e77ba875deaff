#include "headroom/train/context/run_directory.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <fmt/format.h>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <sstream>
#include <stdexcept>

#include "headroom/util/bounded_json.hpp"
#include "headroom/util/file_reader.hpp"
#include "headroom/util/file_writer.hpp"
#include "headroom/util/printable_text.hpp"
#include "headroom/util/process_role.hpp"
#include "headroom/util/regular_file.hpp"

namespace headroom::train {
namespace {

nlohmann::json read_json_file(const std::filesystem::path& file) {
  // Absent: null. Present but a FIFO, a device or too large: an error naming it, never a hang or a
  // stage that starts afresh over it.
  const auto text = util::read_file_if_present(file);
  if (!text) return nullptr;
  try {
    return util::parse_json(*text);
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(fmt::format("{}: not valid JSON: {}", file.string(), e.what()));
  }
}

std::string timestamp() {
  const auto now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm local{};
  localtime_r(&now, &local);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S", &local);
  return text;
}

}  // namespace

RunDirectory::RunDirectory(std::filesystem::path path, bool echo, util::WhenLocked when_locked)
    : path_(std::move(path)), echo_(echo) {
  if (!util::process_role().writes()) return;
  std::filesystem::create_directories(path_);
  // Two processes in one stage directory would interleave metrics.jsonl and leave one's
  // config.json beside the other's best.pt.
  lock_.emplace(lock_file(), "run directory " + path_.string(), when_locked);
  // Never through a link or a second hard link planted at the name (`ln -s ~/victim.txt log.txt`):
  // the log is appended to for the whole stage.
  log_ = util::open_for_append(log_file());
  // metrics.jsonl is appended to at each epoch's end: refused now, not after the first epoch.
  util::require_own_file_or_absent(metrics_file());
}

void RunDirectory::write_config(const nlohmann::json& config) const {
  if (!util::process_role().writes()) return;
  util::write_file_atomically(config_file(), config.dump(2) + "\n");
}

void RunDirectory::write_result(const nlohmann::json& result) const {
  if (!util::process_role().writes()) return;
  util::write_file_atomically(result_file(), result.dump(2) + "\n");
}

nlohmann::json RunDirectory::read_config() const { return read_json_file(config_file()); }
nlohmann::json RunDirectory::read_result() const { return read_json_file(result_file()); }

void RunDirectory::log(std::string_view line) {
  if (!util::process_role().writes()) return;
  // One write per line: O_APPEND keeps lines whole even beside another writer.
  util::write_all(log_.get(), fmt::format("[{}] {}\n", timestamp(), line), log_file());
  if (echo_) {
    fmt::print("{}\n", line);
    std::fflush(stdout);  // interleaves correctly with progress bars and shows up in piped logs
  }
}

void RunDirectory::append_metrics(const nlohmann::json& line) {
  if (!util::process_role().writes()) return;
  const std::string text = line.dump() + "\n";
  const auto fd = util::open_for_append(metrics_file());  // refuses a link, as log.txt does
  // One write() call: a kill leaves at most a torn last line, which the readers skip.
  const auto written = ::write(fd.get(), text.data(), text.size());
  ::fsync(fd.get());
  if (written != static_cast<ssize_t>(text.size()))
    throw std::runtime_error(fmt::format("{}: short write", metrics_file().string()));
}

void RunDirectory::truncate_metrics(std::int64_t epochs) {
  if (!util::process_role().writes()) return;
  // Read back, then replaced: a link there would copy somebody else's file into the run.
  util::require_own_file_or_absent(metrics_file());
  const auto text = util::read_file_if_present(metrics_file(), kMaxMetricsBytes);
  if (!text) return;
  std::istringstream in(*text);
  std::string kept;
  std::string line;
  for (std::size_t number = 1; std::getline(in, line); ++number) {
    nlohmann::json parsed = util::parse_json_or_discarded(line);
    if (parsed.is_discarded()) continue;  // torn by a kill (a torn object never parses)
    // Anything else that is not a line headroom writes is named, never read as an epoch.
    const auto* epoch = parsed.is_object() && parsed.contains("epoch") ? &parsed["epoch"] : nullptr;
    if (!parsed.is_object() || (epoch != nullptr && !epoch->is_number_integer()))
      throw std::runtime_error(fmt::format(
          "{}:{}: not a metrics line headroom writes ({}); pass --resume false to start this "
          "stage over",
          util::printable_path(metrics_file()), number,
          parsed.is_object()
              ? "field \"epoch\" is " + util::printable(epoch->dump()) + ", not a whole number"
              : std::string("a JSON ") + parsed.type_name() + ", not an object"));
    if (epoch != nullptr && epoch->get<std::int64_t>() < epochs) kept += line + "\n";
  }
  util::write_file_atomically(metrics_file(), kept);
}

void RunDirectory::clear() {
  if (!util::process_role().writes()) return;
  const auto files = {best_checkpoint(), state_checkpoint(), metrics_file(), result_file()};
  // Only a directory headroom wrote (its config.json is the mark) has files to clear; a stage
  // file name in any other directory is somebody else's file and stays.
  if (!std::filesystem::exists(config_file())) {
    for (const auto& file : files)
      if (std::filesystem::exists(std::filesystem::symlink_status(file)))
        throw std::runtime_error(path_.string() + " holds " + file.filename().string() +
                                 " but no config.json: not a run directory headroom wrote; "
                                 "refusing to replace it (choose another --runs-dir)");
    return;
  }
  for (const auto& file : files) std::filesystem::remove(file);
}

}  // namespace headroom::train
