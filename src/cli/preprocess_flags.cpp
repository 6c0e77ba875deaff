#include "headroom/cli/preprocess_flags.hpp"
#include "headroom/cli/not_negative.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <CLI/CLI.hpp>
#include <iostream>
#include <stdexcept>

#include "headroom/util/printable_text.hpp"
#include "headroom/util/thread_count.hpp"

namespace headroom::cli {

void PreprocessFlags::add_to(CLI::App& command) {
  add_reading_flags(command);
  add_split_flags(command);
  add_graph_flags(command);
  add_file_selection_flags(command);
  add_process_flags(command);
  add_csv_mapping_flags(command);
}

// How frames are read and cut into windows.
void PreprocessFlags::add_reading_flags(CLI::App& command) {
  auto& o = options;
  command.add_option("--window", o.window.window, "Frames per window (W)")->capture_default_str();
  command.add_option("--stride", o.window.stride, "Frames between window starts (S)")
      ->capture_default_str();
  // The choices and their descriptions come from the format registry (can/log_format.hpp).
  std::string format_help = "Log format: auto (detected per file)";
  for (const auto* definition : can::log_formats())
    format_help += fmt::format("; {} ({})", definition->name, definition->description);
  command.add_option("--format", format, format_help)
      ->check(CLI::IsMember(can::log_format_choices()))
      ->capture_default_str();
  command
      .add_option("--on-bad-row", on_bad_row,
                  "What a malformed row does: error (stop, no store) or skip")
      ->check(CLI::IsMember({"error", "skip"}))
      ->capture_default_str();
}

// The validation split of the training graphs.
void PreprocessFlags::add_split_flags(CLI::App& command) {
  auto& o = options;
  command
      .add_option("--val-fraction", o.validation_fraction,
                  "Share of training graphs held out for validation")
      ->check(CLI::Range(0.0, 0.99))
      ->capture_default_str();
  command
      .add_option("--seed", o.seed,
                  "Seed of the validation split (`run`: also of training: initialisation, "
                  "shuffling, dropout, sampling)")
      ->check(not_negative())
      ->capture_default_str();
  command
      .add_option("--val-by", o.validation_by,
                  "Validation split over: graphs (random windows) or files (whole training "
                  "files, so no file is on both sides)")
      ->check(CLI::IsMember({"graphs", "files"}))
      ->capture_default_str();
}

// What a window's graph holds: the vocabulary, node identity and node features.
void PreprocessFlags::add_graph_flags(CLI::App& command) {
  auto& o = options;
  command
      .add_option("--vocabulary-from", o.vocabulary_from,
                  "CAN-ID vocabulary from: all training frames (upstream) or normal frames only "
                  "(IDs seen only in attacks map to the unknown ID)")
      ->check(CLI::IsMember({"all", "normal"}))
      ->capture_default_str();
  command
      .add_option("--node-identity", node_identity,
                  "What node feature 0 (the embedded identity) is: can-id (the vocabulary index, "
                  "upstream), frequency-rank (rank by frames within the window) or hashed-id "
                  "(the raw ID hashed into 256 buckets); the last two do not depend on one "
                  "vehicle's ID set")
      ->check(CLI::IsMember({"can-id", "frequency-rank", "hashed-id"}))
      ->capture_default_str();
  command
      .add_option("--node-features", node_features,
                  "Node feature groups (comma-separated): kd-gat (always), timing (inter-arrival "
                  "times, window duration), payload (byte entropy, bit-flip and byte-change "
                  "rates, DLC)")
      ->delimiter(',')
      ->check(CLI::IsMember({"kd-gat", "timing", "payload"}))
      ->capture_default_str();
}

// Which files of the dataset are read, and how each is named.
void PreprocessFlags::add_file_selection_flags(CLI::App& command) {
  auto& o = options;
  command
      .add_option("--exclude", exclude,
                  "Leave out files whose name contains one of these (comma-separated)")
      ->delimiter(',')
      ->capture_default_str();
  command
      .add_option("--attack-type-from", attack_type_from,
                  "Name each file's attack type after: file (its name without the recording's "
                  "suffix, e.g. DoS-2.csv -> dos) or directory (the directory holding it inside "
                  "its split); a file without attack frames is attack-free either way")
      ->check(CLI::IsMember({"file", "directory"}))
      ->capture_default_str();
  command.add_flag("--keep-duplicates", o.keep_duplicate_files,
                   "Keep training files whose frames repeat another training file's (left out by "
                   "default: their windows would be in both training and validation)");
}

// How the process runs: threads, the store it replaces, progress, locks.
void PreprocessFlags::add_process_flags(CLI::App& command) {
  auto& o = options;
  command
      .add_option("--threads", o.threads,
                  "Worker threads (0: all cores; more than the cores is capped)")
      ->capture_default_str();
  command.add_flag("--force", o.overwrite, "Replace an existing store");
  command.add_flag("--no-progress", no_progress, "Do not draw the progress bar");
  command.add_flag("--wait-for-lock", wait_for_lock,
                   "When another headroom process is building the same store (or, in `run`, "
                   "training in the same run directory): wait for it instead of failing");
}

// --format csv's column mapping.
void PreprocessFlags::add_csv_mapping_flags(CLI::App& command) {
  const std::string mapping = "CSV column mapping (with --format csv)";
  auto& o = options;
  auto& m = o.reader.mapping;
  m.id.clear();
  command
      .add_option("--csv-timestamp", m.timestamp,
                  "Timestamp column (seconds): header name, or 0-based index with --csv-no-header")
      ->group(mapping);
  command.add_option("--csv-id", m.id, "CAN ID column")->group(mapping);
  command.add_option("--csv-id-base", id_base, "CAN ID notation: hex or dec")
      ->check(CLI::IsMember({"hex", "dec"}))
      ->group(mapping);
  command.add_option("--csv-payload", m.payload, "Payload column holding one hex string")
      ->group(mapping);
  command
      .add_option("--csv-payload-bytes", m.payload_bytes,
                  "Payload columns, one hex byte each (comma-separated)")
      ->delimiter(',')
      ->group(mapping);
  command.add_option("--csv-dlc", m.dlc, "DLC column (optional)")->group(mapping);
  command
      .add_option("--csv-dlc-unit", dlc_unit,
                  "What the DLC column counts: bytes (0..8) or bits (0..64, multiples of 8)")
      ->check(CLI::IsMember({"bytes", "bits"}))
      ->capture_default_str()
      ->group(mapping);
  command
      .add_flag("--csv-ragged", m.ragged_payload,
                "Rows with DLC < 8 have fewer byte columns; later columns move left (HCRL style)")
      ->group(mapping);
  command.add_option("--csv-label", m.label, "Label column (omit: every frame normal)")
      ->group(mapping);
  command
      .add_option("--attack-values", m.attack_values,
                  "Label values meaning attack, case-insensitive (comma-separated)")
      ->delimiter(',')
      ->group(mapping);
  command
      .add_option(
          "--normal-values", m.normal_values,
          "Label values meaning normal; when given, any other value is a bad row (comma-separated)")
      ->delimiter(',')
      ->group(mapping);
  command.add_option("--csv-delimiter", delimiter, "Field delimiter (one character)")
      ->group(mapping);
  command
      .add_flag("--csv-no-header", no_header,
                "The CSV has no header row; columns are 0-based indices")
      ->group(mapping);
}

preprocess::PreprocessOptions PreprocessFlags::resolve() const {
  preprocess::PreprocessOptions resolved = options;
  const auto parsed = can::parse_log_format(format);
  if (!parsed)
    throw std::invalid_argument(fmt::format("unknown --format '{}' (formats: {})",
                                            util::printable(format),
                                            fmt::join(can::log_format_choices(), ", ")));
  resolved.reader.format = *parsed;
  resolved.reader.on_bad_row =
      on_bad_row == "skip" ? can::BadRowPolicy::kSkip : can::BadRowPolicy::kError;
  auto& m = resolved.reader.mapping;
  m.id_base = id_base == "dec" ? can::IdBase::kDecimal : can::IdBase::kHex;
  m.dlc_unit = dlc_unit == "bits" ? can::DlcUnit::kBits : can::DlcUnit::kBytes;
  if (delimiter.size() != 1) {
    throw std::invalid_argument("--csv-delimiter must be one character, not '" +
                                util::printable(delimiter) + "'");
  }
  m.delimiter = delimiter[0];
  m.has_header = !no_header;
  resolved.scan.exclude_substrings = exclude;
  resolved.features.identity = graph::parse_node_identity(node_identity);
  graph::parse_feature_groups(node_features, resolved.features);
  resolved.scan.attack_type_from = attack_type_from == "directory"
                                       ? dataset::AttackTypeSource::kDirectory
                                       : dataset::AttackTypeSource::kFileName;
  if (no_progress) resolved.progress = 0;
  resolved.threads = util::capped_thread_count(resolved.threads, "--threads", std::cerr);
  if (wait_for_lock) resolved.when_locked = util::WhenLocked::kWait;
  const bool mapped = !m.id.empty() || !m.payload.empty() || !m.payload_bytes.empty() ||
                      !m.label.empty() || !m.dlc.empty() || m.dlc_unit == can::DlcUnit::kBits;
  if (resolved.reader.format == can::LogFormat::kMappedCsv) {
    m.validate();
  } else if (mapped) {
    throw std::invalid_argument("--csv-* column flags need --format csv");
  }
  return resolved;
}

}  // namespace headroom::cli
