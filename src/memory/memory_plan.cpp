#include "headroom/memory/memory_plan.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "headroom/util/byte_size.hpp"

namespace headroom::memory {
namespace {

std::int64_t graphs_that_fit(const PeakFit& fit, double data_bytes, const GraphSize& graph) {
  const double per_graph =
      fit.bytes_per_node * graph.nodes + fit.bytes_per_edge * graph.edges + fit.bytes_per_graph;
  if (per_graph <= 0 || data_bytes <= 0) return 0;
  return static_cast<std::int64_t>(std::floor(data_bytes / per_graph));
}

}  // namespace

MemoryPlan make_memory_plan(const PeakFit& fit, std::string model, std::int64_t parameters,
                            std::int64_t node_features, const GraphSize& median_graph,
                            const GraphSize& p95_graph, double budget_bytes,
                            double target_utilization, const TeacherCost& teacher) {
  MemoryPlan plan;
  plan.model = std::move(model);
  plan.fit = fit;
  plan.parameters = parameters;
  plan.parameter_bytes = 4.0 * static_cast<double>(parameters);
  plan.gradient_bytes = plan.parameter_bytes;
  plan.optimizer_bytes = 2.0 * plan.parameter_bytes;
  plan.fixed_other_bytes =
      fit.fixed_bytes - plan.parameter_bytes - plan.gradient_bytes - plan.optimizer_bytes;
  plan.input_bytes_per_node = 4.0 * static_cast<double>(node_features) + 8.0;
  plan.input_bytes_per_edge = 16.0;
  plan.input_bytes_per_graph = 16.0;
  // A term the fit left out (0: its count grew with another's in the probes) has its inputs'
  // bytes inside the other terms; the activations are what the fit holds beyond the inputs, and
  // never negative (a fit that left out edges once showed -16 B / edge of activations).
  plan.activation_bytes_per_node = std::max(0.0, fit.bytes_per_node - plan.input_bytes_per_node);
  plan.activation_bytes_per_edge = std::max(0.0, fit.bytes_per_edge - plan.input_bytes_per_edge);
  plan.activation_bytes_per_graph = std::max(0.0, fit.bytes_per_graph - plan.input_bytes_per_graph);
  plan.budget_bytes = budget_bytes;
  plan.target_utilization = target_utilization;
  plan.reserve_bytes = (1.0 - target_utilization) * budget_bytes;
  plan.teacher = teacher;
  plan.data_bytes = budget_bytes * target_utilization - fit.fixed_bytes - teacher.device_bytes;
  plan.median_graph = median_graph;
  plan.p95_graph = p95_graph;
  plan.median_graphs = graphs_that_fit(fit, plan.data_bytes, median_graph);
  plan.p95_graphs = graphs_that_fit(fit, plan.data_bytes, p95_graph);
  for (const double gigabytes : {8.0, 16.0, 24.0, 40.0, 80.0}) {
    DeviceRow row;
    row.device_bytes = gigabytes * 1e9;
    row.data_bytes = row.device_bytes * target_utilization - fit.fixed_bytes - teacher.device_bytes;
    row.median_graphs = graphs_that_fit(fit, row.data_bytes, median_graph);
    row.p95_graphs = graphs_that_fit(fit, row.data_bytes, p95_graph);
    plan.devices.push_back(row);
  }
  return plan;
}

std::string render_memory_plan(const MemoryPlan& p) {
  const auto size = [](double bytes) { return util::format_byte_size(bytes); };
  std::string out =
      p.fit.samples == 0
          ? fmt::format("memory plan: {} (analytic: nothing was run)\n", p.model)
          : fmt::format("memory plan: {} (peak fit on {} probe batches, max error {:.2f}%)\n",
                        p.model, p.fit.samples, 100.0 * p.fit.max_relative_error);
  out += fmt::format("  {:<34} {:>12}   ({} parameters, float32)\n", "parameters",
                     size(p.parameter_bytes), p.parameters);
  out += fmt::format("  {:<34} {:>12}\n", "gradients", size(p.gradient_bytes));
  out += fmt::format("  {:<34} {:>12}   (Adam: two moments)\n", "optimizer state",
                     size(p.optimizer_bytes));
  out += fmt::format("  {:<34} {:>12}   (framework, scratch: the fit's constant minus the above)\n",
                     "other fixed", size(p.fixed_other_bytes));
  if (p.teacher.mode == "cache")
    out += fmt::format("  {:<34} {:>12}   (outputs cached: {} memory-mapped on the host)\n",
                       "teacher", size(p.teacher.device_bytes), size(p.teacher.host_bytes));
  else if (p.teacher.mode == "offloaded")
    out += fmt::format(
        "  {:<34} {:>12}   ({} parameters kept in pinned host memory, copied in for its "
        "forward)\n",
        "teacher", size(p.teacher.device_bytes), p.teacher.parameters);
  else if (p.teacher.mode == "in memory")
    out += fmt::format(
        "  {:<34} {:>12}   ({} parameters on the device; its forward activations are not in the "
        "fit)\n",
        "teacher", size(p.teacher.device_bytes), p.teacher.parameters);
  out += fmt::format("  {:<34} {:>9.0f} B / node  {:>7.0f} B / edge  {:>7.0f} B / graph\n",
                     "activations", p.activation_bytes_per_node, p.activation_bytes_per_edge,
                     p.activation_bytes_per_graph);
  out +=
      fmt::format("  {:<34} {:>9.0f} B / node  {:>7.0f} B / edge  {:>7.0f} B / graph\n", "inputs",
                  p.input_bytes_per_node, p.input_bytes_per_edge, p.input_bytes_per_graph);
  std::vector<std::string> left_out;
  if (p.fit.bytes_per_node == 0) left_out.emplace_back("nodes");
  if (p.fit.bytes_per_edge == 0) left_out.emplace_back("edges");
  if (p.fit.bytes_per_graph == 0) left_out.emplace_back("graphs");
  if (p.fit.samples > 0 && !left_out.empty())
    out += fmt::format(
        "  (the fit has no term for {}: they grew with the other counts in the probes, whose "
        "terms hold their bytes)\n",
        fmt::join(left_out, " or "));
  out += fmt::format("  {:<34} {:>12}\n", "budget", size(p.budget_bytes));
  out += fmt::format("  {:<34} {:>12}   ({:.0f}% of the budget)\n", "fragmentation reserve",
                     size(p.reserve_bytes), 100.0 * (1.0 - p.target_utilization));
  out += fmt::format("  {:<34} {:>12}\n", "left for batch data", size(std::max(0.0, p.data_bytes)));
  out += fmt::format(
      "  batch budget: {} graphs of median size ({:.0f} nodes, {:.0f} edges), {} of p95 size "
      "({:.0f} nodes, {:.0f} edges)\n",
      p.median_graphs, p.median_graph.nodes, p.median_graph.edges, p.p95_graphs, p.p95_graph.nodes,
      p.p95_graph.edges);
  out += "\n  device    left for data   graphs (median)   graphs (p95)\n";
  for (const auto& row : p.devices)
    out += fmt::format("  {:>4.0f} GB  {:>13}   {:>15}   {:>12}\n", row.device_bytes / 1e9,
                       size(std::max(0.0, row.data_bytes)), row.median_graphs, row.p95_graphs);
  return out;
}

void to_json(nlohmann::json& json, const MemoryPlan& p) {
  nlohmann::json devices = nlohmann::json::array();
  for (const auto& row : p.devices)
    devices.push_back({{"device_bytes", row.device_bytes},
                       {"data_bytes", row.data_bytes},
                       {"median_graphs", row.median_graphs},
                       {"p95_graphs", row.p95_graphs}});
  json = {{"model", p.model},
          {"parameters", p.parameters},
          {"parameter_bytes", p.parameter_bytes},
          {"gradient_bytes", p.gradient_bytes},
          {"optimizer_bytes", p.optimizer_bytes},
          {"fixed_other_bytes", p.fixed_other_bytes},
          {"teacher",
           {{"mode", p.teacher.mode},
            {"parameters", p.teacher.parameters},
            {"device_bytes", p.teacher.device_bytes},
            {"host_bytes", p.teacher.host_bytes}}},
          {"activation_bytes_per_node", p.activation_bytes_per_node},
          {"activation_bytes_per_edge", p.activation_bytes_per_edge},
          {"activation_bytes_per_graph", p.activation_bytes_per_graph},
          {"input_bytes_per_node", p.input_bytes_per_node},
          {"input_bytes_per_edge", p.input_bytes_per_edge},
          {"budget_bytes", p.budget_bytes},
          {"target_utilization", p.target_utilization},
          {"reserve_bytes", p.reserve_bytes},
          {"data_bytes", p.data_bytes},
          {"median_graphs", p.median_graphs},
          {"p95_graphs", p.p95_graphs},
          {"devices", devices},
          {"fit", p.fit}};
}

}  // namespace headroom::memory
