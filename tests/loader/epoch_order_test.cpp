// epoch_permutation(), shuffled() and chunk(): permutation, determinism, independence of seeds,
// epochs and streams, uniformity, and the documented algorithm reproduced independently.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <map>
#include <numeric>
#include <stdexcept>
#include <string_view>
#include <utility>
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

constexpr OrderStream kStreams[] = {OrderStream::kGraphBatches, OrderStream::kNodeParts,
                                    OrderStream::kFusionSplit, OrderStream::kFusionEpochs};

TEST(EpochOrder, PermutationHoldsEveryIndexOnceForEveryCountAndStream) {
  for (const auto stream : kStreams) {
    for (const std::uint64_t count : {0U, 1U, 2U, 17U, 1000U}) {
      auto order = epoch_permutation(count, 5, 2, stream);
      std::sort(order.begin(), order.end());
      EXPECT_EQ(order, iota_ids(count)) << order_stream_name(stream) << " count " << count;
    }
  }
}

TEST(EpochOrder, PermutationIsAFunctionOfSeedEpochAndStreamOnly) {
  for (const auto stream : kStreams) {
    const auto first = epoch_permutation(300, 9, 4, stream);
    EXPECT_EQ(epoch_permutation(300, 9, 4, stream), first);
    EXPECT_NE(first, iota_ids(300));
    // With 300 items two independent orders coincide with probability 1/300!.
    EXPECT_NE(epoch_permutation(300, 9, 5, stream), first) << order_stream_name(stream);
    EXPECT_NE(epoch_permutation(300, 10, 4, stream), first) << order_stream_name(stream);
  }
}

// Two users of one seed draw unrelated orders, and no stream's epoch e is another's.
TEST(EpochOrder, StreamsOfOneSeedDifferInEveryEpoch) {
  for (std::uint64_t epoch = 0; epoch < 10; ++epoch) {
    for (std::size_t a = 0; a < std::size(kStreams); ++a)
      for (std::size_t b = a + 1; b < std::size(kStreams); ++b)
        EXPECT_NE(epoch_permutation(200, 1, epoch, kStreams[a]),
                  epoch_permutation(200, 1, epoch, kStreams[b]))
            << order_stream_name(kStreams[a]) << " / " << order_stream_name(kStreams[b])
            << " epoch " << epoch;
  }
}

// A run resumed at epoch 3 plans epochs 3.. from (seed, epoch) alone: drawing them after other
// epochs, or after nothing, gives the same orders.
TEST(EpochOrder, AResumedRunPlansTheEpochsTheStraightRunDid) {
  std::vector<std::vector<std::uint32_t>> straight;
  for (std::uint64_t epoch = 0; epoch < 6; ++epoch)
    straight.push_back(epoch_permutation(120, 42, epoch, OrderStream::kNodeParts));
  for (std::uint64_t epoch = 3; epoch < 6; ++epoch)
    EXPECT_EQ(epoch_permutation(120, 42, epoch, OrderStream::kNodeParts), straight[epoch]);
}

TEST(EpochOrder, ShuffledListsTheIdsInThePermutationsOrder) {
  const std::vector<std::uint32_t> ids = {90, 3, 17, 1000, 42, 5, 8, 77, 0, 12, 64};
  for (const auto stream : kStreams) {
    const auto order = epoch_permutation(ids.size(), 21, 7, stream);
    const auto out = shuffled(ids, 21, 7, stream);
    ASSERT_EQ(out.size(), ids.size());
    for (std::size_t k = 0; k < ids.size(); ++k) EXPECT_EQ(out[k], ids[order[k]]) << k;
  }
}

// The algorithm epoch_order.hpp documents, written out again from its text (not from
// util::SplitMix64), so that a change to either is seen: it is what other languages reproduce.
std::vector<std::uint32_t> documented_order(std::uint64_t count, std::uint64_t seed,
                                            std::uint64_t epoch, std::uint64_t tag) {
  std::uint64_t state = 0;
  const auto next = [&state] {
    state += 0x9E3779B97F4A7C15ULL;
    std::uint64_t z = state;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  };
  state = seed ^ tag ^ (epoch * 0x9E3779B97F4A7C15ULL);
  state = next();
  const auto below = [&](std::uint64_t bound) {
    for (;;) {
      const std::uint64_t r = next();
      if (r >= (std::uint64_t{0} - bound) % bound) return r % bound;
    }
  };
  std::vector<std::uint32_t> order(count);
  std::iota(order.begin(), order.end(), 0U);
  for (std::uint64_t i = count; i > 1; --i) std::swap(order[i - 1], order[below(i)]);
  return order;
}

TEST(EpochOrder, FollowsTheDocumentedAlgorithm) {
  const std::pair<OrderStream, std::string_view> tags[] = {
      {OrderStream::kGraphBatches, std::string_view("\0\0\0\0\0\0\0\0", 8)},
      {OrderStream::kNodeParts, "node-par"},
      {OrderStream::kFusionSplit, "fuse-spl"},
      {OrderStream::kFusionEpochs, "fuse-epc"}};
  for (const auto& [stream, ascii] : tags) {
    // The tag is its eight ASCII bytes read big-endian, as the header says.
    std::uint64_t tag = 0;
    for (const char c : ascii) tag = (tag << 8) | static_cast<unsigned char>(c);
    EXPECT_EQ(static_cast<std::uint64_t>(stream), tag) << ascii;
    for (const std::uint64_t seed : {0ULL, 7ULL, 0xFFFFFFFFFFFFFFFFULL})
      for (const std::uint64_t epoch : {0ULL, 1ULL, 99ULL})
        EXPECT_EQ(epoch_permutation(257, seed, epoch, stream),
                  documented_order(257, seed, epoch, tag))
            << order_stream_name(stream) << " seed " << seed << " epoch " << epoch;
  }
}

TEST(EpochOrder, StreamNamesRoundTripAndUnknownNamesAreNone) {
  for (const auto stream : kStreams)
    EXPECT_EQ(order_stream_named(order_stream_name(stream)), stream);
  EXPECT_EQ(order_stream_named("graph-batches"), OrderStream::kGraphBatches);
  EXPECT_FALSE(order_stream_named("node-par").has_value());
  EXPECT_FALSE(order_stream_named("").has_value());
}

TEST(EpochOrder, ACountBeyondAThirtyTwoBitIndexIsRefused) {
  EXPECT_THROW(epoch_permutation(std::uint64_t{1} << 32, 0, 0), std::invalid_argument);
}

}  // namespace
}  // namespace headroom::loader
