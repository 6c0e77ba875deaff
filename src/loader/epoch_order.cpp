#include "headroom/loader/epoch_order.hpp"

#include "headroom/util/split_mix.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>
#include <utility>

namespace headroom::loader {
namespace {

struct NamedStream {
  OrderStream stream;
  std::string_view name;
};

constexpr std::array<NamedStream, 4> kNamedStreams = {{
    {OrderStream::kGraphBatches, "graph-batches"},
    {OrderStream::kNodeParts, "node-parts"},
    {OrderStream::kFusionSplit, "fusion-split"},
    {OrderStream::kFusionEpochs, "fusion-epochs"},
}};

// Fisher-Yates over `items` in place, from the stream's generator for (seed, epoch). Applying the
// swaps to any list gives that list in the order they apply to [0, n), which is what lets
// shuffled() and epoch_permutation() agree.
void shuffle_in_place(std::vector<std::uint32_t>& items, std::uint64_t seed, std::uint64_t epoch,
                      OrderStream stream) {
  auto rng = util::SplitMix64::for_epoch(seed ^ static_cast<std::uint64_t>(stream), epoch);
  for (std::size_t i = items.size(); i > 1; --i) {
    const auto j = static_cast<std::size_t>(rng.below(static_cast<std::uint64_t>(i)));
    std::swap(items[i - 1], items[j]);
  }
}

}  // namespace

std::string_view order_stream_name(OrderStream stream) {
  for (const auto& named : kNamedStreams)
    if (named.stream == stream) return named.name;
  return "unknown";
}

std::optional<OrderStream> order_stream_named(std::string_view name) {
  for (const auto& named : kNamedStreams)
    if (named.name == name) return named.stream;
  return std::nullopt;
}

std::vector<std::uint32_t> epoch_permutation(std::uint64_t count, std::uint64_t seed,
                                             std::uint64_t epoch, OrderStream stream) {
  if (count > std::numeric_limits<std::uint32_t>::max())
    throw std::invalid_argument("epoch_permutation: " + std::to_string(count) +
                                " items are more than a 32-bit index addresses");
  std::vector<std::uint32_t> order(static_cast<std::size_t>(count));
  std::iota(order.begin(), order.end(), 0U);
  shuffle_in_place(order, seed, epoch, stream);
  return order;
}

std::vector<std::uint32_t> shuffled(std::span<const std::uint32_t> ids, std::uint64_t seed,
                                    std::uint64_t epoch, OrderStream stream) {
  std::vector<std::uint32_t> out(ids.begin(), ids.end());
  shuffle_in_place(out, seed, epoch, stream);
  return out;
}

std::vector<std::vector<std::uint32_t>> chunk(std::span<const std::uint32_t> ids,
                                              std::size_t batch_size) {
  if (batch_size == 0) throw std::invalid_argument("chunk: batch_size must be at least 1");
  std::vector<std::vector<std::uint32_t>> out;
  out.reserve((ids.size() + batch_size - 1) / batch_size);
  for (std::size_t first = 0; first < ids.size(); first += batch_size) {
    const std::size_t count = std::min(batch_size, ids.size() - first);
    const auto slice = ids.subspan(first, count);
    out.emplace_back(slice.begin(), slice.end());
  }
  return out;
}

}  // namespace headroom::loader
