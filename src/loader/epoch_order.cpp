#include "headroom/loader/epoch_order.hpp"

#include "headroom/util/split_mix.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace headroom::loader {

std::vector<std::uint32_t> shuffled(std::span<const std::uint32_t> ids, std::uint64_t seed,
                                    std::uint64_t epoch) {
  std::vector<std::uint32_t> out(ids.begin(), ids.end());
  auto rng = util::SplitMix64::for_epoch(seed, epoch);
  for (std::size_t i = out.size(); i > 1; --i) {
    const auto j = static_cast<std::size_t>(rng.below(static_cast<std::uint64_t>(i)));
    std::swap(out[i - 1], out[j]);
  }
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
