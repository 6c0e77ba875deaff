#include "headroom/memory/rank_batches.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <iterator>
#include <stdexcept>

namespace headroom::memory {
namespace {

// The last batch with the most graphs: cutting it keeps the plan's order, and for a plan of
// equal batches it is the one nearest the end.
std::size_t largest_batch(const std::vector<std::vector<std::uint32_t>>& batches) {
  std::size_t largest = 0;
  for (std::size_t i = 0; i < batches.size(); ++i)
    if (batches[i].size() >= batches[largest].size()) largest = i;
  return largest;
}

void cut_in_halves(std::vector<std::vector<std::uint32_t>>& batches, std::size_t index) {
  auto& whole = batches[index];
  const auto half = static_cast<std::ptrdiff_t>((whole.size() + 1) / 2);
  std::vector<std::uint32_t> second(whole.begin() + half, whole.end());
  whole.resize(static_cast<std::size_t>(half));
  batches.insert(batches.begin() + static_cast<std::ptrdiff_t>(index) + 1, std::move(second));
}

}  // namespace

std::vector<std::vector<std::uint32_t>> batches_of_rank(
    std::vector<std::vector<std::uint32_t>> batches, int rank, int world_size) {
  if (world_size < 1 || rank < 0 || rank >= world_size)
    throw std::invalid_argument(
        fmt::format("batches_of_rank: rank {} is outside 0..{}", rank, world_size - 1));
  std::size_t graphs = 0;
  for (const auto& batch : batches) graphs += batch.size();
  const auto ranks = static_cast<std::size_t>(world_size);
  if (graphs > 0 && graphs < ranks)
    throw std::invalid_argument(
        fmt::format("the epoch has {} training graphs for {} ranks: every rank needs at least one",
                    graphs, world_size));
  std::erase_if(batches, [](const auto& batch) { return batch.empty(); });
  // Each cut adds one batch; a batch of two or more graphs exists while batches < graphs.
  while (batches.size() % ranks != 0) cut_in_halves(batches, largest_batch(batches));
  std::vector<std::vector<std::uint32_t>> mine;
  mine.reserve(batches.size() / ranks);
  for (std::size_t i = static_cast<std::size_t>(rank); i < batches.size(); i += ranks)
    mine.push_back(std::move(batches[i]));
  return mine;
}

}  // namespace headroom::memory
