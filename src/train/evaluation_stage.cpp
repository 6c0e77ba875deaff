#include "headroom/train/evaluation_stage.hpp"

#include <torch/torch.h>

#include <fmt/format.h>
#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>

#include "headroom/train/graph_scores.hpp"
#include "headroom/train/model_checkpoint.hpp"
#include "headroom/train/model_family.hpp"
#include "headroom/train/run_directory.hpp"
#include "headroom/train/training_loop.hpp"
#include "headroom/util/file_writer.hpp"
#include "headroom/util/process_role.hpp"

namespace headroom::train {
namespace {

// Teachers before students, then by name: the order the summary reads best in.
std::vector<std::filesystem::path> discover_classifiers(const std::filesystem::path& dataset_dir) {
  std::vector<std::filesystem::path> found;
  if (!std::filesystem::is_directory(dataset_dir)) return found;
  for (const auto& entry : std::filesystem::directory_iterator(dataset_dir)) {
    const auto best = entry.path() / "best.pt";
    if (!entry.is_directory() || !std::filesystem::exists(best)) continue;
    if (model_family(read_checkpoint_info(best).kind).role() == FamilyRole::kClassifier)
      found.push_back(entry.path());
  }
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) {
    const bool a_teacher = a.filename().string().rfind("teacher", 0) == 0;
    const bool b_teacher = b.filename().string().rfind("teacher", 0) == 0;
    if (a_teacher != b_teacher) return a_teacher;
    return a.filename() < b.filename();
  });
  return found;
}

// evaluation.json as an earlier evaluation left it (an empty object when there is none). A file
// that does not parse is an error naming it, never silently replaced.
nlohmann::json read_summary(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) return nlohmann::json::object();
  try {
    auto json = nlohmann::json::parse(in);
    if (!json.is_object()) throw std::runtime_error("not a JSON object");
    return json;
  } catch (const std::exception& e) {
    throw std::runtime_error(
        fmt::format("{}: cannot merge into it ({}); move it away to start a new summary",
                    file.string(), e.what()));
  }
}

std::string model_name(const std::filesystem::path& path) {
  return std::filesystem::is_directory(path) ? path.filename().string()
                                             : path.parent_path().filename().string();
}

}  // namespace

EvaluationStageResult run_evaluation_stage(const TrainingConfig& config) {
  apply_thread_count(config.run);
  const auto device = training_device(config.run);
  const auto precision = parse_precision(config.run.precision);
  const auto store = store::GraphStore::open(config.run.store);
  TrainingConfig eval_config = config;
  eval_config.stage = Stage::kEvaluation;
  RunDirectory run(checked_run_directory(eval_config));

  auto sources = config.evaluation.models;
  if (sources.empty()) sources = discover_classifiers(config.run.runs_dir / dataset_name(config));
  if (sources.empty())
    throw std::runtime_error(fmt::format(
        "no trained classifier under {} (run `headroom curriculum` or `headroom normal` first, "
        "or pass --models)",
        (config.run.runs_dir / dataset_name(config)).string()));

  std::vector<std::uint32_t> ids(store.validation_ids().begin(), store.validation_ids().end());
  ids.insert(ids.end(), store.test_ids().begin(), store.test_ids().end());

  EvaluationStageResult result;
  result.run_dir = run.path();
  // Earlier evaluations of other models stay: a model's entry is replaced only by its own.
  nlohmann::json summary = read_summary(run.path() / "evaluation.json");
  for (const auto& source : sources) {
    const auto checkpoint = resolve_checkpoint_path(source);
    CheckpointInfo info;
    auto model = load_classifier_checkpoint(checkpoint, device, &info);
    const auto scores = attack_probabilities(
        *model, store, ids, config.optimisation.eval_batch_size, device, precision);
    std::optional<double> threshold;
    if (info.decision) threshold = info.decision->threshold;
    auto evaluation = eval::evaluate_scores(store, model_name(source), ids, scores, threshold);
    run.log(fmt::format("\n{} ({})\n{}", evaluation.model, checkpoint.string(),
                        eval::render_table(evaluation)));
    nlohmann::json json = evaluation;
    json["checkpoint"] = checkpoint.string();
    if (info.decision) json["decision"] = *info.decision;
    if (util::process_role().writes())
      util::write_file_atomically(run.path() / (evaluation.model + ".json"), json.dump(2) + "\n");
    summary[evaluation.model] = json;
    result.models.push_back(std::move(evaluation));
  }
  if (util::process_role().writes())
    util::write_file_atomically(run.path() / "evaluation.json", summary.dump(2) + "\n");
  return result;
}

}  // namespace headroom::train
