// An inference pass (validation, evaluation, curriculum difficulty scoring) shared by the ranks
// of a data-parallel run. The graphs are cut into the batches one process would use; batch i runs
// on rank i mod N; what each batch contributes comes back to every rank in batch order. Folding
// the contributions in that order computes exactly what one process computes: the same batches,
// the same arithmetic, the same order. In one process it is the plain pass.
// Not thread-safe: call from the training thread (it runs collectives).
#pragma once

#include <c10/core/Device.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "headroom/loader/graph_batch.hpp"
#include "headroom/store/graph_store.hpp"
#include "headroom/train/batches/inference_batching.hpp"

namespace headroom::train {

// What one batch contributes (per-graph scores, weighted loss sums, labels), as numbers: doubles
// hold every float and every integer below 2^53 exactly.
using BatchContribution = std::vector<double>;

// Runs `contribute` on this rank's batches of `graph_ids` (chunks of `batch_size`, on `device`;
// a batch that runs out of memory is redone in halves, each contributing separately, as in
// for_each_batch) and returns every batch's contributions on every rank, in batch order.
std::vector<BatchContribution> contributions_across_ranks(
    const store::GraphStore& store, std::span<const std::uint32_t> graph_ids,
    std::int64_t batch_size, const c10::Device& device,
    const std::function<BatchContribution(const loader::GraphBatch&)>& contribute);
// The same with the batches `batching` cuts (every rank must hold the same batching: planned by
// plan_inference_batching, which agrees on rank 0's fit).
std::vector<BatchContribution> contributions_across_ranks(
    const store::GraphStore& store, std::span<const std::uint32_t> graph_ids,
    const InferenceBatching& batching, const c10::Device& device,
    const std::function<BatchContribution(const loader::GraphBatch&)>& contribute);
// The same with batches planned within `limits` on `contribute` itself (plan_inference_batching;
// `contribute` must change nothing, as its results while probing are discarded) when `plan` is
// empty, and kept in `plan` for the next call: a pass repeated over the same graphs every epoch
// (validation) is probed once and cut alike every time, so its sums fold alike.
std::vector<BatchContribution> contributions_across_ranks(
    const store::GraphStore& store, std::span<const std::uint32_t> graph_ids,
    const InferenceLimits& limits, std::optional<InferenceBatching>& plan,
    const c10::Device& device,
    const std::function<BatchContribution(const loader::GraphBatch&)>& contribute);

}  // namespace headroom::train
