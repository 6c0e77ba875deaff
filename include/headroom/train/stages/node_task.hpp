// The node task (stage `node`, node_classifier_stage.hpp) as a Task (task/task.hpp): the nodes
// of one big graph (a node-graph store) classified by a node model. Its plan holds the full
// batch's step to the budget, or sampled steps on the subgraphs of random parts of the nodes when
// the full batch does not fit (node_stage_plan.hpp); its batches are the training nodes
// (step/node_task_batch.hpp) or a part's subgraph (step/node_subgraph_batch.hpp); its loss reads
// the training nodes' rows of the model's output; inference runs as the plan allows
// (node_inference.hpp); it evaluates the best checkpoint on every split beside a text corpus's
// TF-IDF baseline (node_evaluation.hpp). Not thread-safe.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "headroom/eval/class_metrics.hpp"
#include "headroom/models/node_model.hpp"
#include "headroom/store/node_graph_store.hpp"
#include "headroom/train/stages/node_inference.hpp"
#include "headroom/train/stages/node_stage_plan.hpp"
#include "headroom/train/stages/tfidf_baseline.hpp"
#include "headroom/train/task/task.hpp"

namespace headroom::train {

// What stage `node` reports (run_node_classifier_stage, node_classifier_stage.hpp).
struct NodeStageResult {
  StageResult training;
  // The best checkpoint's metrics by split name ("train", "validation", "test").
  std::map<std::string, eval::ClassMetrics> evaluation;
  std::string mode;                  // "full-batch" or "sampled" (NodeStagePlan::mode)
  std::int64_t parts_per_epoch = 0;  // sampled: steps per epoch
  // The classical baseline on the same split (tfidf_baseline.hpp), in evaluation.json's
  // "baseline"; absent when the graph's nodes are not documents and words.
  std::optional<TfidfBaselineResult> baseline;
  // Where the evaluation's numbers cannot mean much (eval/class_coverage.hpp): a class with no
  // training nodes, a class with few test nodes. Logged when the stage starts and kept in
  // evaluation.json's "warnings".
  std::vector<std::string> warnings;
};

class NodeTask final : public Task {
 public:
  // Opens config.run.store (a node-graph store) and resolves the run's context and the node
  // model from it. Throws std::runtime_error when the graph lacks training or validation nodes,
  // std::invalid_argument for a model flag the node model does not read. `config` outlives this.
  explicit NodeTask(const TrainingConfig& config);

  const RunContext& context() const override { return context_; }
  void open(RunDirectory& run) override;
  void plan() override;
  TrainingTask& training() override;
  void finish(StageResult& trained) override;

  // The stage's report once finish() ran.
  NodeStageResult result(const StageResult& trained) const;

 private:
  TrainingTask full_batch_task();
  TrainingTask sampled_task();
  ValidationResult validate();
  std::optional<TfidfBaselineResult> fit_baseline();

  const TrainingConfig& config_;
  store::NodeGraphStore store_;
  RunContext context_;
  models::NodeModelConfig model_config_;
  std::vector<std::uint32_t> train_nodes_;
  std::vector<std::uint32_t> validation_nodes_;
  at::Tensor validation_ids_;  // the same, int64 on the host
  std::vector<std::string> warnings_;
  RunDirectory* run_ = nullptr;  // the driver's, from open()
  NodeStagePlan plan_;
  std::optional<NodeInference> inference_;  // from plan()
  models::NodeModel model_;                 // built in training(), after the probes
  TrainingTask training_;                   // from training()
  std::optional<TfidfBaselineResult> baseline_;
  std::map<std::string, eval::ClassMetrics> evaluation_;
};

}  // namespace headroom::train
