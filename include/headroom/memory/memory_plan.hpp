// The breakdown `headroom plan` prints: where a training step's memory goes (parameters,
// gradients, Adam state, the fixed rest, activations and inputs per node and edge), how much of
// the budget is left for batch data, and the batch budget that follows, for this budget and for
// common device sizes. Built from a measured peak fit (peak_model.hpp) plus what is known
// analytically (parameter count, input layout). Plain data; no torch.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "headroom/memory/peak_model.hpp"

namespace headroom::memory {

struct GraphSize {
  double nodes = 0;
  double edges = 0;
};

struct DeviceRow {
  double device_bytes = 0;
  double data_bytes = 0;           // left for batch data at the target utilization
  std::int64_t median_graphs = 0;  // graphs of median size per batch
  std::int64_t p95_graphs = 0;     // graphs of 95th-percentile size per batch
};

// What a distilled student's teacher costs, by how it is held
// (train/caches/teacher_output_cache.hpp).
struct TeacherCost {
  std::string mode;             // "none" (no distillation), "cache", "in memory", "offloaded"
  std::int64_t parameters = 0;  // the teacher's parameter count
  double device_bytes = 0;      // resident on the training device for the whole step
  double host_bytes = 0;        // in host memory: the memory-mapped cache, or the pinned weights
};

struct MemoryPlan {
  std::string model;  // e.g. "teacher GAT"
  std::int64_t parameters = 0;
  double parameter_bytes = 0;
  double gradient_bytes = 0;
  double optimizer_bytes = 0;    // Adam: two moments per parameter
  double fixed_other_bytes = 0;  // the fit's constant minus the three above (framework, scratch)
  TeacherCost teacher;           // its device_bytes come out of the budget before the batch data
  double activation_bytes_per_node = 0;  // the fit's per-node slope minus the node inputs
  double activation_bytes_per_edge = 0;
  double activation_bytes_per_graph = 0;
  double input_bytes_per_node = 0;   // features (float32) + membership (int64)
  double input_bytes_per_edge = 0;   // edge index (2 x int64)
  double input_bytes_per_graph = 0;  // label and id (int64 each)
  double budget_bytes = 0;
  double target_utilization = 0.9;
  double reserve_bytes = 0;  // (1 - target utilization) x budget: fragmentation and error margin
  double data_bytes = 0;     // budget x utilization - fixed - teacher device bytes
  GraphSize median_graph;
  GraphSize p95_graph;
  std::int64_t median_graphs = 0;  // batch budget in graphs of median size
  std::int64_t p95_graphs = 0;
  std::vector<DeviceRow> devices;  // 8, 16, 24, 40, 80 GB
  PeakFit fit;
};

// `parameters`: the model's parameter count (float32). `node_features`: floats per node.
MemoryPlan make_memory_plan(const PeakFit& fit, std::string model, std::int64_t parameters,
                            std::int64_t node_features, const GraphSize& median_graph,
                            const GraphSize& p95_graph, double budget_bytes,
                            double target_utilization, const TeacherCost& teacher = {"none"});

// The human-readable breakdown.
std::string render_memory_plan(const MemoryPlan& plan);
void to_json(nlohmann::json& json, const MemoryPlan& plan);

}  // namespace headroom::memory
