// Deterministic, platform-independent shuffling: the same (seed, epoch) gives the same order on
// every machine and standard library (std::shuffle's algorithm is unspecified, so it is not used).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace headroom::loader {

// A Fisher-Yates permutation of `ids` driven by SplitMix64 seeded from (seed, epoch).
std::vector<std::uint32_t> shuffled(std::span<const std::uint32_t> ids, std::uint64_t seed,
                                    std::uint64_t epoch);

// Consecutive slices of at most `batch_size` ids (the last may be shorter; none is empty).
std::vector<std::vector<std::uint32_t>> chunk(std::span<const std::uint32_t> ids,
                                              std::size_t batch_size);

}  // namespace headroom::loader
