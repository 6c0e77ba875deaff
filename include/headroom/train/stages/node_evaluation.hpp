// The node task's scores: a split's loss and class metrics from its rows of the model's output,
// the best checkpoint's evaluation on every split (evaluation.json), what a run on a node graph
// must agree with to resume, and the warnings where a class has too few nodes for its numbers to
// mean much. Stateless functions; not thread-safe only as far as torch's own state is not.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "headroom/eval/class_metrics.hpp"
#include "headroom/models/node_model.hpp"
#include "headroom/store/node_graph_store.hpp"
#include "headroom/train/config/training_config.hpp"
#include "headroom/train/context/run_directory.hpp"
#include "headroom/train/stages/node_inference.hpp"
#include "headroom/train/stages/tfidf_baseline.hpp"

namespace headroom::train {

// What a run on this graph must agree with to resume: the graph's content (its arrays'
// checksums) and how its splits were drawn.
nlohmann::json node_graph_identity(const store::NodeGraphMetadata& metadata);

// The checkpoints' kind: node_gcn, node_gat, node_sgc, ... (each trains in its own run
// directory, named so).
std::string node_checkpoint_kind(const models::NodeModelConfig& config);

// Classes with no training node or few test nodes, named (eval/class_coverage.hpp).
std::vector<std::string> node_class_coverage_warnings(const store::NodeGraphStore& store);

struct NodeScore {
  double loss = 0;  // mean cross-entropy over the nodes
  eval::ClassMetrics metrics;
};

// The score of `logits` on `nodes` of `store`: `logits` holds every node's rows, or with
// `rows_only` only those of `nodes`, in their order. Labels are read on `device`, where the
// logits are.
NodeScore score_nodes(const store::NodeGraphStore& store, const c10::Device& device,
                      std::int64_t classes, const at::Tensor& logits,
                      const std::vector<std::uint32_t>& nodes, bool rows_only = false);

// What evaluation.json records beside the splits' scores.
struct NodeEvaluationRecord {
  nlohmann::json training;  // the memory plan (node_plan_json)
  std::vector<std::string> warnings;
  std::optional<TfidfBaselineResult> baseline;
};

// The best checkpoint of `run` (checked against the store's identity first, then loaded as
// `model` on `device`) on every split with nodes, through `inference`; written atomically to the
// run directory's evaluation.json by the writing process, with `record`, and the test split and
// the baseline logged. Returns the metrics by split name ("train", "validation", "test").
std::map<std::string, eval::ClassMetrics> evaluate_best_node_model(
    const TrainingConfig& config, const store::NodeGraphStore& store,
    const models::NodeModelConfig& model, const c10::Device& device, NodeInference& inference,
    RunDirectory& run, const NodeEvaluationRecord& record);

}  // namespace headroom::train
