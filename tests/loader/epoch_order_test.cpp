// shuffled() and chunk(): permutation, determinism, independence of seeds and epochs, uniformity.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <map>
#include <numeric>
#include <stdexcept>
#include <vector>

#include "headroom/loader/epoch_order.hpp"

namespace headroom::loader {
namespace {

std::vector<std::uint32_t> iota_ids(std::size_t n, std::uint32_t first = 0) {
  std::vector<std::uint32_t> ids(n);
  std::iota(ids.begin(), ids.end(), first);
  return ids;
}

TEST(EpochOrder, ShuffledIsAPermutation) {
  // Non-contiguous ids with a duplicate: the multiset must be preserved, not just the range.
  std::vector<std::uint32_t> ids = {90, 3, 17, 3, 1000, 42, 5, 8, 77, 0, 12};
  for (std::uint64_t epoch = 0; epoch < 20; ++epoch) {
    auto out = shuffled(ids, 123, epoch);
    ASSERT_EQ(out.size(), ids.size());
    std::sort(out.begin(), out.end());
    auto expected = ids;
    std::sort(expected.begin(), expected.end());
    EXPECT_EQ(out, expected);
  }
}

TEST(EpochOrder, ShuffledIsDeterministicForSeedAndEpoch) {
  const auto ids = iota_ids(500);
  EXPECT_EQ(shuffled(ids, 7, 3), shuffled(ids, 7, 3));
  EXPECT_EQ(shuffled(ids, 0, 0), shuffled(ids, 0, 0));
}

TEST(EpochOrder, ShuffledDiffersBetweenEpochsAndSeeds) {
  // With 100 elements two independent shuffles coincide with probability 1/100!.
  const auto ids = iota_ids(100);
  const auto base = shuffled(ids, 7, 0);
  EXPECT_NE(base, ids);
  EXPECT_NE(base, shuffled(ids, 7, 1));
  EXPECT_NE(base, shuffled(ids, 8, 0));
  EXPECT_NE(shuffled(ids, 0, 0), shuffled(ids, 0, 1));
  EXPECT_NE(shuffled(ids, 0, 1), shuffled(ids, 1, 0));
}

TEST(EpochOrder, ShuffledHandlesTinyLists) {
  EXPECT_TRUE(shuffled({}, 1, 2).empty());
  const std::vector<std::uint32_t> one = {42};
  EXPECT_EQ(shuffled(one, 1, 2), one);
}

// Counts of (position, value) and of whole permutations of a 4-element list over many shuffles,
// against the uniform expectation with a loose bound (several standard deviations).
void expect_uniform(const std::vector<std::vector<std::uint32_t>>& samples) {
  const double n = static_cast<double>(samples.size());
  std::array<std::array<int, 4>, 4> counts{};
  std::map<std::vector<std::uint32_t>, int> permutations;
  for (const auto& s : samples) {
    for (std::size_t pos = 0; pos < 4; ++pos) ++counts[pos][s[pos]];
    ++permutations[s];
  }
  // Binomial(n, 1/4): sd = sqrt(n * 3/16); 6 sd.
  const double expected = n / 4.0;
  const double bound = 6.0 * std::sqrt(n * 3.0 / 16.0);
  for (std::size_t pos = 0; pos < 4; ++pos) {
    for (std::size_t value = 0; value < 4; ++value) {
      EXPECT_NEAR(counts[pos][value], expected, bound) << "position " << pos << " value " << value;
    }
  }
  // All 24 orders, each Binomial(n, 1/24); 6 sd.
  EXPECT_EQ(permutations.size(), 24U);
  const double expected_order = n / 24.0;
  const double order_bound = 6.0 * std::sqrt(n * (1.0 / 24.0) * (23.0 / 24.0));
  for (const auto& [order, count] : permutations) EXPECT_NEAR(count, expected_order, order_bound);
}

TEST(EpochOrder, ShuffledIsUniformOverSeeds) {
  const auto ids = iota_ids(4);
  std::vector<std::vector<std::uint32_t>> samples;
  for (std::uint64_t seed = 0; seed < 24'000; ++seed) samples.push_back(shuffled(ids, seed, 0));
  expect_uniform(samples);
}

TEST(EpochOrder, ShuffledIsUniformOverEpochs) {
  const auto ids = iota_ids(4);
  std::vector<std::vector<std::uint32_t>> samples;
  for (std::uint64_t epoch = 0; epoch < 24'000; ++epoch) samples.push_back(shuffled(ids, 1, epoch));
  expect_uniform(samples);
}

TEST(EpochOrder, ChunkSizesAndOrder) {
  const auto ids = iota_ids(10, 100);
  const auto chunks = chunk(ids, 3);
  ASSERT_EQ(chunks.size(), 4U);
  EXPECT_EQ(chunks[0], (std::vector<std::uint32_t>{100, 101, 102}));
  EXPECT_EQ(chunks[1], (std::vector<std::uint32_t>{103, 104, 105}));
  EXPECT_EQ(chunks[2], (std::vector<std::uint32_t>{106, 107, 108}));
  EXPECT_EQ(chunks[3], (std::vector<std::uint32_t>{109}));
}

TEST(EpochOrder, ChunkExactMultipleHasNoEmptyTail) {
  const auto ids = iota_ids(12);
  const auto chunks = chunk(ids, 4);
  ASSERT_EQ(chunks.size(), 3U);
  std::vector<std::uint32_t> joined;
  for (const auto& c : chunks) {
    EXPECT_EQ(c.size(), 4U);
    joined.insert(joined.end(), c.begin(), c.end());
  }
  EXPECT_EQ(joined, ids);
}

TEST(EpochOrder, ChunkEdgeCases) {
  EXPECT_TRUE(chunk({}, 5).empty());
  const auto ids = iota_ids(3);
  const auto whole = chunk(ids, 100);
  ASSERT_EQ(whole.size(), 1U);
  EXPECT_EQ(whole[0], ids);
  EXPECT_EQ(chunk(ids, 1).size(), 3U);
  EXPECT_THROW(chunk(ids, 0), std::invalid_argument);
}

}  // namespace
}  // namespace headroom::loader
