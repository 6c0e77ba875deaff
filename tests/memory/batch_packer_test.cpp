// pack_by_bytes(): order preserved, budget and cap respected, greedy closure, hand-computed
// predictions, errors naming the offending graph, and packing a real store's size index.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "headroom/loader/epoch_order.hpp"
#include "headroom/memory/batch_packer.hpp"
#include "headroom/store/graph_store.hpp"
#include "test_support.hpp"

namespace headroom::memory {
namespace {

// Written out independently of ByteCostModel::predict.
double cost(const ByteCostModel& m, std::uint64_t nodes, std::uint64_t edges,
            std::uint64_t graphs) {
  return m.fixed_bytes + m.bytes_per_node * static_cast<double>(nodes) +
         m.bytes_per_edge * static_cast<double>(edges) +
         m.bytes_per_graph * static_cast<double>(graphs);
}

double batch_cost(const ByteCostModel& m, const std::vector<std::uint32_t>& batch,
                  const std::vector<std::uint32_t>& nodes,
                  const std::vector<std::uint32_t>& edges) {
  std::uint64_t n = 0;
  std::uint64_t e = 0;
  for (const auto id : batch) {
    n += nodes[id];
    e += edges[id];
  }
  return cost(m, n, e, batch.size());
}

// A plain reference packer: tries each graph in the open batch, else starts a new one.
std::vector<std::vector<std::uint32_t>> reference_pack(const std::vector<std::uint32_t>& order,
                                                       const std::vector<std::uint32_t>& nodes,
                                                       const std::vector<std::uint32_t>& edges,
                                                       const ByteCostModel& m, double budget,
                                                       std::size_t cap) {
  std::vector<std::vector<std::uint32_t>> out;
  std::vector<std::uint32_t> open;
  for (const auto id : order) {
    open.push_back(id);
    const bool over_cap = cap != 0 && open.size() > cap;
    if (open.size() > 1 && (over_cap || batch_cost(m, open, nodes, edges) > budget)) {
      open.pop_back();
      out.push_back(open);
      open = {id};
    }
  }
  if (!open.empty()) out.push_back(open);
  return out;
}

struct RandomSizes {
  std::vector<std::uint32_t> nodes;
  std::vector<std::uint32_t> edges;
};

RandomSizes random_sizes(std::size_t graphs, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<std::uint32_t> node_count(1, 60);
  RandomSizes s;
  for (std::size_t i = 0; i < graphs; ++i) {
    const auto n = node_count(rng);
    s.nodes.push_back(n);
    s.edges.push_back(std::uniform_int_distribution<std::uint32_t>(0, n * 4)(rng));
  }
  return s;
}

std::vector<std::uint32_t> random_order(std::size_t graphs, std::uint32_t seed) {
  std::vector<std::uint32_t> ids(graphs);
  std::iota(ids.begin(), ids.end(), 0u);
  std::mt19937 rng(seed);
  for (std::size_t i = ids.size(); i > 1; --i)
    std::swap(ids[i - 1], ids[std::uniform_int_distribution<std::size_t>(0, i - 1)(rng)]);
  return ids;
}

// Integer coefficients keep every prediction exact, so budget comparisons have no rounding slack.
// The largest random graph (60 nodes, 240 edges) alone costs 1000+2880+4800+64 = 8744.
const ByteCostModel kModel{1000.0, 48.0, 20.0, 64.0};

// Checks every property a packing must have, against independent recomputation.
void expect_valid_packing(const PackedEpoch& epoch, const std::vector<std::uint32_t>& order,
                          const std::vector<std::uint32_t>& nodes,
                          const std::vector<std::uint32_t>& edges, const ByteCostModel& m,
                          double budget, std::size_t cap) {
  ASSERT_EQ(epoch.predicted_bytes.size(), epoch.batches.size());
  std::vector<std::uint32_t> concatenated;
  for (std::size_t b = 0; b < epoch.batches.size(); ++b) {
    const auto& batch = epoch.batches[b];
    ASSERT_FALSE(batch.empty()) << "batch " << b;
    if (cap != 0) {
      EXPECT_LE(batch.size(), cap) << "batch " << b;
    }
    const double expected = batch_cost(m, batch, nodes, edges);
    EXPECT_DOUBLE_EQ(epoch.predicted_bytes[b], expected) << "batch " << b;
    EXPECT_LE(expected, budget) << "batch " << b;
    if (b + 1 < epoch.batches.size()) {
      auto extended = batch;
      extended.push_back(epoch.batches[b + 1].front());
      const bool cap_hit = cap != 0 && extended.size() > cap;
      EXPECT_TRUE(cap_hit || batch_cost(m, extended, nodes, edges) > budget)
          << "batch " << b << " could have taken the next graph";
    }
    concatenated.insert(concatenated.end(), batch.begin(), batch.end());
  }
  EXPECT_EQ(concatenated, order);
}

TEST(BatchPacker, HandComputedSmallEpoch) {
  // Model: 100 fixed + 10/node + 1/edge + 5/graph. Graphs (nodes, edges) alone:
  // 0 (2, 3) -> 128, 1 (4, 10) -> 155, 2 (1, 0) -> 115, 3 (3, 6) -> 141.
  const ByteCostModel model{100.0, 10.0, 1.0, 5.0};
  const std::vector<std::uint32_t> nodes = {2, 4, 1, 3};
  const std::vector<std::uint32_t> edges = {3, 10, 0, 6};
  const std::vector<std::uint32_t> order = {0, 1, 2, 3};

  // Budget 200: {0,1} = 100+60+13+10 = 183, {0,1,2} = 100+70+13+15 = 198, + 3 would be
  // 100+100+19+20 = 239 > 200, so 3 starts a batch of its own (141).
  auto epoch = pack_by_bytes(order, nodes, edges, model, 200.0);
  ASSERT_EQ(epoch.batches.size(), 2u);
  EXPECT_EQ(epoch.batches[0], (std::vector<std::uint32_t>{0, 1, 2}));
  EXPECT_EQ(epoch.batches[1], (std::vector<std::uint32_t>{3}));
  EXPECT_EQ(epoch.predicted_bytes, (std::vector<double>{198.0, 141.0}));

  // A batch landing exactly on the budget is allowed.
  epoch = pack_by_bytes(order, nodes, edges, model, 198.0);
  ASSERT_EQ(epoch.batches.size(), 2u);
  EXPECT_EQ(epoch.batches[0], (std::vector<std::uint32_t>{0, 1, 2}));

  // One byte less: {0,1} = 183, then {2,3} = 100+40+6+10 = 156.
  epoch = pack_by_bytes(order, nodes, edges, model, 197.0);
  ASSERT_EQ(epoch.batches.size(), 2u);
  EXPECT_EQ(epoch.batches[0], (std::vector<std::uint32_t>{0, 1}));
  EXPECT_EQ(epoch.batches[1], (std::vector<std::uint32_t>{2, 3}));
  EXPECT_EQ(epoch.predicted_bytes, (std::vector<double>{183.0, 156.0}));

  // Reversed order, budget 200: {3,2} = 156, + 1 would be 100+80+16+15 = 211; {1,0} = 183.
  epoch = pack_by_bytes(std::vector<std::uint32_t>{3, 2, 1, 0}, nodes, edges, model, 200.0);
  ASSERT_EQ(epoch.batches.size(), 2u);
  EXPECT_EQ(epoch.batches[0], (std::vector<std::uint32_t>{3, 2}));
  EXPECT_EQ(epoch.batches[1], (std::vector<std::uint32_t>{1, 0}));
  EXPECT_EQ(epoch.predicted_bytes, (std::vector<double>{156.0, 183.0}));
}

TEST(BatchPacker, RandomEpochsSatisfyAllInvariantsAndMatchReference) {
  const auto sizes = random_sizes(3000, 11);
  for (const double budget : {9000.0, 20000.0, 100000.0, 1e6}) {
    for (const std::size_t cap : {std::size_t{0}, std::size_t{1}, std::size_t{7}}) {
      const auto order = random_order(sizes.nodes.size(), static_cast<std::uint32_t>(budget));
      const auto epoch = pack_by_bytes(order, sizes.nodes, sizes.edges, kModel, budget, cap);
      SCOPED_TRACE("budget " + std::to_string(budget) + " cap " + std::to_string(cap));
      expect_valid_packing(epoch, order, sizes.nodes, sizes.edges, kModel, budget, cap);
      EXPECT_EQ(epoch.batches,
                reference_pack(order, sizes.nodes, sizes.edges, kModel, budget, cap));
    }
  }
}

TEST(BatchPacker, SubsetOfIdsAndRepeatedIds) {
  // The order need not cover the whole size index, and a repeated id is packed per occurrence.
  const auto sizes = random_sizes(500, 5);
  std::vector<std::uint32_t> order = {499, 3, 250, 3, 0, 17, 17, 17, 42};
  const auto epoch = pack_by_bytes(order, sizes.nodes, sizes.edges, kModel, 20000.0);
  expect_valid_packing(epoch, order, sizes.nodes, sizes.edges, kModel, 20000.0, 0);
}

TEST(BatchPacker, MaxGraphsCapsTheBatchSize) {
  const std::vector<std::uint32_t> nodes(10, 1);
  const std::vector<std::uint32_t> edges(10, 1);
  const auto order = random_order(10, 3);
  // The budget fits everything, so only the cap splits: 3, 3, 3, 1.
  const auto epoch = pack_by_bytes(order, nodes, edges, kModel, 1e12, 3);
  ASSERT_EQ(epoch.batches.size(), 4u);
  for (std::size_t b = 0; b < 3; ++b) EXPECT_EQ(epoch.batches[b].size(), 3u);
  EXPECT_EQ(epoch.batches[3].size(), 1u);
  expect_valid_packing(epoch, order, nodes, edges, kModel, 1e12, 3);

  // Cap and budget together: each graph costs 48+20+64 = 132 over the fixed 1000, so a budget
  // of 1000 + 2*132 holds two graphs even though the cap allows three.
  const auto tight = pack_by_bytes(order, nodes, edges, kModel, 1264.0, 3);
  ASSERT_EQ(tight.batches.size(), 5u);
  for (const auto& batch : tight.batches) EXPECT_EQ(batch.size(), 2u);
}

TEST(BatchPacker, DeterministicForTheSameInput) {
  const auto sizes = random_sizes(2000, 9);
  const auto order = random_order(2000, 4);
  const auto a = pack_by_bytes(order, sizes.nodes, sizes.edges, kModel, 30000.0, 16);
  const auto b = pack_by_bytes(order, sizes.nodes, sizes.edges, kModel, 30000.0, 16);
  EXPECT_EQ(a.batches, b.batches);
  EXPECT_EQ(a.predicted_bytes, b.predicted_bytes);
  EXPECT_GT(a.batches.size(), 1u);
}

TEST(BatchPacker, BudgetFittingEverythingGivesOneBatch) {
  const auto sizes = random_sizes(100, 2);
  const auto order = random_order(100, 8);
  std::uint64_t all_nodes = 0;
  std::uint64_t all_edges = 0;
  for (std::size_t i = 0; i < 100; ++i) {
    all_nodes += sizes.nodes[i];
    all_edges += sizes.edges[i];
  }
  const double everything = cost(kModel, all_nodes, all_edges, 100);
  const auto epoch = pack_by_bytes(order, sizes.nodes, sizes.edges, kModel, everything);
  ASSERT_EQ(epoch.batches.size(), 1u);
  EXPECT_EQ(epoch.batches[0], order);
  EXPECT_DOUBLE_EQ(epoch.predicted_bytes[0], everything);

  // One byte less and the last graph no longer fits.
  const auto split = pack_by_bytes(order, sizes.nodes, sizes.edges, kModel, everything - 1.0);
  ASSERT_EQ(split.batches.size(), 2u);
  EXPECT_EQ(split.batches[1], std::vector<std::uint32_t>{order.back()});
}

TEST(BatchPacker, EmptyInputGivesNoBatches) {
  const std::vector<std::uint32_t> nodes = {5, 6};
  const std::vector<std::uint32_t> edges = {1, 2};
  const auto epoch = pack_by_bytes({}, nodes, edges, kModel, 1e6);
  EXPECT_TRUE(epoch.batches.empty());
  EXPECT_TRUE(epoch.predicted_bytes.empty());
  // Also with an empty size index.
  EXPECT_TRUE(pack_by_bytes({}, {}, {}, kModel, 1e6).batches.empty());
}

TEST(BatchPacker, OversizeGraphIsNamedInTheError) {
  // 1 MiB per node: graph 2 (3 nodes, 5 edges) needs 3 MiB + 5 bytes, the budget is 2 MiB.
  const ByteCostModel model{0.0, 1048576.0, 1.0, 0.0};
  const std::vector<std::uint32_t> nodes = {1, 1, 3, 1};
  const std::vector<std::uint32_t> edges = {0, 0, 5, 0};
  const std::vector<std::uint32_t> order = {0, 1, 3, 2};
  try {
    pack_by_bytes(order, nodes, edges, model, 2097152.0);
    FAIL() << "expected OversizeGraphError";
  } catch (const OversizeGraphError& e) {
    EXPECT_EQ(e.graph_id(), 2u);
    EXPECT_EQ(e.nodes(), 3u);
    EXPECT_EQ(e.edges(), 5u);
    EXPECT_EQ(e.predicted_bytes(), 3.0 * 1048576.0 + 5.0);
    EXPECT_EQ(e.budget_bytes(), 2097152.0);
    const std::string message = e.what();
    EXPECT_NE(message.find("graph 2 "), std::string::npos) << message;
    EXPECT_NE(message.find("3 nodes"), std::string::npos) << message;
    EXPECT_NE(message.find("5 edges"), std::string::npos) << message;
    EXPECT_NE(message.find("3145733 bytes"), std::string::npos) << message;
    EXPECT_NE(message.find("3.00 MiB"), std::string::npos) << message;
    EXPECT_NE(message.find("2097152 bytes"), std::string::npos) << message;
    EXPECT_NE(message.find("2.00 MiB"), std::string::npos) << message;
  }
  // Callers that only know std::runtime_error still catch it.
  EXPECT_THROW(pack_by_bytes(order, nodes, edges, model, 2097152.0), std::runtime_error);
  // The first oversize graph in order is reported, whatever the batches before it.
  const std::vector<std::uint32_t> two_big_nodes = {1, 4, 3, 1};
  try {
    pack_by_bytes(std::vector<std::uint32_t>{0, 2, 1}, two_big_nodes, edges, model, 2097152.0);
    FAIL() << "expected OversizeGraphError";
  } catch (const OversizeGraphError& e) {
    EXPECT_EQ(e.graph_id(), 2u);
  }
  // Exactly at the budget is not oversize.
  EXPECT_NO_THROW(pack_by_bytes(order, nodes, edges, model, 3.0 * 1048576.0 + 5.0));
}

TEST(BatchPacker, OutOfRangeIdIsNamed) {
  const std::vector<std::uint32_t> nodes = {1, 2, 3};
  const std::vector<std::uint32_t> edges = {1, 2, 3};
  try {
    pack_by_bytes(std::vector<std::uint32_t>{0, 1, 77, 2}, nodes, edges, kModel, 1e6);
    FAIL() << "expected std::out_of_range";
  } catch (const std::out_of_range& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("77"), std::string::npos) << message;
    EXPECT_NE(message.find("3 graphs"), std::string::npos) << message;
  }
  // The first id past the end is out of range too.
  EXPECT_THROW(pack_by_bytes(std::vector<std::uint32_t>{3}, nodes, edges, kModel, 1e6),
               std::out_of_range);
}

TEST(BatchPacker, InvalidArgumentsAreRejected) {
  const std::vector<std::uint32_t> nodes = {1, 2};
  const std::vector<std::uint32_t> edges = {1, 2};
  const std::vector<std::uint32_t> order = {0, 1};
  EXPECT_THROW(pack_by_bytes(order, nodes, edges, kModel, 0.0), std::invalid_argument);
  EXPECT_THROW(pack_by_bytes(order, nodes, edges, kModel, -5.0), std::invalid_argument);
  EXPECT_THROW(pack_by_bytes(order, nodes, edges, kModel, std::numeric_limits<double>::quiet_NaN()),
               std::invalid_argument);
  EXPECT_THROW(pack_by_bytes(order, nodes, edges, kModel, std::numeric_limits<double>::infinity()),
               std::invalid_argument);
  // Even with nothing to pack, a bad budget is a caller bug worth reporting.
  EXPECT_THROW(pack_by_bytes({}, nodes, edges, kModel, 0.0), std::invalid_argument);
  const std::vector<std::uint32_t> short_edges = {1};
  EXPECT_THROW(pack_by_bytes(order, nodes, short_edges, kModel, 1e6), std::invalid_argument);
  ByteCostModel bad = kModel;
  bad.bytes_per_edge = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THROW(pack_by_bytes(order, nodes, edges, bad, 1e6), std::invalid_argument);
}

TEST(BatchPacker, PacksARealStoreSizeIndex) {
  testing::TempDir dir;
  const auto path = testing::build_synthetic_store(dir.path(), 20000);
  const auto store = store::GraphStore::open(path);
  const auto index = store.size_index();
  const std::vector<std::uint32_t> nodes(index.num_nodes.begin(), index.num_nodes.end());
  const std::vector<std::uint32_t> edges(index.num_edges.begin(), index.num_edges.end());
  ASSERT_GT(store.train_ids().size(), 10u);

  // A budget of roughly eight of the largest training graphs: several batches of varying size.
  double largest = 0.0;
  for (const auto id : store.train_ids())
    largest = std::max(largest, cost(kModel, nodes[id], edges[id], 1) - kModel.fixed_bytes);
  const double budget = kModel.fixed_bytes + 8.0 * largest;

  const auto order = loader::shuffled(store.train_ids(), 42, 0);
  const auto epoch = pack_by_bytes(order, index.num_nodes, index.num_edges, kModel, budget);
  expect_valid_packing(epoch, order, nodes, edges, kModel, budget, 0);
  EXPECT_EQ(epoch.batches, reference_pack(order, nodes, edges, kModel, budget, 0));
  EXPECT_GT(epoch.batches.size(), 1u);
  // Each batch holds at least the 8 largest-size graphs' worth, so at least 8 graphs per batch,
  // except possibly the last.
  for (std::size_t b = 0; b + 1 < epoch.batches.size(); ++b)
    EXPECT_GE(epoch.batches[b].size(), 8u) << "batch " << b;

  // Another epoch's shuffle packs differently but still satisfies everything.
  const auto order1 = loader::shuffled(store.train_ids(), 42, 1);
  const auto epoch1 = pack_by_bytes(order1, index.num_nodes, index.num_edges, kModel, budget);
  expect_valid_packing(epoch1, order1, nodes, edges, kModel, budget, 0);
}

}  // namespace
}  // namespace headroom::memory
