// SplitMix64 (Steele, Lea, Flood 2014): a tiny, fast generator whose output is the same with every
// compiler and standard library (std::shuffle and the std distributions are not), so shuffles and
// samples reproduce across machines. Not thread-safe; one per stream.
#pragma once

#include <cstdint>

namespace headroom::util {

class SplitMix64 {
 public:
  static constexpr std::uint64_t kGoldenGamma = 0x9E3779B97F4A7C15ULL;

  explicit SplitMix64(std::uint64_t state) : state_(state) {}

  // The stream for (seed, epoch). Seeding with seed ^ epoch * gamma directly would make the epochs
  // of one seed a single stream shifted by one step each; one mixing step decorrelates them.
  static SplitMix64 for_epoch(std::uint64_t seed, std::uint64_t epoch) {
    SplitMix64 mixer(seed ^ (epoch * kGoldenGamma));
    return SplitMix64(mixer.next());
  }

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

}  // namespace headroom::util
