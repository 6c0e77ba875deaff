#include "headroom/train/stages/node_evaluation.hpp"

#include <torch/torch.h>

#include <fmt/format.h>

#include "headroom/eval/class_coverage.hpp"
#include "headroom/store/document_tfidf.hpp"
#include "headroom/train/families/model_checkpoint.hpp"
#include "headroom/train/loop/run_resume.hpp"
#include "headroom/train/step/node_task_batch.hpp"
#include "headroom/util/file_writer.hpp"
#include "headroom/util/process_role.hpp"

namespace headroom::train {

nlohmann::json node_graph_identity(const store::NodeGraphMetadata& metadata) {
  nlohmann::json checksums = nlohmann::json::object();
  for (const auto& [name, array] : metadata.arrays) checksums[name] = array.xxh3;
  return {{"kind", "node-graph"},
          {"nodes", metadata.num_nodes},
          {"edges", metadata.num_edges},
          {"classes", metadata.classes},
          {"validation_fraction", metadata.validation_fraction},
          {"validation_seed", metadata.validation_seed},
          {"arrays", checksums}};
}

std::string node_checkpoint_kind(const models::NodeModelConfig& config) {
  return "node_" + config.architecture;
}

std::vector<std::string> node_class_coverage_warnings(const store::NodeGraphStore& store) {
  const auto labels_in = [&store](store::NodeSplit split) {
    std::vector<std::int32_t> labels;
    for (const auto node : store.nodes_in(split)) labels.push_back(store.node_label()[node]);
    return labels;
  };
  return eval::class_coverage_warnings(
      store.metadata().classes, labels_in(store::NodeSplit::kTrain),
      labels_in(store::NodeSplit::kTest),
      store::holds_documents_and_words(store) ? "documents" : "nodes");
}

NodeScore score_nodes(const store::NodeGraphStore& store, const c10::Device& device,
                      std::int64_t classes, const at::Tensor& logits,
                      const std::vector<std::uint32_t>& nodes, bool rows_only) {
  const auto batch = NodeBatchBuilder(store).build(nodes, false)->to(device, false);
  const auto& seeds = nodes_of(*batch);
  const auto& labels = seeds.labels();
  const auto rows = rows_only ? logits : logits.index_select(0, seeds.nodes());
  const double loss = torch::nn::functional::cross_entropy(rows, labels).item<double>();
  const auto predicted = rows.argmax(1).to(torch::kInt32).cpu();
  const auto truth = labels.to(torch::kInt32).cpu();
  const auto count = static_cast<std::size_t>(truth.numel());
  return {loss, eval::class_metrics({truth.data_ptr<std::int32_t>(), count},
                                    {predicted.data_ptr<std::int32_t>(), count},
                                    static_cast<std::size_t>(classes))};
}

namespace {

void write_evaluation(const TrainingConfig& config, const store::NodeGraphStore& store,
                      const models::NodeModelConfig& model, const RunDirectory& run,
                      const nlohmann::json& splits, const NodeEvaluationRecord& record) {
  const auto info = read_checkpoint_info(run.best_checkpoint());
  nlohmann::json document = {{"task", "node classification"},
                             {"model", node_checkpoint_kind(model)},
                             {"store", config.run.store.string()},
                             {"classes", store.metadata().classes},
                             {"checkpoint_epoch", info.epoch},
                             {"training", record.training},
                             {"splits", splits},
                             {"warnings", record.warnings}};
  if (record.baseline) document["baseline"] = *record.baseline;
  util::write_file_atomically(run.path() / "evaluation.json", document.dump(2) + "\n");
}

}  // namespace

std::map<std::string, eval::ClassMetrics> evaluate_best_node_model(
    const TrainingConfig& config, const store::NodeGraphStore& store,
    const models::NodeModelConfig& model, const c10::Device& device, NodeInference& inference,
    RunDirectory& run, const NodeEvaluationRecord& record) {
  // A best.pt copied in from another corpus's run once failed deep inside a sparse product,
  // naming nothing: its own record of the store is checked first.
  require_trained_on(run.best_checkpoint(), node_graph_identity(store.metadata()),
                     "to be evaluated on");
  const auto best = models::make_node_model(model);
  load_checkpoint_weights(run.best_checkpoint(), *best);
  best->to(device);
  best->eval();
  const torch::NoGradGuard no_grad;
  const auto logits = inference.every_node(*best);
  std::map<std::string, eval::ClassMetrics> evaluation;
  nlohmann::json splits = nlohmann::json::object();
  for (const auto split :
       {store::NodeSplit::kTrain, store::NodeSplit::kValidation, store::NodeSplit::kTest}) {
    const auto nodes = store.nodes_in(split);
    if (nodes.empty()) continue;
    const std::string name(store::kNodeSplitNames[static_cast<std::size_t>(split)]);
    const auto score = score_nodes(store, device, model.num_classes, logits, nodes);
    evaluation[name] = score.metrics;
    splits[name] = score.metrics;
    splits[name]["loss"] = score.loss;
  }
  if (util::process_role().writes()) write_evaluation(config, store, model, run, splits, record);
  if (const auto test = evaluation.find("test"); test != evaluation.end())
    run.log(fmt::format("test: accuracy {:.4f}, macro-F1 {:.4f} ({} documents)",
                        test->second.accuracy, test->second.macro_f1, test->second.count));
  if (record.baseline)
    run.log(fmt::format("{}: {}", kTfidfBaselineName, describe_tfidf_baseline(*record.baseline)));
  return evaluation;
}

}  // namespace headroom::train
