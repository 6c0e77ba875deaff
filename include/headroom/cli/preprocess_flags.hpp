// The `preprocess` flags (window, threads, bad-row policy, log format and CSV column mapping),
// shared by `headroom preprocess` and `headroom run`.
#pragma once

#include <string>
#include <vector>

#include "headroom/preprocess/preprocessor.hpp"

namespace CLI {
class App;
}

namespace headroom::cli {

// Binds the flags to the fields of `flags`; call resolve() after parsing.
struct PreprocessFlags {
  preprocess::PreprocessOptions options;
  std::string format = "auto";
  std::string on_bad_row = "error";
  std::string id_base = "hex";
  std::string dlc_unit = "bytes";
  std::string attack_type_from = "file";
  std::string delimiter = ",";
  // The command line's defaults are the ID-agnostic graphs (docs/detection.md measured them); the
  // library's (PreprocessOptions) stay upstream's KD-GAT graphs.
  std::string node_identity = "frequency-rank";
  std::vector<std::string> node_features = {"kd-gat", "timing", "payload"};
  bool no_header = false;
  bool no_progress = false;
  bool wait_for_lock = false;  // another process building the same store: wait, not fail
  std::vector<std::string> exclude = {"suppress", "masquerade"};

  void add_to(CLI::App& command);
  // Translates the string flags into `options`; throws std::invalid_argument on a bad value.
  preprocess::PreprocessOptions resolve() const;

 private:
  // One idea each, in the order --help lists them.
  void add_reading_flags(CLI::App& command);
  void add_split_flags(CLI::App& command);
  void add_graph_flags(CLI::App& command);
  void add_file_selection_flags(CLI::App& command);
  void add_process_flags(CLI::App& command);
  void add_csv_mapping_flags(CLI::App& command);
};

// Builds the store, then prints per-file skip warnings, exclusions, the totals line and the
// store's summary: what `preprocess` and `run` show.
void preprocess_and_summarize(const std::filesystem::path& dataset,
                              const std::filesystem::path& store,
                              const preprocess::PreprocessOptions& options);

}  // namespace headroom::cli
