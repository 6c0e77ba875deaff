// Windows cut in chunks, and chunks built on helper threads, give exactly the graphs of the
// definition: the window count formula, each window's frames, and identical stores for any
// thread count, for strides below, equal to and above the window.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "headroom/graph/can_id_vocabulary.hpp"
#include "headroom/graph/window_graph_builder.hpp"
#include "headroom/preprocess/preprocessor.hpp"
#include "headroom/store/graph_store.hpp"
#include "test_support.hpp"

namespace headroom {
namespace {

constexpr std::size_t kRows = 40'000;

can::CanFrame frame_at(std::size_t i) {
  can::CanFrame f;
  f.timestamp_s = static_cast<double>(i) * 1e-3;
  f.id = 0x100 + static_cast<std::uint32_t>((i * 2654435761U) % 23);
  f.dlc = 2;
  f.data[0] = static_cast<std::uint8_t>(i);
  f.data[1] = static_cast<std::uint8_t>(i >> 8);
  f.label = (i % 997) < 5 ? 1 : 0;
  return f;
}

class ChunkedPreprocess : public ::testing::TestWithParam<std::pair<std::uint32_t, std::uint32_t>> {
 protected:
  void SetUp() override {
    std::string text = "timestamp,arbitration_id,data_field,attack\n";
    for (std::size_t i = 0; i < kRows; ++i) {
      const auto f = frame_at(i);
      text += fmt::format("{:.3f},{:X},{:02X}{:02X},{}\n", f.timestamp_s, f.id, f.data[0],
                          f.data[1], f.label);
    }
    testing::write_text_file(dir_ / "data/train_01/big-1.csv", text);
  }
  store::GraphStore build(const std::string& name, unsigned threads) {
    preprocess::PreprocessOptions options;
    options.window = {GetParam().first, GetParam().second};
    options.threads = threads;
    options.progress = 0;
    preprocess::preprocess_dataset(dir_ / "data", dir_ / name, options);
    return store::GraphStore::open(dir_ / name, store::StoreVerification::kFull);
  }
  testing::TempDir dir_;
};

TEST_P(ChunkedPreprocess, MatchesTheDefinitionForAnyThreadCount) {
  const auto [w, s] = GetParam();
  const auto sequential = build("one", 1);
  const auto parallel = build("four", 4);  // one file: three helper threads build its chunks
  const graph::WindowConfig config{w, s};
  ASSERT_EQ(sequential.num_graphs(), config.windows_for(kRows));
  ASSERT_EQ(parallel.num_graphs(), sequential.num_graphs());
  for (const auto& [name, record] : sequential.metadata().arrays) {
    EXPECT_EQ(record.xxh3, parallel.metadata().arrays.at(name).xxh3) << name;
  }
  // Spot-check windows across chunk boundaries against the builder on the right frames.
  const graph::CanIdVocabulary vocabulary(sequential.metadata().vocabulary);
  graph::WindowGraphBuilder builder(config);
  graph::WindowGraph expected;
  for (std::size_t g : {std::size_t{0}, std::size_t{127}, std::size_t{128}, std::size_t{129},
                        sequential.num_graphs() - 1}) {
    std::vector<can::CanFrame> frames;
    std::vector<std::uint32_t> keys;
    for (std::size_t i = g * s; i < g * s + w; ++i) {
      frames.push_back(frame_at(i));
      keys.push_back(vocabulary.index_of(frames.back().id));
    }
    builder.build(frames, keys, expected);
    const auto view = sequential.graph(g);
    ASSERT_EQ(view.num_edges(), expected.num_edges()) << "graph " << g;
    EXPECT_TRUE(std::equal(view.edge_features.begin(), view.edge_features.end(),
                           expected.edge_features.begin()))
        << "graph " << g;
    EXPECT_TRUE(std::equal(view.node_features.begin(), view.node_features.end(),
                           expected.node_features.begin()))
        << "graph " << g;
    EXPECT_EQ(view.label, expected.label) << "graph " << g;
  }
}

INSTANTIATE_TEST_SUITE_P(Strides, ChunkedPreprocess,
                         ::testing::Values(std::pair<std::uint32_t, std::uint32_t>{100, 100},
                                           std::pair<std::uint32_t, std::uint32_t>{100, 30},
                                           std::pair<std::uint32_t, std::uint32_t>{50, 170}));

}  // namespace
}  // namespace headroom
