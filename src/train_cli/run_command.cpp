#include <fmt/format.h>
#include <fmt/ranges.h>
#include <CLI/CLI.hpp>
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "headroom/cli/commands.hpp"
#include "headroom/cli/not_negative.hpp"
#include "headroom/cli/preprocess_flags.hpp"
#include "headroom/cli/text_flags.hpp"
#include "headroom/models/node_model_kind.hpp"
#include "headroom/report/html_report.hpp"
#include "headroom/report/run_manifest.hpp"
#include "headroom/store/manifest_seal.hpp"
#include "headroom/store/store_metadata.hpp"
#include "headroom/store/store_source.hpp"
#include "headroom/synthetic/synthetic_traffic.hpp"
#include "headroom/text/text_corpus.hpp"
#include "headroom/train/loop/stage_observer.hpp"
#include "headroom/train/pipeline/pipeline.hpp"
#include "headroom/train/pipeline/stage_registry.hpp"
#include "headroom/train/stages/autoencoder_stage.hpp"
#include "headroom/train/stages/node_classifier_stage.hpp"
#include "headroom/train_cli/data_parallel.hpp"
#include "headroom/train_cli/tracking_flags.hpp"
#include "headroom/train_cli/train_commands.hpp"
#include "headroom/train_cli/training_app.hpp"
#include "headroom/train_cli/training_flags.hpp"
#include "headroom/util/output_path.hpp"
#include "headroom/util/printable_text.hpp"
#include "headroom/util/process_role.hpp"

namespace headroom::cli {
namespace {

// The main job rebuilds its own store every run: one of `kind` built from `source`. Any other
// store — another dataset's or corpus's (a user's, with its own settings), another kind, an
// imported one, or a manifest.json that does not read as a store's — is replaced only with
// --force (and even then only when it is a store: preprocessing checks that).
void require_store_of(const std::filesystem::path& store, std::string_view kind,
                      const std::filesystem::path& source, bool forced) {
  if (forced) return;
  const auto replace_how = "pass --force to replace it, or choose another --store";
  std::optional<store::StoreSource> built;
  try {
    built = store::store_source_at(store);
  } catch (const std::exception& e) {
    // Not a store's manifest: --force would not replace it either (only a store is replaced).
    throw std::runtime_error(
        fmt::format("{}; remove it yourself, or choose another --store", e.what()));
  }
  if (!built) return;  // nothing there, or no store: preprocessing decides what it may replace
  std::error_code ec;
  if (built->kind == kind && !built->source.empty() &&
      std::filesystem::equivalent(built->source, source, ec))
    return;
  throw std::runtime_error(fmt::format(
      "{}: holds {} built from {}, not {} built from {}; {}", util::printable_path(store),
      store::describe_store_kind(*built),
      built->source.empty() ? "another source (" + util::printable(built->created_by) + ")"
                            : util::printable_path(built->source),
      kind == store::kNodeGraphStoreKind ? "a text corpus's node graph" : "a CAN windows store",
      util::printable_path(source), replace_how));
}

// The store `run` builds: --store, else stores/{the dataset's directory name}.
std::filesystem::path store_for(const std::filesystem::path& given,
                                const std::filesystem::path& dataset, const char* unnamed) {
  if (!given.empty()) return given;
  const auto name = std::filesystem::absolute(dataset).lexically_normal().filename().string();
  return std::filesystem::path("stores") / (name.empty() ? unnamed : name);
}

// The run manifest is rank 0's, like every run file (report/run_manifest.hpp).
std::optional<report::RunManifestWriter> open_run_manifest(const std::filesystem::path& runs,
                                                           const std::filesystem::path& store,
                                                           const char* task) {
  if (!util::process_role().writes()) return std::nullopt;
  return std::make_optional<report::RunManifestWriter>(runs, store, task);
}

// The model's test accuracy beside the classical baseline's, then what may make them mean little:
//   node gcn:           test accuracy 0.9690, macro-F1 0.9240 on 2189 documents (best epoch …)
//   baseline tf-idf+lr: test accuracy 0.9708, macro-F1 0.9301 on 2189 documents (L2 1e-06 …)
void print_text_summary(const train::NodeStageResult& result, const eval::ClassMetrics& test,
                        const std::string& node_model) {
  const auto model_label = fmt::format("node {}:", node_model);
  const auto baseline_label = fmt::format("{}:", train::kTfidfBaselineName);
  const auto width = std::max(model_label.size(), baseline_label.size());
  fmt::print("\n{:<{}} test accuracy {:.4f}, macro-F1 {:.4f} on {} documents (best epoch {}; {})\n",
             model_label, width, test.accuracy, test.macro_f1, test.count,
             result.training.outcome.best_epoch + 1,
             util::printable_path(result.training.run_dir / "evaluation.json"));
  if (result.baseline) {
    fmt::print("{:<{}} {}\n", baseline_label, width,
               train::describe_tfidf_baseline(*result.baseline));
    if (const auto baseline_test = result.baseline->splits.find("test");
        baseline_test != result.baseline->splits.end() &&
        baseline_test->second.accuracy > test.accuracy)
      fmt::print("node {} is {:.1f} points of test accuracy below the baseline\n", node_model,
                 100 * (baseline_test->second.accuracy - test.accuracy));
  }
  for (const auto& warning : result.warnings) fmt::print("warning: {}\n", warning);
}

// The node task on a text corpus: corpus -> TextGCN's graph (a node-graph store) -> GCN trained
// full-batch -> evaluation of every split; ends with the test accuracy and macro-F1.
void run_text_corpus(const std::filesystem::path& corpus, std::filesystem::path store,
                     const std::string& node_model, const preprocess::PreprocessOptions& shared,
                     const TextFlags& text, const TrainingFlags& training,
                     const TrackingFlags& tracking, const CLI::App& command) {
  const auto given = [&command](const char* flag) {
    const auto* option = command.get_option_no_throw(flag);
    return option != nullptr && option->count() > 0;
  };
  store = store_for(store, corpus, "corpus");
  auto config = training.resolve(train::kNodeStage);
  config.model.family = node_model;
  train::apply_node_task_defaults(config, {.preset = true,
                                           .max_epochs = given("--max-epochs"),
                                           .weight_decay = given("--weight-decay"),
                                           .gradient_clip = given("--gradient-clip")});
  config.run.store = store;
  config.run.seed = shared.seed;
  config.run.threads = static_cast<int>(shared.threads);
  config.run.when_locked = shared.when_locked;
  train::validate(config);
  util::require_disjoint(store, "the store (--store)", corpus, "the corpus");
  const auto runs = config.run.runs_dir / train::dataset_name(config);
  util::require_disjoint(runs, "the run directories (--runs-dir)", corpus, "the corpus");
  util::require_disjoint(runs, "the run directories (--runs-dir)", store, "the store");
  tracking.require_outside(corpus, "the corpus");
  tracking.require_outside(store, "the store (--store)");
  require_store_of(store, store::kNodeGraphStoreKind, corpus, shared.overwrite);
  auto options = text.resolve(shared, given("--val-fraction"));
  options.overwrite = true;  // the main job rebuilds its own store (and only a store) every run
  build_text_graph_and_summarize(corpus, store, options);
  auto manifest = open_run_manifest(runs, store, report::kNodeClassificationTask);
  // Tracked as the training commands' stages are: one MLflow run / TensorBoard directory, named
  // after the run directory.
  const auto trackers = tracking.open(std::cerr);
  const auto run_dir = train::run_directory(config);
  const auto result =
      train::observed_stage(trackers->observers(), run_dir.filename().string(), config, run_dir, {},
                            [&](const train::LoopHooks& hooks) {
                              return train::run_node_classifier_stage(config, hooks);
                            });
  if (manifest) {
    const auto& outcome = result.training.outcome;
    manifest->add_stage({run_dir.filename().string(), result.training.run_dir,
                         outcome.already_complete, outcome.best_metrics});
    if (const auto evaluation = result.training.run_dir / "evaluation.json";
        std::filesystem::exists(evaluation))
      manifest->set_evaluation(evaluation);
    manifest->finish();
  }
  if (result.mode == "sampled")
    fmt::print(
        "\ntrained on sampled subgraphs, {} per epoch: the full batch is over the memory "
        "budget\n",
        result.parts_per_epoch);
  const auto test = result.evaluation.find("test");
  if (test == result.evaluation.end()) {
    fmt::print("\nno test nodes: trained {} epochs in {}\n", result.training.outcome.epochs,
               util::printable_path(result.training.run_dir));
    return;
  }
  print_text_summary(result, test->second, node_model);
}

// `run`'s flags and what they resolve to.
struct RunState {
  std::string dataset;
  std::string store;
  std::string synthetic_dir = "data/synthetic";
  synthetic::SyntheticDatasetOptions synthetic;
  bool regenerate = false;
  std::string node_model = "gcn";
  PreprocessFlags flags;
  TextFlags text;
  TrainingFlags training;
  TrackingFlags tracking;
};

// The registered node models with what each is: "gcn (TextGCN's, 200 hidden), gat (…)".
std::string node_model_choices() {
  std::vector<std::string> choices;
  for (const auto name : models::node_model_names())
    choices.push_back(fmt::format("{} ({})", name, models::node_model_kind(name).summary()));
  return fmt::format("{}", fmt::join(choices, ", "));
}

std::vector<std::string> node_model_name_list() {
  const auto names = models::node_model_names();
  return {names.begin(), names.end()};
}

void add_run_flags(CLI::App& command, RunState& state) {
  command.add_option("DATASET", state.dataset,
                     "Dataset root (train_*/ and test_*/), or a text corpus (labels.tsv and "
                     "corpus.txt or corpus.clean.txt); omit for the synthetic default");
  command.add_option("--store", state.store,
                     "Graph store to (re)build (default: stores/<dataset name>)");
  command
      .add_option("--synthetic-dir", state.synthetic_dir,
                  "Where the synthetic default dataset lives")
      ->capture_default_str();
  command.add_option("--frames", state.synthetic.total_frames, "Frames of the synthetic dataset")
      ->check(not_negative())
      ->capture_default_str();
  command.add_option("--synthetic-seed", state.synthetic.seed, "Seed of the synthetic dataset")
      ->check(not_negative())
      ->capture_default_str();
  command.add_flag("--regenerate", state.regenerate,
                   "Regenerate the synthetic dataset even if it exists");
  state.flags.add_to(command);
  state.text.add_to(command);
  command
      .add_option("--node-model", state.node_model,
                  "A text corpus's node classifier: " + node_model_choices())
      ->check(CLI::IsMember(node_model_name_list()))
      ->capture_default_str()
      ->group(std::string(kTextFlagsGroup));
  state.training.add_to(command, train::option_groups_of_every_stage(), /*with_store=*/false,
                        /*with_preset=*/false,
                        /*shares_preprocess_flags=*/true);
  state.tracking.add_to(command);
  command.footer(
      "Example: headroom run            (synthetic default)\n"
      "         headroom run ../shared/data/can/hcrl_sa --threads 2\n"
      "         headroom run ../shared/data/text/r8  (TextGCN: node classification)\n"
      "         headroom run ../shared/data/text/r8 --node-model gat");
}

// The dataset `run` reads: the one given, or the synthetic default (generated when missing).
std::filesystem::path can_dataset(const RunState& state) {
  if (!state.dataset.empty()) return state.dataset;
  const std::filesystem::path dataset = state.synthetic_dir;
  if (state.regenerate || !std::filesystem::exists(dataset)) {
    const auto summary =
        synthetic::generate_synthetic_dataset(dataset, state.synthetic, /*overwrite=*/true);
    std::uint64_t frames = 0;
    for (const auto& f : summary.files) frames += f.frames;
    fmt::print("generated {} synthetic frames in {} files ({} ECUs) under {}\n", frames,
               summary.files.size(), summary.ecu_count, util::printable_path(dataset));
  } else {
    fmt::print("using the synthetic dataset in {} (--regenerate to rebuild it)\n",
               util::printable_path(dataset));
    const auto generated = synthetic::generated_dataset(dataset);
    std::error_code ec;
    if (!generated &&
        std::filesystem::exists(std::filesystem::symlink_status(dataset / "synthetic.json", ec)))
      fmt::print(
          "note: its synthetic.json is not one `headroom generate` wrote (unreadable, or edited): "
          "its size, seed and layout are unknown; --regenerate rebuilds the dataset\n");
    if (generated && generated->layout_revision > synthetic::kSyntheticLayoutRevision)
      fmt::print(
          "note: it was generated by a newer headroom (layout revision {}, this one knows {}): "
          "--regenerate rebuilds it in this version's layout\n",
          generated->layout_revision, synthetic::kSyntheticLayoutRevision);
    if (generated && generated->layout_revision < synthetic::kSyntheticLayoutRevision)
      fmt::print(
          "note: it was generated by an older headroom whose attacks start in the first windows of "
          "each file, unlike real captures, which defeats the label-free decisions: "
          "--regenerate\n");
    if (generated && (generated->options.seed != state.synthetic.seed ||
                      generated->options.total_frames != state.synthetic.total_frames))
      fmt::print(
          "note: it holds {} frames of seed {}, not the {} frames of seed {} asked for "
          "(--frames, --synthetic-seed): --regenerate to rebuild it with those\n",
          generated->options.total_frames, generated->options.seed, state.synthetic.total_frames,
          state.synthetic.seed);
  }
  return dataset;
}

// The report written at the end replaces only a page headroom wrote: refused now, not after hours
// of training.
void require_replaceable_report(const std::filesystem::path& report_file) {
  std::error_code ec;
  const auto report_status = std::filesystem::symlink_status(report_file, ec);
  if (std::filesystem::exists(report_status) && (!std::filesystem::is_regular_file(report_status) ||
                                                 !report::is_headroom_report(report_file)))
    throw std::runtime_error(report_file.string() +
                             " exists and is not a report headroom wrote; remove it yourself or "
                             "choose another --runs-dir");
}

// The KD-GAT chain on a CAN dataset: preprocess -> stages -> evaluation -> summary and report.
void run_can_dataset(const RunState& state) {
  const auto dataset = can_dataset(state);
  const auto store = store_for(state.store, dataset, "dataset");
  auto options = state.flags.resolve();
  // Every stage of the chain stops early, keeps its best epoch and calibrates on held-out graphs:
  // refused before the store is built, not after.
  if (options.validation_fraction <= 0)
    throw std::invalid_argument(
        "--val-fraction 0 leaves no validation graphs, and every stage of `run` needs them (early "
        "stopping, the best checkpoint, the decision threshold): give a fraction above 0");
  require_store_of(store, store::kWindowsStoreKind, dataset, options.overwrite);
  options.overwrite = true;  // the main job rebuilds its own store (and only a store) every run
  auto config = state.training.resolve(train::kAutoencoderStage);
  config.run.store = store;
  // Checked before anything is written: no output may be, hold or lie inside an input.
  util::require_disjoint(store, "the store (--store)", dataset, "the dataset");
  const auto runs = config.run.runs_dir / train::dataset_name(config);
  util::require_disjoint(runs, "the run directories (--runs-dir)", dataset, "the dataset");
  util::require_disjoint(runs, "the run directories (--runs-dir)", store, "the store");
  state.tracking.require_outside(dataset, "the dataset");
  state.tracking.require_outside(store, "the store (--store)");
  require_replaceable_report(runs / "report.html");
  // Every rank trains on the one store rank 0 builds.
  const auto job = join_data_parallel_job(state.training, config);
  job->run_on_rank0("preprocess the store",
                    [&] { preprocess_and_summarize(dataset, store, options); });

  config.run.seed = options.seed;
  config.run.threads = static_cast<int>(options.threads);
  config.run.when_locked = options.when_locked;
  const auto trackers = state.tracking.open(std::cerr);
  trackers->start_parent("headroom run " + train::dataset_name(config), config);
  auto manifest = open_run_manifest(runs, store, report::kGraphClassificationTask);
  const auto result = train::run_pipeline(
      config, job->hooks(), trackers->observers(), [&manifest](const train::PipelineStage& stage) {
        if (manifest)
          manifest->add_stage({stage.name, stage.result.run_dir,
                               stage.result.outcome.already_complete,
                               stage.result.outcome.best_metrics});
      });
  if (manifest) {
    manifest->set_evaluation(result.evaluation.run_dir / "evaluation.json");
    manifest->finish();
  }
  fmt::print("\n{}", train::render_pipeline_summary(result));
  if (!util::process_role().writes()) return;  // the report is rank 0's, like the run files
  // The run's own report: replaced every run, like its store (only ever a headroom report).
  const auto report = report::write_html_report(runs, std::nullopt, std::nullopt, true);
  fmt::print("\nreport: {}\n", util::printable_path(report.path));
  if (report.missing_chart_js)
    fmt::print(stderr, "warning: {}\n", report::missing_charts_warning(*report.missing_chart_js));
  trackers->log_parent_artifact(report.path);
  trackers->end_parent(tracking::RunStatus::kFinished);
}

// Where `run` with these flags keeps its runs: --runs-dir/{--dataset, else the store's name}, the
// store being the one store_for names for the dataset (the synthetic default without one).
std::filesystem::path run_root_of(const RunState& state) {
  const bool text_corpus = !state.dataset.empty() && text::is_text_corpus(state.dataset);
  const std::filesystem::path dataset = state.dataset.empty() ? state.synthetic_dir : state.dataset;
  auto config = state.training.resolve(text_corpus ? train::kNodeStage : train::kAutoencoderStage);
  config.run.store = store_for(state.store, dataset, text_corpus ? "corpus" : "dataset");
  return config.run.runs_dir / train::dataset_name(config);
}

}  // namespace

std::filesystem::path run_manifest_path(const std::vector<std::string>& args) {
  CLI::App app{"headroom"};
  app.require_subcommand(1, 1);
  auto* command = app.add_subcommand("run", std::string(training_command_summary("run")));
  auto state = std::make_shared<RunState>();
  add_run_flags(*command, *state);
  std::filesystem::path manifest;
  command->callback(
      [&manifest, state] { manifest = run_root_of(*state) / report::kRunManifestFileName; });
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 parses from the back
  app.parse(reversed);
  return manifest;
}

// The main job: (generate the synthetic default) -> preprocess -> VGAE teacher -> GAT teacher
// (curriculum) -> VGAE student (KD) -> GAT student (KD) -> evaluation -> summary table.
void add_run_command(CLI::App& app) {
  auto* command = app.add_subcommand("run", std::string(training_command_summary("run")));
  auto state = std::make_shared<RunState>();
  add_run_flags(*command, *state);
  command->callback([state, command] {
    if (!state->dataset.empty() && text::is_text_corpus(state->dataset))
      return run_text_corpus(state->dataset, state->store, state->node_model,
                             state->flags.resolve(), state->text, state->training, state->tracking,
                             *command);
    run_can_dataset(*state);
  });
}

}  // namespace headroom::cli
