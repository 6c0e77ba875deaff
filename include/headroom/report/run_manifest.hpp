// The run manifest: runs/{dataset}/run_manifest.json, the index of one `headroom run` — the store
// it trained on (and the store's content identity), every stage it ran or reused with its result
// and memory plan, and the evaluation. `headroom run` writes it (train_cli/run_command.cpp) when
// the run starts and again after every stage, so a killed run leaves a true partial one; `headroom
// report` and the Python package read it instead of re-deriving the run's layout. The schema is
// docs/architecture.md's "The run manifest".
//
// Paths inside the run root are written relative to it (a copied or moved run root stays
// readable); the store's path is absolute. Not thread-safe: one writer per run, on the thread that
// runs the stages.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace headroom::report {

inline constexpr const char* kRunManifestFileName = "run_manifest.json";
inline constexpr const char* kRunManifestFormat = "headroom-run-manifest";
inline constexpr int kRunManifestVersion = 1;

// The task a run's stages solve, as the manifest's "task" names it.
inline constexpr const char* kGraphClassificationTask = "graph classification";
inline constexpr const char* kNodeClassificationTask = "node classification";

// One stage as the manifest lists it.
struct ManifestStage {
  std::string name;               // its run-directory name: "teacher_curriculum", "node"
  std::filesystem::path run_dir;  // inside the run root
  bool reused = false;            // a finished run with this configuration, not trained again
  // The best epoch's validation metrics (result.json's training.best_metrics): the manifest's
  // headline metric is chosen from them (headline_metric).
  nlohmann::json best_metrics;
};

// The headline of a stage's validation metrics: {"name", "value"} of the first of "f1",
// "accuracy", "loss" that `best_metrics` holds as a number (classifiers and fusions: F1; node
// models: accuracy; autoencoders: reconstruction loss); null when it holds none of them.
nlohmann::json headline_metric(const nlohmann::json& best_metrics);

// Writes run_root/run_manifest.json atomically (util::write_file_atomically) on every change.
class RunManifestWriter {
 public:
  // Records the store (its absolute path, its kind and the manifest_xxh3 seal of its manifest,
  // which covers every array's checksum) and writes a manifest without stages (creating the run
  // root), replacing the one a previous run left. Throws std::runtime_error naming the store when
  // its manifest cannot be read.
  RunManifestWriter(const std::filesystem::path& run_root, const std::filesystem::path& store,
                    std::string task);

  void add_stage(const ManifestStage& stage);
  // The evaluation's file (CAN: evaluation/evaluation.json; a text corpus: the node stage's
  // evaluation.json).
  void set_evaluation(const std::filesystem::path& evaluation_file);
  // Marks the run complete: every stage it was going to run has run.
  void finish();

  const nlohmann::json& document() const { return document_; }

 private:
  void write() const;
  std::string relative(const std::filesystem::path& path) const;

  std::filesystem::path run_root_;
  nlohmann::json document_;
};

// The manifest of `run_root`, parsed; nullopt when there is none. Throws std::runtime_error naming
// the file when it is not JSON, not a run manifest, or of a version this headroom cannot read.
std::optional<nlohmann::json> read_run_manifest(const std::filesystem::path& run_root);

// The stage run directories a manifest lists, in the order they ran, resolved against
// `run_root`. Throws std::runtime_error naming the manifest for an entry that is not an object with
// a relative "run_dir" inside the run root.
std::vector<std::filesystem::path> manifest_stage_directories(
    const nlohmann::json& manifest, const std::filesystem::path& run_root);

}  // namespace headroom::report
