// The only source of randomness of the synthetic dataset. std::mt19937_64's output sequence is
// fixed by the standard, but the std::*_distribution transforms are not (each library implements
// its own), so the transforms here are written out and use integers only: the same seed gives the
// same dataset with any compiler, library and floating-point mode.
#pragma once

#include <cstdint>
#include <random>

namespace headroom::synthetic::detail {

// splitmix64 finalizer: derives independent, well-mixed seeds for sub-streams (vehicle, files,
// attacks) from the user's seed, so that changing one stream's consumption leaves the others alone.
inline std::uint64_t mix_seed(std::uint64_t seed, std::uint64_t stream) {
  std::uint64_t z = seed + (stream + 1) * 0x9E3779B97F4A7C15ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// Not thread-safe; one per stream.
class SyntheticRng {
 public:
  explicit SyntheticRng(std::uint64_t seed) : engine_(seed) {}

  std::uint64_t next() { return engine_(); }

  // Uniform in [0, n), n > 0. Rejecting the lowest (2^64 mod n) outputs makes it exactly uniform.
  std::uint64_t below(std::uint64_t n) {
    const std::uint64_t reject_under = (0 - n) % n;
    for (;;) {
      const std::uint64_t r = engine_();
      if (r >= reject_under) return r % n;
    }
  }

  // Uniform in [lo, hi], lo <= hi.
  std::int64_t between(std::int64_t lo, std::int64_t hi) {
    return lo + static_cast<std::int64_t>(below(static_cast<std::uint64_t>(hi - lo) + 1));
  }

  // True with probability numerator / denominator.
  bool chance(std::uint64_t numerator, std::uint64_t denominator) {
    return below(denominator) < numerator;
  }

  std::uint8_t byte() { return static_cast<std::uint8_t>(engine_() >> 56); }

 private:
  std::mt19937_64 engine_;
};

}  // namespace headroom::synthetic::detail
