// Batches dealt to ranks: every graph exactly once per epoch, the same number of steps on every
// rank, each batch within the byte budget it was packed for, and the steps of N ranks made of
// consecutive batches of the single-process plan.
#include "headroom/memory/rank_batches.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "headroom/memory/batch_packer.hpp"
#include "headroom/util/split_mix.hpp"

namespace headroom::memory {
namespace {

struct SizedEpoch {
  std::vector<std::uint32_t> nodes, edges, order;
};

// Graph sizes spread like CAN windows (a few large ones), in a shuffled order.
SizedEpoch random_epoch(std::uint32_t graphs, std::uint64_t seed) {
  util::SplitMix64 random(seed);
  SizedEpoch epoch;
  for (std::uint32_t id = 0; id < graphs; ++id) {
    const auto nodes =
        static_cast<std::uint32_t>(5 + random.next() % 60 + (id % 17 == 0 ? 200 : 0));
    epoch.nodes.push_back(nodes);
    epoch.edges.push_back(nodes * 2 + static_cast<std::uint32_t>(random.next() % 40));
    epoch.order.push_back(id);
  }
  for (std::size_t i = epoch.order.size(); i > 1; --i)
    std::swap(epoch.order[i - 1], epoch.order[random.next() % i]);
  return epoch;
}

void expect_dealt_exactly_once(const SizedEpoch& epoch, const PackedEpoch& packed,
                               const ByteCostModel& model, double budget, int world_size) {
  std::vector<int> seen(epoch.nodes.size(), 0);
  std::size_t steps = 0;
  for (int rank = 0; rank < world_size; ++rank) {
    const auto mine = batches_of_rank(packed.batches, rank, world_size);
    if (rank == 0) steps = mine.size();
    EXPECT_EQ(mine.size(), steps) << "rank " << rank << " of " << world_size;
    for (const auto& batch : mine) {
      ASSERT_FALSE(batch.empty());
      std::uint64_t nodes = 0, edges = 0;
      for (const auto id : batch) {
        ++seen[id];
        nodes += epoch.nodes[id];
        edges += epoch.edges[id];
      }
      EXPECT_LE(model.predict(nodes, edges, batch.size()), budget);
    }
  }
  for (std::size_t id = 0; id < seen.size(); ++id) ASSERT_EQ(seen[id], 1) << "graph " << id;
}

TEST(RankBatches, PackedEpochIsDealtExactlyOnceWithEqualStepsForTwoAndThreeRanks) {
  const ByteCostModel model{1e6, 3000, 1200, 500};
  const double budget = 5e6;  // ~20 graphs of average size per batch
  for (const std::uint32_t graphs : {97U, 100U, 331U, 1000U}) {
    const auto epoch = random_epoch(graphs, graphs);
    const auto packed = pack_by_bytes(epoch.order, epoch.nodes, epoch.edges, model, budget, 64);
    ASSERT_GT(packed.batches.size(), 3U);
    for (const int world_size : {2, 3}) {
      SCOPED_TRACE(::testing::Message() << graphs << " graphs, " << world_size << " ranks, "
                                        << packed.batches.size() << " packed batches");
      expect_dealt_exactly_once(epoch, packed, model, budget, world_size);
    }
  }
}

TEST(RankBatches, StepsAreConsecutiveBatchesOfTheSingleProcessPlan) {
  std::vector<std::vector<std::uint32_t>> batches;
  for (std::uint32_t b = 0; b < 6; ++b) batches.push_back({2 * b, 2 * b + 1});
  const auto rank0 = batches_of_rank(batches, 0, 2);
  const auto rank1 = batches_of_rank(batches, 1, 2);
  ASSERT_EQ(rank0.size(), 3U);
  ASSERT_EQ(rank1.size(), 3U);
  for (std::size_t step = 0; step < 3; ++step) {
    EXPECT_EQ(rank0[step], batches[2 * step]);
    EXPECT_EQ(rank1[step], batches[2 * step + 1]);
  }
  EXPECT_EQ(batches_of_rank(batches, 0, 1), batches) << "one process keeps its plan";
}

TEST(RankBatches, ABatchIsCutWhenTheCountIsNotAMultipleOfTheRanks) {
  // 3 batches for 2 ranks: the last of the largest ({4..7}) is cut in two.
  const std::vector<std::vector<std::uint32_t>> batches = {{0, 1, 2, 3}, {4, 5, 6, 7}, {8}};
  EXPECT_EQ(batches_of_rank(batches, 0, 2),
            (std::vector<std::vector<std::uint32_t>>{{0, 1, 2, 3}, {6, 7}}));
  EXPECT_EQ(batches_of_rank(batches, 1, 2), (std::vector<std::vector<std::uint32_t>>{{4, 5}, {8}}));
}

TEST(RankBatches, FewerGraphsThanRanksIsRefused) {
  EXPECT_THROW(batches_of_rank({{0, 1}}, 0, 3), std::invalid_argument);
  EXPECT_THROW(batches_of_rank({{0, 1}}, 2, 2), std::invalid_argument);
  EXPECT_TRUE(batches_of_rank({}, 1, 3).empty()) << "an empty epoch is empty on every rank";
}

}  // namespace
}  // namespace headroom::memory
