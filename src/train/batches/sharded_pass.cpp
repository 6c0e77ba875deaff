#include "headroom/train/batches/sharded_pass.hpp"

#include <torch/torch.h>

#include <fmt/format.h>
#include <stdexcept>

#include "headroom/loader/epoch_order.hpp"
#include "headroom/train/batches/inference_batches.hpp"
#include "headroom/train/context/collectives.hpp"

namespace headroom::train {
namespace {

// This rank's contributions as one flat record list: batch index, contribution count, then each
// contribution as its length and values.
std::vector<double> encode(const std::vector<std::size_t>& batch_indices,
                           const std::vector<std::vector<BatchContribution>>& contributions) {
  std::vector<double> flat;
  for (std::size_t i = 0; i < batch_indices.size(); ++i) {
    flat.push_back(static_cast<double>(batch_indices[i]));
    flat.push_back(static_cast<double>(contributions[i].size()));
    for (const auto& contribution : contributions[i]) {
      flat.push_back(static_cast<double>(contribution.size()));
      flat.insert(flat.end(), contribution.begin(), contribution.end());
    }
  }
  return flat;
}

std::vector<BatchContribution> decode_in_batch_order(const at::Tensor& gathered,
                                                     std::size_t batches) {
  const auto host = gathered.to(torch::kCPU).contiguous();
  const double* values = host.data_ptr<double>();
  const auto size = static_cast<std::size_t>(host.numel());
  std::vector<std::vector<BatchContribution>> by_batch(batches);
  std::size_t at = 0;
  const auto next = [&] {
    if (at >= size) throw std::logic_error("contributions_across_ranks: truncated records");
    return values[at++];
  };
  while (at < size) {
    const auto batch = static_cast<std::size_t>(next());
    const auto count = static_cast<std::size_t>(next());
    if (batch >= batches) throw std::logic_error("contributions_across_ranks: bad batch index");
    for (std::size_t c = 0; c < count; ++c) {
      const auto length = static_cast<std::size_t>(next());
      if (at + length > size) throw std::logic_error("contributions_across_ranks: truncated");
      by_batch[batch].emplace_back(values + at, values + at + length);
      at += length;
    }
  }
  std::vector<BatchContribution> ordered;
  for (auto& batch : by_batch)
    for (auto& contribution : batch) ordered.push_back(std::move(contribution));
  return ordered;
}

}  // namespace

std::vector<BatchContribution> contributions_across_ranks(
    const store::GraphStore& store, std::span<const std::uint32_t> graph_ids,
    std::int64_t batch_size, const c10::Device& device,
    const std::function<BatchContribution(const loader::GraphBatch&)>& contribute) {
  return contributions_across_ranks(store, graph_ids, InferenceBatching::fixed(batch_size), device,
                                    contribute);
}

std::vector<BatchContribution> contributions_across_ranks(
    const store::GraphStore& store, std::span<const std::uint32_t> graph_ids,
    const InferenceBatching& batching, const c10::Device& device,
    const std::function<BatchContribution(const loader::GraphBatch&)>& contribute) {
  auto& ranks = collectives();
  const auto batches = batching.cut(store, graph_ids);
  std::vector<std::size_t> mine;
  std::vector<std::vector<std::uint32_t>> my_batches;
  for (std::size_t i = static_cast<std::size_t>(ranks.rank()); i < batches.size();
       i += static_cast<std::size_t>(ranks.world_size())) {
    mine.push_back(i);
    my_batches.push_back(batches[i]);
  }
  // for_each_batch runs this rank's batches in order, each whole unless it runs out of memory
  // (then in halves, in order); a contribution belongs to the batch its first graph is in.
  std::vector<std::vector<BatchContribution>> contributions(mine.size());
  std::size_t current = 0;
  std::size_t graphs_left = mine.empty() ? 0 : batches[mine[0]].size();
  for_each_batch(store, std::move(my_batches), device, [&](const loader::GraphBatch& batch) {
    auto contribution = contribute(batch);
    contributions[current].push_back(std::move(contribution));
    graphs_left -= static_cast<std::size_t>(batch.num_graphs);
    if (graphs_left == 0 && current + 1 < mine.size())
      graphs_left = batches[mine[++current]].size();
  });
  const auto flat = encode(mine, contributions);
  const auto local = torch::from_blob(const_cast<double*>(flat.data()),
                                      {static_cast<std::int64_t>(flat.size())}, torch::kDouble)
                         .clone();
  return decode_in_batch_order(ranks.all_gather_concat(local), batches.size());
}

std::vector<BatchContribution> contributions_across_ranks(
    const store::GraphStore& store, std::span<const std::uint32_t> graph_ids,
    const InferenceLimits& limits, std::optional<InferenceBatching>& plan,
    const c10::Device& device,
    const std::function<BatchContribution(const loader::GraphBatch&)>& contribute) {
  if (!plan)
    plan =
        plan_inference_batching(store, graph_ids, limits, device,
                                [&](const loader::GraphBatch& batch) { (void)contribute(batch); });
  return contributions_across_ranks(store, graph_ids, *plan, device, contribute);
}

}  // namespace headroom::train
