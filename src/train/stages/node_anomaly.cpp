#include "headroom/train/stages/node_anomaly.hpp"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <stdexcept>

#include "headroom/train/batches/sharded_pass.hpp"
#include "headroom/train/families/model_family.hpp"
#include "headroom/train/loop/training_loop.hpp"
#include "headroom/train/step/losses.hpp"

namespace headroom::train {
namespace {

// The identity weight of the graph score (graph_reconstruction_score's).
constexpr double kIdentityWeight = 0.1;

// Each node's error and identity class in `batch`, on the CPU.
struct NodeErrors {
  at::Tensor error;     // float64 [nodes]
  at::Tensor identity;  // int64 [nodes]
};
NodeErrors node_errors(const LoadedAutoencoder& autoencoder, const loader::GraphBatch& batch) {
  const auto evidence = autoencoder.family->evidence(*autoencoder.model, batch);
  const at::Tensor error = evidence.feature_error + kIdentityWeight * evidence.identity_error;
  return {error.to(torch::kCPU, torch::kDouble).contiguous(),
          node_id_classes(batch.x).to(torch::kCPU, torch::kLong).contiguous()};
}

// Runs `contribute` on each batch of `ids` with its node errors, without gradients and with the
// model in eval mode (sharded over the ranks like every inference pass; sharded_pass.hpp).
std::vector<BatchContribution> node_error_contributions(
    const LoadedAutoencoder& autoencoder, const store::GraphStore& store,
    std::span<const std::uint32_t> ids, const InferenceLimits& limits, const c10::Device& device,
    Precision precision,
    const std::function<BatchContribution(const NodeErrors&, const loader::GraphBatch&)>&
        contribute) {
  torch::NoGradGuard no_grad;
  autoencoder.model->eval();
  // Planned on the pass's own forward (inference_batching.hpp): the node errors of a batch.
  const auto batching =
      plan_inference_batching(store, ids, limits, device, [&](const loader::GraphBatch& batch) {
        AutocastScope autocast(precision, device);
        (void)node_errors(autoencoder, batch);
      });
  return contributions_across_ranks(store, ids, batching, device,
                                    [&](const loader::GraphBatch& batch) {
                                      AutocastScope autocast(precision, device);
                                      return contribute(node_errors(autoencoder, batch), batch);
                                    });
}

double spread_of(double squares, double count, double mean) {
  const double variance = std::max(0.0, (squares - count * mean * mean) / (count - 1));
  return std::max(std::sqrt(variance), kMinNodeErrorSpread);
}

}  // namespace

double NodeErrorNormaliser::z(std::int64_t identity, double error) const {
  const auto k = static_cast<std::size_t>(identity);
  if (identity >= 0 && k < mean.size() && spread[k] > 0) return (error - mean[k]) / spread[k];
  return (error - overall_mean) / overall_spread;
}

NodeErrorNormaliser fit_node_errors(const LoadedAutoencoder& autoencoder,
                                    const store::GraphStore& store,
                                    std::span<const std::uint32_t> normal_ids,
                                    const InferenceLimits& limits, const c10::Device& device,
                                    Precision precision) {
  // Each batch: [classes, sums[classes], squares[classes], counts[classes]].
  const auto contributions = node_error_contributions(
      autoencoder, store, normal_ids, limits, device, precision,
      [&](const NodeErrors& errors, const loader::GraphBatch&) {
        const auto& [error, identity] = errors;
        const auto classes = identity.numel() == 0 ? 0 : identity.max().item<std::int64_t>() + 1;
        BatchContribution out(1 + 3 * static_cast<std::size_t>(classes), 0.0);
        out[0] = static_cast<double>(classes);
        const auto* e = error.data_ptr<double>();
        const auto* c = identity.data_ptr<std::int64_t>();
        for (std::int64_t n = 0; n < error.numel(); ++n) {
          const auto k = static_cast<std::size_t>(std::max<std::int64_t>(c[n], 0));
          out[1 + k] += e[n];
          out[1 + static_cast<std::size_t>(classes) + k] += e[n] * e[n];
          out[1 + 2 * static_cast<std::size_t>(classes) + k] += 1;
        }
        return out;
      });
  std::size_t classes = 0;
  for (const auto& c : contributions) classes = std::max(classes, static_cast<std::size_t>(c[0]));
  std::vector<double> sums(classes), squares(classes), counts(classes);
  for (const auto& c : contributions) {
    const auto n = static_cast<std::size_t>(c[0]);
    for (std::size_t k = 0; k < n; ++k) {
      sums[k] += c[1 + k];
      squares[k] += c[1 + n + k];
      counts[k] += c[1 + 2 * n + k];
    }
  }
  double total = 0, total_squares = 0, total_count = 0;
  NodeErrorNormaliser normaliser;
  normaliser.mean.assign(classes, 0.0);
  normaliser.spread.assign(classes, 0.0);  // 0: too few nodes, the overall statistics decide
  for (std::size_t k = 0; k < classes; ++k) {
    total += sums[k];
    total_squares += squares[k];
    total_count += counts[k];
    if (counts[k] < 2) continue;
    normaliser.mean[k] = sums[k] / counts[k];
    normaliser.spread[k] = spread_of(squares[k], counts[k], normaliser.mean[k]);
  }
  if (total_count < 2)
    throw std::invalid_argument("fit_node_errors: fewer than two nodes in the normal graphs");
  normaliser.overall_mean = total / total_count;
  normaliser.overall_spread = spread_of(total_squares, total_count, normaliser.overall_mean);
  return normaliser;
}

std::vector<float> top_node_anomaly_scores(const LoadedAutoencoder& autoencoder,
                                           const NodeErrorNormaliser& normaliser,
                                           const store::GraphStore& store,
                                           std::span<const std::uint32_t> graph_ids,
                                           std::size_t top_k, const InferenceLimits& limits,
                                           const c10::Device& device, Precision precision) {
  const auto contributions = node_error_contributions(
      autoencoder, store, graph_ids, limits, device, precision,
      [&](const NodeErrors& errors, const loader::GraphBatch& batch) {
        const auto& [error, identity] = errors;
        const at::Tensor membership = batch.batch.to(torch::kCPU, torch::kLong).contiguous();
        std::vector<std::vector<double>> z_of(static_cast<std::size_t>(batch.num_graphs));
        const auto* e = error.data_ptr<double>();
        const auto* c = identity.data_ptr<std::int64_t>();
        const auto* g = membership.data_ptr<std::int64_t>();
        for (std::int64_t n = 0; n < error.numel(); ++n)
          z_of[static_cast<std::size_t>(g[n])].push_back(normaliser.z(c[n], e[n]));
        BatchContribution out;
        out.reserve(z_of.size());
        for (auto& z : z_of) {
          const auto k = std::min(top_k, z.size());
          if (k == 0) {
            out.push_back(0.0);
            continue;
          }
          std::partial_sort(z.begin(), z.begin() + static_cast<std::ptrdiff_t>(k), z.end(),
                            std::greater<>());
          double sum = 0;
          for (std::size_t i = 0; i < k; ++i) sum += z[i];
          out.push_back(sum / static_cast<double>(k));
        }
        return out;
      });
  std::vector<float> scores;
  scores.reserve(graph_ids.size());
  for (const auto& c : contributions)
    for (const double value : c) scores.push_back(static_cast<float>(value));
  return scores;
}

}  // namespace headroom::train
