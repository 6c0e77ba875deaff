#include "headroom/memory/host_memory_plan.hpp"

#include <fmt/format.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "headroom/util/byte_size.hpp"

namespace headroom::memory {
namespace {

std::string bytes(double value) { return util::format_byte_size(value); }

double queue_bytes(std::int64_t depth, double batch_bytes) {
  return static_cast<double>(depth + 1) * batch_bytes;
}

void add(HostMemoryPlan& plan, std::string name, double value, bool counted, std::string note) {
  plan.items.push_back({std::move(name), value, counted, std::move(note)});
}

double counted_sum(const HostMemoryPlan& plan) {
  double sum = 0;
  for (const auto& item : plan.items)
    if (item.counted) sum += item.bytes;
  return sum;
}

// CPU: the tensor budget holds the step and the queued batches; the host budget holds the
// baseline, the pinned teacher and the tensor budget.
// What a derived CPU tensor budget leaves for memory outside the tensors that grows during a run
// after the baseline was measured (glibc's heaps, OpenMP's threads, autograd's bookkeeping, the
// page cache a cgroup charges): 5% of the host budget, at least 64 MiB and at most 512 MiB.
// Measured: a run held to a cgroup of 45% of its unconstrained peak (RealHostLimit.*) reached the
// limit to within 0.1 MB with 5% (the host budget's own margin) and nothing more, and was killed
// by the kernel under load once the CUDA library no longer padded the baseline.
double outside_tensors_reserve(double budget_bytes) {
  constexpr double kMiB = 1024.0 * 1024.0;
  return std::clamp(0.05 * budget_bytes, 64 * kMiB, 512 * kMiB);
}

void plan_cpu(const HostPlanInputs& in, HostMemoryPlan& plan) {
  const bool derived = in.cpu_tensor_budget <= 0;
  const double reserve = derived ? outside_tensors_reserve(in.budget_bytes) : 0.0;
  if (derived)
    add(plan, "reserve outside tensors", reserve, true,
        "for memory that grows outside the tensors during the run");
  const double tensors =
      derived ? in.budget_bytes - in.baseline_bytes - in.teacher_pinned_bytes - reserve
              : in.cpu_tensor_budget;
  plan.cpu_tensor_budget = std::max(0.0, tensors);
  add(plan, "CPU tensors", plan.cpu_tensor_budget, true,
      derived ? "the host budget less the items above (--memory-budget not given)"
              : "--memory-budget");
  if (derived && tensors > 0)
    plan.adaptations.push_back(
        fmt::format("CPU tensor budget {}: the host budget {} less the baseline {}{} and the "
                    "reserve outside tensors {}",
                    bytes(tensors), bytes(in.budget_bytes), bytes(in.baseline_bytes),
                    in.teacher_pinned_bytes > 0 ? ", the pinned teacher" : "", bytes(reserve)));
  // The batch planner fills target_utilization of the tensor budget with the step; the queue
  // gets the rest.
  const double free_share = (1.0 - in.target_utilization) * plan.cpu_tensor_budget;
  while (plan.prefetch_depth > 1 &&
         queue_bytes(plan.prefetch_depth, in.train_batch_bytes) > free_share)
    --plan.prefetch_depth;
  if (plan.prefetch_depth < in.prefetch_depth)
    plan.adaptations.push_back(fmt::format(
        "prefetch depth {} -> {}: {} + 1 batches of up to {} each must fit in the {} the batch "
        "planner leaves free in the CPU tensor budget",
        in.prefetch_depth, plan.prefetch_depth, plan.prefetch_depth, bytes(in.train_batch_bytes),
        bytes(free_share)));
  // Inference (evaluation, scoring) queues no training batches.
  if (in.train_batch_bytes > 0)
    add(plan, fmt::format("prefetch queue ({} + 1 batches)", plan.prefetch_depth),
        queue_bytes(plan.prefetch_depth, in.train_batch_bytes), false,
        "inside the CPU tensor budget");
  add(plan, fmt::format("validation queue ({} + 1 batches)", in.eval_prefetch_depth),
      queue_bytes(in.eval_prefetch_depth, in.eval_batch_bytes), false,
      "inside the CPU tensor budget");
}

// CUDA: batches are collated into pinned host memory, outside any tensor budget; the prefetch
// depth is what can give.
void plan_cuda(const HostPlanInputs& in, HostMemoryPlan& plan) {
  const auto fixed = counted_sum(plan) + queue_bytes(in.eval_prefetch_depth, in.eval_batch_bytes);
  while (plan.prefetch_depth > 1 &&
         fixed + queue_bytes(plan.prefetch_depth, in.train_batch_bytes) > in.budget_bytes)
    --plan.prefetch_depth;
  if (plan.prefetch_depth < in.prefetch_depth)
    plan.adaptations.push_back(fmt::format(
        "prefetch depth {} -> {}: the pinned batch queue must fit in the host budget {}",
        in.prefetch_depth, plan.prefetch_depth, bytes(in.budget_bytes)));
  if (in.train_batch_bytes > 0)
    add(plan, fmt::format("prefetch queue ({} + 1 batches)", plan.prefetch_depth),
        queue_bytes(plan.prefetch_depth, in.train_batch_bytes), true, "pinned");
  add(plan, fmt::format("validation queue ({} + 1 batches)", in.eval_prefetch_depth),
      queue_bytes(in.eval_prefetch_depth, in.eval_batch_bytes), true, "pinned");
}

}  // namespace

double collated_batch_bytes(double nodes, double edges, double graphs, std::int64_t node_features,
                            std::int64_t edge_features) {
  const double per_node = 4.0 * static_cast<double>(node_features) + 8.0;
  const double per_edge = 16.0 + 4.0 * static_cast<double>(edge_features);
  return nodes * per_node + edges * per_edge + graphs * 16.0;
}

HostMemoryPlan plan_host_memory(const HostPlanInputs& in) {
  HostMemoryPlan plan;
  plan.budget_bytes = in.budget_bytes;
  plan.budget_source = in.budget_source;
  plan.prefetch_depth = in.prefetch_depth;
  add(plan, "baseline", in.baseline_bytes, true, "measured: anonymous RSS outside CPU tensors");
  if (in.teacher_pinned_bytes > 0)
    add(plan, "teacher weights", in.teacher_pinned_bytes, true, "pinned (offloaded teacher)");
  if (in.cpu_device)
    plan_cpu(in, plan);
  else
    plan_cuda(in, plan);
  add(plan, "store arrays", in.store_bytes, false, "memory-mapped: page cache, reclaimable");
  if (in.teacher_cache_bytes > 0)
    add(plan, "teacher output cache", in.teacher_cache_bytes, false,
        "memory-mapped: page cache, reclaimable");
  plan.required_bytes = counted_sum(plan);
  plan.fits =
      plan.required_bytes <= in.budget_bytes && (!in.cpu_device || plan.cpu_tensor_budget > 0);
  return plan;
}

std::string host_plan_failure(const HostMemoryPlan& plan) {
  std::string items;
  for (const auto& item : plan.items)
    if (item.counted)
      items += fmt::format("{}{} {}", items.empty() ? "" : ", ", item.name, bytes(item.bytes));
  return fmt::format(
      "host memory: the run needs {} ({}) but the host budget is {} ({}); lower --memory-budget "
      "(CPU), --batch-size or --eval-batch-size, or run where the limit is higher",
      bytes(plan.required_bytes), items, bytes(plan.budget_bytes), plan.budget_source);
}

std::string render_host_memory_plan(const HostMemoryPlan& plan) {
  std::string out =
      fmt::format("host memory: budget {} ({})\n", bytes(plan.budget_bytes), plan.budget_source);
  for (const auto& item : plan.items)
    out += fmt::format("  {:<32} {:>12}  {}{}\n", item.name, bytes(item.bytes), item.note,
                       item.counted ? "" : " (not counted)");
  out += fmt::format("  {:<32} {:>12}  {:.1f}% of the host budget{}\n", "total",
                     bytes(plan.required_bytes), 100.0 * plan.required_bytes / plan.budget_bytes,
                     plan.fits ? "" : "; does not fit");
  for (const auto& adaptation : plan.adaptations) out += "  adapted: " + adaptation + "\n";
  return out;
}

void to_json(nlohmann::json& json, const HostMemoryPlan& plan) {
  json = {{"budget_bytes", plan.budget_bytes},
          {"budget_source", plan.budget_source},
          {"required_bytes", plan.required_bytes},
          {"cpu_tensor_budget", plan.cpu_tensor_budget},
          {"prefetch_depth", plan.prefetch_depth},
          {"adaptations", plan.adaptations},
          {"fits", plan.fits},
          {"items", nlohmann::json::array()}};
  for (const auto& item : plan.items)
    json["items"].push_back({{"name", item.name},
                             {"bytes", item.bytes},
                             {"counted", item.counted},
                             {"note", item.note}});
}

}  // namespace headroom::memory
