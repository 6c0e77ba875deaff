#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <memory>

#include "headroom/cli/commands.hpp"
#include "headroom/cli/preprocess_flags.hpp"
#include "headroom/store/graph_store.hpp"
#include "headroom/store/store_summary.hpp"

namespace headroom::cli {

void preprocess_and_summarize(const std::filesystem::path& dataset,
                              const std::filesystem::path& store,
                              const preprocess::PreprocessOptions& options) {
  const auto report = preprocess::preprocess_dataset(dataset, store, options);
  for (const auto& file : report.files) {
    if (file.skipped_rows > 0) {
      fmt::print(stderr, "warning: {}: skipped {} malformed row(s)\n", file.path,
                 file.skipped_rows);
    }
  }
  for (const auto& entry : report.skipped_entries)
    fmt::print(stderr, "warning: {}: {}\n", entry.relative_path, entry.reason);
  for (const auto& path : report.excluded)
    fmt::print(stderr, "note: left out {} (excluded by name)\n", path);
  for (const auto& file : report.attack_free_files)
    fmt::print(stderr, "note: {} holds no attack frame: attack type '{}' (its name says '{}')\n",
               file.path, dataset::kAttackFreeType, file.named_type);
  for (const auto& duplicate : report.duplicates) {
    if (duplicate.left_out)
      fmt::print(stderr,
                 "note: left out {}: the same frames as {} (identical windows would be in both "
                 "training and validation; --keep-duplicates keeps it)\n",
                 duplicate.path, duplicate.same_as);
    else
      fmt::print(stderr, "warning: {} holds the same frames as {}\n", duplicate.path,
                 duplicate.same_as);
  }
  fmt::print(
      "preprocessed {} files, {} rows ({} skipped) into {} graphs in {:.2f} s ({:.2f} M rows/s)\n",
      report.files.size(), report.rows, report.skipped_rows, report.graphs, report.seconds,
      report.seconds > 0 ? static_cast<double>(report.rows) / report.seconds / 1e6 : 0.0);
  fmt::print("{}", store::render_summary(store::summarize_store(store::GraphStore::open(store))));
}

void add_preprocess_command(CLI::App& app) {
  auto* command =
      app.add_subcommand("preprocess", "Turn a CAN dataset directory into a graph store");
  struct State {
    std::string dataset;
    std::string store;
    PreprocessFlags flags;
  };
  auto state = std::make_shared<State>();
  command
      ->add_option("DATASET_DIR", state->dataset,
                   "Dataset root holding train_*/ and test_*/ directories")
      ->required();
  command->add_option("--out,-o", state->store, "Graph store directory to create")->required();
  state->flags.add_to(*command);
  command->footer(
      "Example: headroom preprocess ../shared/data/can/hcrl_sa --out stores/hcrl_sa --threads 2\n"
      "Mapped CSV: headroom preprocess DIR --out S --format csv --csv-timestamp Time --csv-id ID "
      "\\\n"
      "            --csv-payload Data --csv-label Class --attack-values Fuzzing,DoS");
  command->callback([state] {
    const auto options = state->flags.resolve();
    preprocess_and_summarize(state->dataset, state->store, options);
  });
}

}  // namespace headroom::cli
