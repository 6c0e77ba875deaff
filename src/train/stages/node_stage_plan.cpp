#include "headroom/train/stages/node_stage_plan.hpp"

#include "headroom/train/batches/batch_sizing.hpp"

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
  return plan_node_full_batch(store, node_model_config(config.model, store),
                              probe_options(config, context), config.run.seed);
}

}  // namespace headroom::train
