// The KD-GAT window construction, checked against values worked out by hand.
#include "headroom/graph/window_graph_builder.hpp"
#include "headroom/graph/can_id_vocabulary.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace headroom::graph {
namespace {

can::CanFrame frame(std::uint32_t id, std::vector<std::uint8_t> bytes = {},
                    std::uint8_t label = 0) {
  can::CanFrame f;
  f.id = id;
  f.dlc = static_cast<std::uint8_t>(bytes.size());
  for (std::size_t i = 0; i < bytes.size(); ++i) f.data[i] = bytes[i];
  f.label = label;
  return f;
}

std::vector<float> node_row(const WindowGraph& g, std::size_t n) {
  return {g.node_features.begin() + static_cast<long>(n * kNodeFeatureCount),
          g.node_features.begin() + static_cast<long>((n + 1) * kNodeFeatureCount)};
}
std::vector<float> edge_row(const WindowGraph& g, std::size_t e) {
  return {g.edge_features.begin() + static_cast<long>(e * kEdgeFeatureCount),
          g.edge_features.begin() + static_cast<long>((e + 1) * kEdgeFeatureCount)};
}

void expect_row(const std::vector<float>& actual, const std::vector<double>& expected) {
  ASSERT_EQ(actual.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_NEAR(actual[i], expected[i], 1e-6) << "feature " << i;
  }
}

std::vector<std::uint32_t> keys_of(const std::vector<can::CanFrame>& frames) {
  std::vector<std::uint32_t> keys;
  for (const auto& f : frames) keys.push_back(f.id);
  return keys;
}

// Frames A B A B C (keys 10, 20, 10, 20, 30), W = 5. Transitions: A->B@0, B->A@1, A->B@2, B->C@3.
TEST(WindowGraphBuilder, MatchesHandComputedFeatures) {
  const std::vector<can::CanFrame> frames = {frame(10, {255, 0, 51}), frame(20, {10}),
                                             frame(10, {0, 0, 51}), frame(20, {30, 255}),
                                             frame(30, {7, 7, 7})};
  WindowGraphBuilder builder(WindowConfig{5, 5});
  WindowGraph g;
  builder.build(frames, keys_of(frames), g);

  ASSERT_EQ(g.num_nodes(), 3U);
  EXPECT_EQ(g.node_keys, (std::vector<std::uint32_t>{10, 20, 30}));
  // A: sources at 0 and 2; bytes mean (255+0)/2/255, 0, 51/255; count 2 == B's count -> raw 2.
  expect_row(node_row(g, 0), {10, 0.5, 0, 0.2, 0, 0, 0, 0, 0, 2, 2.0 / 4});
  // B: sources at 1 and 3 (frame 4's bytes do not count: C is never a source).
  expect_row(node_row(g, 1), {20, 20.0 / 255, 0.5, 0, 0, 0, 0, 0, 0, 2, 3.0 / 4});
  // C: only a target -> its key and zeros.
  expect_row(node_row(g, 2), {30, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0});

  ASSERT_EQ(g.num_edges(), 3U);
  EXPECT_EQ(g.edge_index, (std::vector<std::int32_t>{0, 1, 1, 0, 1, 2}));
  // deg(A) = 2 as source + 1 as target = 3; deg(B) = 2 + 2 = 4; deg(C) = 1.
  // A->B at 0, 2: gaps {2}: mean 2, std 0 -> regularity 1.
  expect_row(edge_row(g, 0), {2, 0.4, 2, 0, 1, 0, 0.4, 0.4, 1, 12, 0.75});
  // B->A once at 1: gap stats 0.
  expect_row(edge_row(g, 1), {1, 0.2, 0, 0, 0, 0.2, 0.2, 0, 1, 12, 4.0 / 3});
  // B->C once at 3, no reverse.
  expect_row(edge_row(g, 2), {1, 0.2, 0, 0, 0, 0.6, 0.6, 0, 0, 4, 4});
  EXPECT_EQ(g.label, 0);
}

// A A A B A A, W = 6: A->A at 0, 1, 4 (a self-loop with gaps 1 and 3), A->B at 2, B->A at 3.
TEST(WindowGraphBuilder, SelfLoopsGapStatisticsAndMinMaxCounts) {
  const std::vector<can::CanFrame> frames = {frame(5),        frame(5), frame(5),
                                             frame(9, {}, 1), frame(5), frame(5)};
  WindowGraphBuilder builder(WindowConfig{6, 6});
  WindowGraph g;
  builder.build(frames, keys_of(frames), g);

  ASSERT_EQ(g.num_nodes(), 2U);
  EXPECT_EQ(g.label, 1);
  // Source counts A 4, B 1: min-max -> A 1, B 0. Last source positions 4 and 3 over W-1 = 5.
  expect_row(node_row(g, 0), {5, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0.8});
  expect_row(node_row(g, 1), {9, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0.6});

  ASSERT_EQ(g.num_edges(), 3U);
  EXPECT_EQ(g.edge_index, (std::vector<std::int32_t>{0, 0, 0, 1, 1, 0}));
  // deg(A) = 4 + 4 = 8, deg(B) = 1 + 1 = 2. Self-loop gaps {1, 3}: mean 2, population std 1.
  expect_row(edge_row(g, 0), {3, 0.5, 2, 1, 0.5, 0, 4.0 / 6, 4.0 / 6, 1, 64, 1});
  expect_row(edge_row(g, 1), {1, 1.0 / 6, 0, 0, 0, 2.0 / 6, 2.0 / 6, 0, 1, 16, 4});
  expect_row(edge_row(g, 2), {1, 1.0 / 6, 0, 0, 0, 3.0 / 6, 3.0 / 6, 0, 1, 16, 0.25});
}

TEST(WindowGraphBuilder, SingleFrameWindowHasOneNodeAndNoEdges) {
  const std::vector<can::CanFrame> frames = {frame(3, {1, 2})};
  WindowGraphBuilder builder(WindowConfig{100, 100});
  WindowGraph g;
  builder.build(frames, keys_of(frames), g);
  ASSERT_EQ(g.num_nodes(), 1U);
  EXPECT_EQ(g.num_edges(), 0U);
  expect_row(node_row(g, 0), {3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0});
}

TEST(WindowGraphBuilder, ReusedBuilderGivesTheSameGraph) {
  std::vector<can::CanFrame> frames;
  for (std::uint32_t i = 0; i < 100; ++i)
    frames.push_back(frame((i * 7) % 13, {static_cast<std::uint8_t>(i)}));
  WindowGraphBuilder builder(WindowConfig{});
  WindowGraph first;
  WindowGraph second;
  builder.build(frames, keys_of(frames), first);
  std::vector<can::CanFrame> other(frames.begin(), frames.begin() + 10);
  WindowGraph scratch;
  builder.build(other, keys_of(other), scratch);
  builder.build(frames, keys_of(frames), second);
  EXPECT_EQ(first.node_features, second.node_features);
  EXPECT_EQ(first.edge_index, second.edge_index);
  EXPECT_EQ(first.edge_features, second.edge_features);
}

TEST(WindowConfig, WindowCountFollowsUpstreamFormula) {
  const WindowConfig config{100, 100};
  EXPECT_EQ(config.windows_for(0), 0U);
  EXPECT_EQ(config.windows_for(1), 1U);
  EXPECT_EQ(config.windows_for(99), 1U);
  EXPECT_EQ(config.windows_for(100), 1U);
  EXPECT_EQ(config.windows_for(199), 1U);
  EXPECT_EQ(config.windows_for(200), 2U);
  EXPECT_EQ(config.windows_for(149547), 1495U);
  const WindowConfig overlapping{100, 50};
  EXPECT_EQ(overlapping.windows_for(250), 4U);
  EXPECT_THROW((WindowConfig{1, 1}.validate()), std::invalid_argument);
  EXPECT_THROW((WindowConfig{10, 0}.validate()), std::invalid_argument);
}

TEST(CanIdVocabulary, SortedUniqueIdsAndOutOfVocabularyIndex) {
  const CanIdVocabulary vocabulary({0x316, 0x18F, 0x316, 0x2A0});
  ASSERT_EQ(vocabulary.size(), 3U);
  EXPECT_EQ(vocabulary.index_of(0x18F), 0U);
  EXPECT_EQ(vocabulary.index_of(0x2A0), 1U);
  EXPECT_EQ(vocabulary.index_of(0x316), 2U);
  EXPECT_EQ(vocabulary.index_of(0x000), 3U);
  EXPECT_EQ(vocabulary.out_of_vocabulary_index(), 3U);
}

can::CanFrame timed(std::uint32_t id, double t, std::vector<std::uint8_t> bytes) {
  auto f = frame(id, std::move(bytes));
  f.timestamp_s = t;
  return f;
}

std::vector<float> kd_gat_columns(const WindowGraph& g, std::size_t n) {
  const std::size_t width = g.node_feature_count;
  return {g.node_features.begin() + static_cast<long>(n * width),
          g.node_features.begin() + static_cast<long>(n * width + kNodeFeatureCount)};
}

std::vector<float> extra_columns(const WindowGraph& g, std::size_t n) {
  const std::size_t width = g.node_feature_count;
  return {g.node_features.begin() + static_cast<long>(n * width + kNodeFeatureCount),
          g.node_features.begin() + static_cast<long>((n + 1) * width)};
}

// Frames A@0.0 B@0.1 A@0.3 A@0.4 (A = 10, B = 20), window duration 0.4 s.
// A's gaps 0.3 and 0.1: mean 0.2 -> 0.2 / 0.4 = 0.5; std 0.1, cv 0.5 -> 0.5 / 1.5; min/mean 0.5.
// Duration squashed: (0.4 / 0.1) / (1 + 4) = 0.8. B has one frame: only the duration.
// Payloads of A: {0x0F, 0x00}, {0xF0, 0x00}, {0xF0} (DLC 2, 2, 1).
//   bytes 0F 00 F0 00 F0: counts 0F:1, 00:2, F0:2 over 5 -> entropy 1.5219 bits / 8;
//   flips 0F->F0: 8 bits, F0->F0 (and 00 -> 0): 0 -> 8 / (64 * 2); bytes changed 1 / (8 * 2);
//   DLC mean 5 / 3 / 8.
TEST(WindowGraphBuilder, TimingAndPayloadGroupsMatchHandComputedValues) {
  const std::vector<can::CanFrame> frames = {timed(10, 0.0, {0x0F, 0x00}), timed(20, 0.1, {1}),
                                             timed(10, 0.3, {0xF0, 0x00}), timed(10, 0.4, {0xF0})};
  WindowGraphBuilder builder(WindowConfig{4, 4},
                             NodeFeatureOptions{NodeIdentity::kCanId, true, true});
  WindowGraph g;
  builder.build(frames, keys_of(frames), g);
  ASSERT_EQ(g.node_feature_count, 19U);
  ASSERT_EQ(g.node_features.size(), 2U * 19U);
  const double entropy = -(0.2 * std::log2(0.2) + 2 * 0.4 * std::log2(0.4));
  expect_row(extra_columns(g, 0),
             {0.5, 0.5 / 1.5, 0.5, 0.8, entropy / 8, 8.0 / 128, 1.0 / 16, 5.0 / 24});
  // B: one frame of one byte (entropy 0), no pair to compare.
  expect_row(extra_columns(g, 1), {0, 0, 0, 0.8, 0, 0, 0, 1.0 / 8});
  // The KD-GAT columns are those of a build without the groups.
  WindowGraphBuilder plain(WindowConfig{4, 4});
  WindowGraph p;
  plain.build(frames, keys_of(frames), p);
  for (std::size_t n = 0; n < 2; ++n) EXPECT_EQ(kd_gat_columns(g, n), node_row(p, n)) << n;
}

// Out-of-order timestamps give no negative gaps, and every feature stays in [0, 1].
TEST(WindowGraphBuilder, TimingFeaturesStayInUnitRangeOnDisorderedTimestamps) {
  const std::vector<can::CanFrame> frames = {timed(10, 5.0, {1}), timed(10, 1.0, {2}),
                                             timed(10, 3.0, {3}), timed(20, 2.0, {4})};
  WindowGraphBuilder builder(WindowConfig{4, 4},
                             NodeFeatureOptions{NodeIdentity::kCanId, true, true});
  WindowGraph g;
  builder.build(frames, keys_of(frames), g);
  for (std::size_t n = 0; n < g.num_nodes(); ++n)
    for (const float v : extra_columns(g, n)) {
      EXPECT_GE(v, 0.0F);
      EXPECT_LE(v, 1.0F);
    }
}

// Issue 25 item 9: no finite timestamps give a timing feature outside [0, 1] or NaN. Before, a
// timestamp of 1e308 made the squashed duration inf / inf, and gaps near the largest double made
// the sums of squares overflow.
TEST(WindowGraphBuilder, TimingFeaturesAreFiniteAndInUnitRangeOnExtremeTimestamps) {
  constexpr double kMax = std::numeric_limits<double>::max();
  constexpr double kTiny = std::numeric_limits<double>::denorm_min();
  const std::vector<std::vector<double>> cases = {
      {0.0, 1e308, 5e307, 1e308},                    // the CSV: a huge timestamp
      {-kMax, kMax, -kMax, kMax},                    // differences that overflow a double
      {kMax, -kMax, kMax, 0.0},                      // the same, out of order
      {1e-300, 2e-300, 3e-300, 5e-300},              // gaps of 1e-300 s
      {0.0, kTiny, 2 * kTiny, 3 * kTiny},            // subnormal gaps
      {1e308, 1e308 + 1e292, 1e308, 1e308 + 1e292},  // huge values, tiny gaps
      {-5.0, -4.0, -3.5, -1.0},                      // negative times
      {9e10, -9e10, 9e10, -9e10},                    // the readers' bounds, alternating
  };
  WindowGraphBuilder builder(WindowConfig{4, 4},
                             NodeFeatureOptions{NodeIdentity::kCanId, true, true});
  for (const auto& times : cases) {
    SCOPED_TRACE(::testing::PrintToString(times));
    // A A B A: node A has gaps between three frames, B none.
    const std::vector<can::CanFrame> frames = {timed(10, times[0], {1}), timed(10, times[1], {2}),
                                               timed(20, times[2], {3}), timed(10, times[3], {4})};
    WindowGraph g;
    builder.build(frames, keys_of(frames), g);
    for (std::size_t n = 0; n < g.num_nodes(); ++n)
      for (const float v : extra_columns(g, n)) {
        EXPECT_TRUE(std::isfinite(v)) << "node " << n;
        EXPECT_GE(v, 0.0F) << "node " << n;
        EXPECT_LE(v, 1.0F) << "node " << n;
      }
  }
}

// Frequency rank: C (3 frames) rank 0, then A and B with 2 each (A first: lower ID), D rank 3.
TEST(WindowGraphBuilder, FrequencyRankIdentityRanksNodesByFramesWithinTheWindow) {
  const std::vector<can::CanFrame> frames = {frame(30), frame(10), frame(30), frame(20),
                                             frame(10), frame(30), frame(20), frame(40)};
  WindowGraphBuilder builder(WindowConfig{8, 8}, NodeFeatureOptions{NodeIdentity::kFrequencyRank});
  WindowGraph g;
  builder.build(frames, keys_of(frames), g);
  ASSERT_EQ(g.node_keys, (std::vector<std::uint32_t>{10, 20, 30, 40}));
  std::vector<float> identity;
  for (std::size_t n = 0; n < 4; ++n) identity.push_back(g.node_features[n * 11]);
  EXPECT_EQ(identity, (std::vector<float>{1, 2, 0, 3}));
}

// Ranks past the class count share the last class; the same traffic under other IDs (a new
// vehicle) gets the same identities.
TEST(WindowGraphBuilder, FrequencyRankIsCappedAndDoesNotDependOnTheIds) {
  std::vector<can::CanFrame> frames;
  std::vector<can::CanFrame> renamed;
  for (std::uint32_t id = 0; id < 40; ++id)
    for (std::uint32_t k = 0; k <= 40 - id; ++k) {
      frames.push_back(frame(100 + id));
      renamed.push_back(frame(5000 - 3 * id));
    }
  const WindowConfig config{static_cast<std::uint32_t>(frames.size()), 1};
  WindowGraphBuilder builder(config, NodeFeatureOptions{NodeIdentity::kFrequencyRank});
  WindowGraph g;
  WindowGraph h;
  builder.build(frames, keys_of(frames), g);
  builder.build(renamed, keys_of(renamed), h);
  std::multiset<float> ranks_g;
  std::multiset<float> ranks_h;
  for (std::size_t n = 0; n < 40; ++n) {
    ranks_g.insert(g.node_features[n * 11]);
    ranks_h.insert(h.node_features[n * 11]);
    EXPECT_LE(g.node_features[n * 11], kFrequencyRankClasses - 1);
  }
  EXPECT_EQ(ranks_g, ranks_h);
  EXPECT_EQ(ranks_g.count(static_cast<float>(kFrequencyRankClasses - 1)), 40U - 31U);
  EXPECT_EQ(g.node_features[0], 0.0F);  // ID 100 has the most frames
}

TEST(WindowGraphBuilder, HashedIdentityHashesTheRawId) {
  const std::vector<can::CanFrame> frames = {frame(0x316), frame(0x43F), frame(0x316)};
  WindowGraphBuilder builder(WindowConfig{3, 3}, NodeFeatureOptions{NodeIdentity::kHashedId});
  WindowGraph g;
  builder.build(frames, keys_of(frames), g);
  EXPECT_EQ(g.node_features[0], static_cast<float>(hashed_identity(0x316)));
  EXPECT_EQ(g.node_features[11], static_cast<float>(hashed_identity(0x43F)));
  EXPECT_NE(hashed_identity(0x316), hashed_identity(0x317));
  EXPECT_LT(hashed_identity(0xFFFFFFFF), kHashedIdClasses);
}

TEST(NodeFeatureOptions, NamesRoundTripAndUnknownNamesAreRejected) {
  NodeFeatureOptions options;
  parse_feature_groups({"kd-gat", "payload"}, options);
  EXPECT_FALSE(options.timing);
  EXPECT_TRUE(options.payload);
  EXPECT_EQ(options.count(), 15U);
  EXPECT_EQ(options.group_names(), (std::vector<std::string>{"kd-gat", "payload"}));
  EXPECT_EQ(parse_node_identity("frequency-rank"), NodeIdentity::kFrequencyRank);
  EXPECT_THROW(parse_node_identity("rank"), std::invalid_argument);
  EXPECT_THROW(parse_feature_groups({"timing", "bogus"}, options), std::invalid_argument);
  EXPECT_EQ(identity_classes(NodeFeatureOptions{}, 49), 50U);
  EXPECT_EQ(identity_classes({NodeIdentity::kFrequencyRank}, 49), kFrequencyRankClasses);
}

TEST(NodeFeatureOptions, AGivenIdentityHasTheDatasetsWidthAndClasses) {
  NodeFeatureOptions given{NodeIdentity::kGiven};
  given.given_features = 7;
  given.given_classes = 5;
  EXPECT_EQ(given.count(), 7U);
  EXPECT_EQ(identity_classes(given, 49), 5U);
  EXPECT_EQ(given.group_names(), std::vector<std::string>{"given"});
  EXPECT_EQ(parse_node_identity(node_identity_name(NodeIdentity::kGiven)), NodeIdentity::kGiven);
}

}  // namespace
}  // namespace headroom::graph
