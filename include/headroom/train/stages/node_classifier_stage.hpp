// Stage `node`: classifies the nodes of one big graph (a node-graph store: TextGCN's documents and
// words) — the node task. A node model (models/node_model.hpp: TextGCN's GCN, or a GAT; identity
// features as the first layer's weight rows, no per-edge messages) trains as a NodeTask
// (node_task.hpp) through the task driver (task/task_driver.hpp: budgets applied before the first
// probe) and the shared epoch loop: the batch is the training nodes (step/node_task_batch.hpp), the
// loss reads their rows of the whole graph's output, validation scores the validation nodes;
// resume, the OOM guard, checkpoints, metrics and tracking are the loop's. When the full batch's
// planned step is over the memory budget, each step trains on the subgraph of a random part of the
// nodes instead (step/node_subgraph_batch.hpp), as many parts per epoch as the planner finds fit.
// When it has trained, the best checkpoint is evaluated on every split into the run directory's
// evaluation.json, beside the classical baseline's scores on a text corpus (TF-IDF + logistic
// regression) and warnings where a class has too few nodes for its numbers to mean much.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "headroom/eval/class_metrics.hpp"
#include "headroom/train/config/training_config.hpp"
#include "headroom/train/loop/stage_result.hpp"
#include "headroom/train/loop/training_loop.hpp"
#include "headroom/train/stages/node_task.hpp"
#include "headroom/train/stages/stage_definition.hpp"
#include "headroom/train/stages/tfidf_baseline.hpp"

namespace headroom::train {

// The node task's TextGCN defaults where the configuration left the graph stages' defaults:
// model gcn (the family `given.preset` left), hidden 200, dropout 0.5, learning rate 0.02, no
// weight decay or clipping, 200 epochs, patience 10. `given` says which flags the user set (they
// are kept).
struct NodeDefaultsGiven {
  bool preset = false;  // the model family (gcn unless given)
  bool max_epochs = false;
  bool weight_decay = false;
  bool gradient_clip = false;
};
void apply_node_task_defaults(TrainingConfig& config, const NodeDefaultsGiven& given);

// Stage `node`. No command of its own: `headroom run CORPUS` runs it.
extern const StageTraits kNodeStage;
extern const StageDefinition kNodeStageDefinition;

// Trains (or resumes, or recognises as complete) and evaluates. config.run.store is a node-graph
// store; config.stage is kNodeStage.
NodeStageResult run_node_classifier_stage(const TrainingConfig& config,
                                          const LoopHooks& hooks = {});

}  // namespace headroom::train
