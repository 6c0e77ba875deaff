#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <memory>

#include "headroom/cli/commands.hpp"
#include "headroom/cli/preprocess_flags.hpp"
#include "headroom/cli/text_flags.hpp"
#include "headroom/preprocess/sharded_preprocess.hpp"
#include "headroom/store/graph_store.hpp"
#include "headroom/store/node_graph_store.hpp"
#include "headroom/store/node_graph_summary.hpp"
#include "headroom/store/store_summary.hpp"
#include "headroom/text/text_graph_builder.hpp"
#include "headroom/util/byte_size.hpp"
#include "headroom/util/printable_text.hpp"

namespace headroom::cli {

namespace {

using util::printable_name;
using util::printable_path;

void print_skipped_rows(const std::vector<preprocess::FileReport>& files) {
  for (const auto& file : files)
    if (file.skipped_rows > 0)
      fmt::print(stderr, "warning: {}: skipped {} malformed row(s)\n", printable_path(file.path),
                 file.skipped_rows);
}

// Per-file skip warnings, exclusions and duplicates: what preprocessing found worth saying. Paths
// and names come from the file system: escaped (printable_text.hpp).
void print_findings(const preprocess::PreprocessReport& report) {
  print_skipped_rows(report.files);
  for (const auto& entry : report.skipped_entries)
    fmt::print(stderr, "warning: {}: {}\n", printable_path(entry.relative_path), entry.reason);
  for (const auto& path : report.excluded)
    fmt::print(stderr, "note: left out {} (excluded by name)\n", printable_path(path));
  for (const auto& file : report.attack_free_files)
    fmt::print(stderr, "note: {} holds no attack frame: attack type '{}' (its name says '{}')\n",
               printable_path(file.path), dataset::kAttackFreeType,
               printable_name(file.named_type));
  for (const auto& duplicate : report.duplicates) {
    if (duplicate.left_out)
      fmt::print(stderr,
                 "note: left out {}: the same frames as {} (identical windows would be in both "
                 "training and validation; --keep-duplicates keeps it)\n",
                 printable_path(duplicate.path), printable_path(duplicate.same_as));
    else
      fmt::print(stderr, "warning: {} holds the same frames as {}\n",
                 printable_path(duplicate.path), printable_path(duplicate.same_as));
  }
}

double rows_per_second(std::uint64_t rows, double seconds) {
  return seconds > 0 ? static_cast<double>(rows) / seconds / 1e6 : 0.0;
}

void print_store_summary(const std::filesystem::path& store) {
  fmt::print("{}", store::render_summary(store::summarize_store(store::GraphStore::open(store))));
}

void preprocess_shard_and_report(const std::filesystem::path& dataset,
                                 const std::filesystem::path& store,
                                 const preprocess::PreprocessOptions& options,
                                 preprocess::ShardSpec shard) {
  const auto report = preprocess::preprocess_shard(dataset, store, options, shard);
  print_skipped_rows(report.files);
  fmt::print(
      "shard {}/{}: preprocessed {} files, {} rows ({} skipped) into {} graphs in {:.2f} s "
      "({:.2f} M rows/s)\nwrote part {}; once all {} parts are written, assemble them with the "
      "same command and --assemble instead of --shard\n",
      shard.index, shard.count, report.files.size(), report.rows, report.skipped_rows,
      report.graphs, report.seconds, rows_per_second(report.rows, report.seconds),
      printable_path(report.part), shard.count);
}

void assemble_and_summarize(const std::filesystem::path& dataset,
                            const std::filesystem::path& store,
                            const preprocess::PreprocessOptions& options) {
  const auto report = preprocess::assemble_store(dataset, store, options);
  print_findings(report.store);
  fmt::print(
      "assembled {} parts: {} files, {} rows ({} skipped), {} graphs ({} test windows rebuilt "
      "for IDs outside the vocabulary) in {:.2f} s\n",
      report.parts, report.store.files.size(), report.store.rows, report.store.skipped_rows,
      report.store.graphs, report.rebuilt_windows, report.store.seconds);
  print_store_summary(store);
}

}  // namespace

void preprocess_and_summarize(const std::filesystem::path& dataset,
                              const std::filesystem::path& store,
                              const preprocess::PreprocessOptions& options) {
  const auto report = preprocess::preprocess_dataset(dataset, store, options);
  print_findings(report);
  fmt::print(
      "preprocessed {} files, {} rows ({} skipped) into {} graphs in {:.2f} s ({:.2f} M rows/s)\n",
      report.files.size(), report.rows, report.skipped_rows, report.graphs, report.seconds,
      rows_per_second(report.rows, report.seconds));
  print_store_summary(store);
}

void add_preprocess_command(CLI::App& app) {
  auto* command =
      app.add_subcommand("preprocess", "Turn a CAN dataset directory into a graph store");
  struct State {
    std::string dataset;
    std::string store;
    std::string shard;
    bool assemble = false;
    PreprocessFlags flags;
    TextFlags text;
  };
  auto state = std::make_shared<State>();
  command
      ->add_option("DATASET_DIR", state->dataset,
                   "Dataset root holding train_*/ and test_*/ directories, or a text corpus "
                   "(labels.tsv and corpus.txt or corpus.clean.txt)")
      ->required();
  command->add_option("--out,-o", state->store, "Graph store directory to create")->required();
  state->flags.add_to(*command);
  state->text.add_to(*command);
  const std::string scale_out = "Across nodes (docs/distributed.md)";
  auto* shard = command
                    ->add_option("--shard", state->shard,
                                 "Read only shard I of N (I from 0; files balanced by bytes) into "
                                 "the part STORE.parts/I-of-N, e.g. --shard $SLURM_ARRAY_TASK_ID/4")
                    ->group(scale_out);
  command
      ->add_flag("--assemble", state->assemble,
                 "Build STORE from the N parts in STORE.parts (the store one process builds; the "
                 "same flags as the shards), then remove the parts")
      ->excludes(shard)
      ->group(scale_out);
  command->footer(
      "Example: headroom preprocess ../shared/data/can/hcrl_sa --out stores/hcrl_sa --threads 2\n"
      "Mapped CSV: headroom preprocess DIR --out S --format csv --csv-timestamp Time --csv-id ID "
      "\\\n"
      "            --csv-payload Data --csv-label Class --attack-values Fuzzing,DoS\n"
      "Sharded: headroom preprocess DIR --out S --shard I/4   (I = 0..3, on any nodes), then\n"
      "         headroom preprocess DIR --out S --assemble\n"
      "Text corpus: headroom preprocess ../shared/data/text/20ng --out stores/20ng --threads 2");
  command->callback([state, command] {
    const auto options = state->flags.resolve();
    const bool text_corpus = text::is_text_corpus(state->dataset);
    if (text_corpus && (!state->shard.empty() || state->assemble))
      throw std::invalid_argument(
          "--shard and --assemble split CAN datasets across nodes; a text corpus is built by one "
          "process (" +
          util::printable_path(state->dataset) + " holds labels.tsv)");
    if (text_corpus)
      build_text_graph_and_summarize(
          state->dataset, state->store,
          state->text.resolve(options, command->get_option("--val-fraction")->count() > 0));
    else if (!state->shard.empty())
      preprocess_shard_and_report(state->dataset, state->store, options,
                                  preprocess::parse_shard(state->shard));
    else if (state->assemble)
      assemble_and_summarize(state->dataset, state->store, options);
    else
      preprocess_and_summarize(state->dataset, state->store, options);
  });
}

}  // namespace headroom::cli
