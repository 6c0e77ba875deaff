#include "headroom/loader/epoch_order.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace headroom::loader {
namespace {

constexpr std::uint64_t kGoldenGamma = 0x9E3779B97F4A7C15ULL;

// SplitMix64 (Steele, Lea, Flood 2014): a 64-bit counter advanced by the golden-ratio gamma and
// passed through a bijective finaliser.
class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t state) : state_(state) {}

  std::uint64_t next() {
    state_ += kGoldenGamma;
    std::uint64_t z = state_;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }

  // Uniform in [0, bound), bound > 0. Rejecting the lowest 2^64 mod bound values leaves a range
  // whose size is a multiple of bound, so the remainder is exactly uniform.
  std::uint64_t below(std::uint64_t bound) {
    const std::uint64_t threshold = (std::uint64_t{0} - bound) % bound;
    for (;;) {
      const std::uint64_t r = next();
      if (r >= threshold) return r % bound;
    }
  }

 private:
  std::uint64_t state_;
};

// The generator's stream for (seed, epoch). Seeding with seed ^ epoch * gamma directly would make
// the epochs of seed 0 one stream shifted by one step each; one mixing step first decorrelates
// them.
SplitMix64 generator_for(std::uint64_t seed, std::uint64_t epoch) {
  SplitMix64 mixer(seed ^ (epoch * kGoldenGamma));
  return SplitMix64(mixer.next());
}

}  // namespace

std::vector<std::uint32_t> shuffled(std::span<const std::uint32_t> ids, std::uint64_t seed,
                                    std::uint64_t epoch) {
  std::vector<std::uint32_t> out(ids.begin(), ids.end());
  SplitMix64 rng = generator_for(seed, epoch);
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
