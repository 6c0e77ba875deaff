#include "geometric_target.hpp"

#include <torch/torch.h>

#include <fmt/format.h>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "headroom/train/batches/inference_batches.hpp"
#include "headroom/util/printable_text.hpp"

namespace headroom::train::detail {
namespace {

void set_classes(GeometricTarget& target, const store::GraphStore& store) {
  const auto labels = store.size_index().label;
  std::vector<std::size_t> counts;
  for (const auto id : store.train_ids()) {
    if (labels[id] >= counts.size()) counts.resize(labels[id] + 1U);
    ++counts[labels[id]];
  }
  if (counts.size() < 2)
    throw std::runtime_error(
        fmt::format("stage geometric: {} has no graph target and one class in its training split; "
                    "classification needs two",
                    util::printable_path(store.path())));
  target.classes = static_cast<std::int64_t>(counts.size());
  for (std::size_t c = 1; c < counts.size(); ++c)
    if (counts[c] > counts[static_cast<std::size_t>(target.majority)])
      target.majority = static_cast<std::int64_t>(c);
}

void set_moments(GeometricTarget& target, const store::GraphStore& store) {
  const auto values = store.size_index().target;
  const auto ids = store.train_ids();
  double sum = 0;
  for (const auto id : ids) sum += values[id];
  target.mean = sum / static_cast<double>(ids.size());
  double squares = 0;
  for (const auto id : ids) squares += (values[id] - target.mean) * (values[id] - target.mean);
  const double deviation = std::sqrt(squares / static_cast<double>(ids.size()));
  target.deviation = deviation > 0 ? deviation : 1.0;  // a constant target: nothing to scale
}

// The baseline's accuracy or MAE on `ids`, from the size index (no graph is read).
double baseline_on(const store::GraphStore& store, std::span<const std::uint32_t> ids,
                   const GeometricTarget& target) {
  const auto index = store.size_index();
  double sum = 0;
  for (const auto id : ids)
    sum += target.regression ? std::abs(index.target[id] - target.mean)
                             : (index.label[id] == target.majority ? 1.0 : 0.0);
  return ids.empty() ? 0.0 : sum / static_cast<double>(ids.size());
}

}  // namespace

GeometricTarget GeometricTarget::of(const store::GraphStore& store) {
  if (store.train_ids().empty())
    throw std::runtime_error(fmt::format("stage geometric: {} has no training graphs",
                                         util::printable_path(store.path())));
  GeometricTarget target;
  target.regression = !store.metadata().target_name.empty();
  if (target.regression) {
    target.name = store.metadata().target_name;
    target.unit = store.metadata().target_unit;
    set_moments(target, store);
  } else {
    set_classes(target, store);
  }
  return target;
}

at::Tensor GeometricTarget::loss(const at::Tensor& outputs, const loader::GraphBatch& batch) const {
  if (!regression) return torch::cross_entropy_loss(outputs.to(torch::kFloat), batch.y);
  const auto standardised = (batch.target - mean) / deviation;
  return torch::l1_loss(outputs.to(torch::kFloat).squeeze(-1), standardised);
}

std::string GeometricTarget::describe() const {
  if (regression)
    return fmt::format("regressing {} ({}; training mean {:.6g}, deviation {:.6g})", name, unit,
                       mean, deviation);
  return fmt::format("classifying {} classes (training majority: class {})", classes, majority);
}

nlohmann::json GeometricTarget::to_json() const {
  if (!regression) return {{"task", task_name()}, {"classes", classes}, {"majority", majority}};
  return {{"task", task_name()},
          {"name", name},
          {"unit", unit},
          {"mean", mean},
          {"deviation", deviation}};
}

models::GeometricBatch geometric_batch(const loader::GraphBatch& batch) {
  return {batch.x, batch.pos, batch.edge_index, batch.batch, batch.num_graphs};
}

GeometricScore score_geometric(models::Sgmp& model, const store::GraphStore& store,
                               std::span<const std::uint32_t> ids, const GeometricTarget& target,
                               std::int64_t batch_size, const c10::Device& device) {
  torch::NoGradGuard no_grad;
  double loss = 0;
  double metric = 0;
  for_each_batch(store, ids, batch_size, device, [&](const loader::GraphBatch& batch) {
    const auto outputs = model->forward(geometric_batch(batch)).to(torch::kFloat);
    const auto graphs = static_cast<double>(batch.num_graphs);
    const double batch_loss = target.loss(outputs, batch).item<double>() * graphs;
    const double batch_metric =
        target.regression ? (outputs.squeeze(-1) * target.deviation + target.mean - batch.target)
                                .abs()
                                .sum()
                                .item<double>()
                          : outputs.argmax(1).eq(batch.y).sum().item<double>();
    loss += batch_loss;  // committed once both are computed (a batch redone in halves after OOM)
    metric += batch_metric;
  });
  GeometricScore score;
  score.graphs = ids.size();
  const double count = ids.empty() ? 1.0 : static_cast<double>(ids.size());
  score.loss = loss / count;
  score.metric = metric / count;
  score.baseline = baseline_on(store, ids, target);
  return score;
}

nlohmann::json score_json(const GeometricScore& score, const GeometricTarget& target) {
  nlohmann::json baseline = {{"name", target.regression ? "the training split's mean"
                                                        : "the training split's majority class"},
                             {target.metric_name(), score.baseline}};
  if (target.regression) {
    baseline["predicts"] = target.mean;
  } else {
    baseline["predicts"] = target.majority;
  }
  nlohmann::json entry = {{"graphs", score.graphs},
                          {"loss", score.loss},
                          {target.metric_name(), score.metric},
                          {"baseline", baseline}};
  if (target.regression) entry["unit"] = target.unit;
  return entry;
}

}  // namespace headroom::train::detail
