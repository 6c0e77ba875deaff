#include "headroom/train/stages/node_stage_plan.hpp"

namespace headroom::train {

models::NodeGcnConfig node_model_config(const ModelOptions& model,
                                        const store::NodeGraphStore& store) {
  models::NodeGcnConfig config;
  config.num_nodes = static_cast<std::int64_t>(store.num_nodes());
  config.num_classes = static_cast<std::int64_t>(store.metadata().classes.size());
  config.hidden = model.hidden.value_or(200);
  config.dropout = model.dropout.value_or(0.5);
  config.validate();
  return config;
}

NodeFullBatchPlan plan_node_stage(const TrainingConfig& config, const RunContext& context,
                                  const store::NodeGraphStore& store) {
  PeakProbeOptions options;
  options.device = context.device;
  options.precision = context.precision;
  options.learning_rate = effective_learning_rate(config);
  options.weight_decay = config.optimisation.weight_decay;
  options.gradient_clip = config.optimisation.gradient_clip;
  return plan_node_full_batch(store, node_model_config(config.model, store), options,
                              config.run.seed);
}

}  // namespace headroom::train
