// End-to-end: CSV fixtures -> preprocess -> graph store, and what the store promises: the same
// graphs as the builder, the training vocabulary, index-list splits, zero-copy tensors, checksums
// and atomic creation.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <fmt/format.h>
#include <fstream>

#include "headroom/graph/window_graph_builder.hpp"
#include "headroom/loader/graph_tensors.hpp"
#include "headroom/preprocess/preprocessor.hpp"
#include "headroom/store/graph_store.hpp"
#include "headroom/store/store_arrays.hpp"
#include "headroom/store/store_builder.hpp"
#include "headroom/store/store_error.hpp"
#include "headroom/util/input_error.hpp"
#include "test_support.hpp"

namespace headroom {
namespace {

using testing::TempDir;
using testing::write_text_file;

struct Row {
  double t;
  std::uint32_t id;
  std::string payload;
  int attack;
};

std::string csv(const std::vector<Row>& rows) {
  std::string text = "timestamp,arbitration_id,data_field,attack\n";
  for (const auto& r : rows)
    text += fmt::format("{:.6f},{:X},{},{}\n", r.t, r.id, r.payload, r.attack);
  return text;
}

// Deterministic pseudo-traffic: `n` rows over `ids`, attacks in [attack_from, attack_to).
std::vector<Row> traffic(std::size_t n, std::vector<std::uint32_t> ids, std::size_t attack_from = 0,
                         std::size_t attack_to = 0) {
  std::vector<Row> rows;
  std::uint64_t state = 12345;
  for (std::size_t i = 0; i < n; ++i) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    const std::uint32_t id = ids[(state >> 33) % ids.size()];
    const auto byte = static_cast<unsigned>((state >> 20) & 0xFF);
    rows.push_back({1000.0 + static_cast<double>(i) * 0.001, id,
                    fmt::format("{:02X}00{:02X}", byte, i % 256),
                    (i >= attack_from && i < attack_to) ? 1 : 0});
  }
  return rows;
}

can::CanFrame to_frame(const Row& r) {
  can::CanFrame f;
  f.timestamp_s = r.t;
  f.id = r.id;
  f.dlc = static_cast<std::uint8_t>(r.payload.size() / 2);
  for (std::size_t b = 0; b < f.dlc; ++b)
    f.data[b] = static_cast<std::uint8_t>(std::stoul(r.payload.substr(2 * b, 2), nullptr, 16));
  f.label = static_cast<std::uint8_t>(r.attack);
  return f;
}

class PreprocessStore : public ::testing::Test {
 protected:
  void SetUp() override {
    train_a_ = traffic(1050, {0x100, 0x200, 0x300});
    train_b_ = traffic(430, {0x100, 0x200, 0x300, 0x400}, 120, 180);
    test_ = traffic(250, {0x100, 0x555, 0x556, 0x300}, 10, 20);
    write_text_file(dir_ / "data/train_01_attack_free/attack-free-1.csv", csv(train_a_));
    write_text_file(dir_ / "data/train_02_with_attacks/DoS-1.csv", csv(train_b_));
    write_text_file(dir_ / "data/test_01_known_vehicle_unknown_attack/spoofing-2.csv", csv(test_));
    write_text_file(dir_ / "data/train_02_with_attacks/masquerade-1.csv", "not,even,a,csv\n");
    options_.threads = 2;
    options_.progress = 0;
  }

  store::GraphStore build() {
    preprocess::preprocess_dataset(dir_ / "data", dir_ / "store", options_);
    return store::GraphStore::open(dir_ / "store", store::StoreVerification::kFull);
  }

  TempDir dir_;
  std::vector<Row> train_a_, train_b_, test_;
  preprocess::PreprocessOptions options_;
};

TEST_F(PreprocessStore, GraphsEqualTheBuilderOnTheSameFrames) {
  const auto store = build();
  const auto& m = store.metadata();
  // Files in order: train_01/attack-free-1, train_02/DoS-1, test_01/spoofing-2 (masquerade left
  // out).
  ASSERT_EQ(m.files.size(), 3U);
  EXPECT_EQ(m.files[0].path, "train_01_attack_free/attack-free-1.csv");
  EXPECT_EQ(m.files[2].path, "test_01_known_vehicle_unknown_attack/spoofing-2.csv");
  EXPECT_EQ(m.excluded_files, std::vector<std::string>{"train_02_with_attacks/masquerade-1.csv"});
  // 1050 rows -> (1050-100)//100+1 = 10 graphs; 430 -> 4; 250 -> 2.
  EXPECT_EQ(m.files[0].graphs, 10U);
  EXPECT_EQ(m.files[1].graphs, 4U);
  EXPECT_EQ(m.files[2].graphs, 2U);
  EXPECT_EQ(m.files[1].attack_rows, 60U);
  ASSERT_EQ(store.num_graphs(), 16U);

  // Vocabulary from training files only; the test file's 0x555/0x556 are out of vocabulary.
  EXPECT_EQ(m.vocabulary, (std::vector<std::uint32_t>{0x100, 0x200, 0x300, 0x400}));
  const graph::CanIdVocabulary vocabulary(m.vocabulary);

  graph::WindowGraphBuilder builder(graph::WindowConfig{});
  graph::WindowGraph expected;
  const std::vector<std::pair<const std::vector<Row>*, std::size_t>> files = {
      {&train_a_, 0}, {&train_b_, 10}, {&test_, 14}};
  for (const auto& [rows, first_graph] : files) {
    for (std::size_t w = 0; first_graph + w < store.num_graphs() && (w + 1) * 100 <= rows->size();
         ++w) {
      std::vector<can::CanFrame> frames;
      std::vector<std::uint32_t> keys;
      for (std::size_t i = w * 100; i < (w + 1) * 100; ++i) {
        frames.push_back(to_frame((*rows)[i]));
        keys.push_back(vocabulary.index_of(frames.back().id));
      }
      builder.build(frames, keys, expected);
      const auto view = store.graph(first_graph + w);
      ASSERT_EQ(view.num_nodes(), expected.num_nodes());
      EXPECT_TRUE(std::equal(view.node_features.begin(), view.node_features.end(),
                             expected.node_features.begin()))
          << "graph " << first_graph + w;
      EXPECT_TRUE(
          std::equal(view.edge_index.begin(), view.edge_index.end(), expected.edge_index.begin()));
      EXPECT_TRUE(std::equal(view.edge_features.begin(), view.edge_features.end(),
                             expected.edge_features.begin()));
      EXPECT_EQ(view.label, expected.label);
    }
  }
  // Out-of-vocabulary test nodes have feature 0 = K and no single CAN ID.
  const auto test_graph = store.graph(14);
  bool saw_oov = false;
  for (std::size_t n = 0; n < test_graph.num_nodes(); ++n) {
    if (test_graph.node_features[n * 11] == 4.0F) {
      saw_oov = true;
      EXPECT_EQ(test_graph.node_can_ids[n], store::arrays::kOutOfVocabularyCanId);
    }
  }
  EXPECT_TRUE(saw_oov);
}

// Frequency-rank identity with the timing and payload groups: every graph equals the builder's on
// raw CAN-ID keys -- the test file's unknown IDs 0x555 and 0x556 stay two nodes, where CAN-ID
// identity merges them into the out-of-vocabulary node -- and the models' inputs follow the store.
TEST_F(PreprocessStore, IdAgnosticFeaturesKeepUnknownIdsApartAndEqualTheBuilder) {
  options_.features = {graph::NodeIdentity::kFrequencyRank, true, true};
  const auto store = build();
  const auto& m = store.metadata();
  EXPECT_EQ(m.node_feature_count, 19U);
  EXPECT_EQ(store::identity_classes(m), graph::kFrequencyRankClasses);
  graph::WindowGraphBuilder builder(graph::WindowConfig{}, options_.features);
  graph::WindowGraph expected;
  const std::vector<std::pair<const std::vector<Row>*, std::size_t>> files = {
      {&train_a_, 0}, {&train_b_, 10}, {&test_, 14}};
  for (const auto& [rows, first_graph] : files) {
    for (std::size_t w = 0; (w + 1) * 100 <= rows->size() && first_graph + w < 16; ++w) {
      std::vector<can::CanFrame> frames;
      std::vector<std::uint32_t> keys;
      for (std::size_t i = w * 100; i < (w + 1) * 100; ++i) {
        frames.push_back(to_frame((*rows)[i]));
        keys.push_back(frames.back().id);
      }
      builder.build(frames, keys, expected);
      const auto view = store.graph(first_graph + w);
      ASSERT_EQ(view.num_nodes(), expected.num_nodes()) << "graph " << first_graph + w;
      EXPECT_TRUE(std::equal(view.node_features.begin(), view.node_features.end(),
                             expected.node_features.begin()))
          << "graph " << first_graph + w;
      EXPECT_TRUE(std::equal(view.node_can_ids.begin(), view.node_can_ids.end(),
                             expected.node_keys.begin()));
    }
  }
  EXPECT_EQ(store.graph(14).num_nodes(), 4U) << "0x100, 0x300, 0x555 and 0x556";
}

TEST_F(PreprocessStore, SizeIndexLabelsAndSplitsAreIndexListsIntoOneStore) {
  const auto store = build();
  const auto index = store.size_index();
  const auto& m = store.metadata();
  // DoS-1.csv has attacks in rows 120..179: its windows 1 (100..199) only.
  EXPECT_EQ(index.label[10], 0);
  EXPECT_EQ(index.label[11], 1);
  EXPECT_EQ(index.label[12], 0);
  EXPECT_EQ(index.label[14], 1);  // test rows 10..19
  EXPECT_EQ(m.attack_types[index.attack_type[11]], "dos");
  EXPECT_EQ(m.attack_types[index.attack_type[15]], "spoofing");
  EXPECT_EQ(m.splits[index.split[15]].role, "test");
  EXPECT_EQ(index.window[12], 2U);

  // 14 training graphs: round(0.2 * 14) = 3 validation; train and validation are disjoint.
  const auto train = store.train_ids();
  const auto validation = store.validation_ids();
  EXPECT_EQ(validation.size(), 3U);
  EXPECT_EQ(train.size(), 11U);
  std::vector<std::uint32_t> all(train.begin(), train.end());
  all.insert(all.end(), validation.begin(), validation.end());
  std::sort(all.begin(), all.end());
  for (std::uint32_t g = 0; g < 14; ++g) EXPECT_EQ(all[g], g);
  EXPECT_EQ(std::vector<std::uint32_t>(store.test_ids().begin(), store.test_ids().end()),
            (std::vector<std::uint32_t>{14, 15}));

  // Same seed: same split. Another seed: another split.
  const auto again =
      store::split_train_validation(std::vector<std::uint32_t>(all.begin(), all.end()), 0.2, 42);
  EXPECT_EQ(again.validation, std::vector<std::uint32_t>(validation.begin(), validation.end()));
  const auto other =
      store::split_train_validation(std::vector<std::uint32_t>(all.begin(), all.end()), 0.2, 7);
  EXPECT_NE(other.validation, again.validation);
}

TEST_F(PreprocessStore, TensorsAreZeroCopyViewsOfTheMapping) {
  const auto store = build();
  const auto tensors = loader::graph_tensors(store, 3);
  const auto view = store.graph(3);
  EXPECT_EQ(tensors.x.data_ptr<float>(), view.node_features.data());
  EXPECT_EQ(tensors.x.size(0), static_cast<std::int64_t>(view.num_nodes()));
  EXPECT_EQ(tensors.x.size(1), 11);
  EXPECT_EQ(tensors.edge_index.size(0), 2);
  EXPECT_EQ(tensors.edge_index.size(1), static_cast<std::int64_t>(view.num_edges()));
  EXPECT_EQ(tensors.edge_index[0][1].item<int>(), view.edge_index[2]);
  EXPECT_EQ(tensors.edge_index[1][1].item<int>(), view.edge_index[3]);
  EXPECT_EQ(tensors.edge_attr.data_ptr<float>(), view.edge_features.data());
  // Tensors keep the mapping alive after the store object is gone.
  torch::Tensor whole;
  {
    const auto reopened = store::GraphStore::open(dir_ / "store");
    whole = loader::array_tensor(reopened, store::arrays::kNodeFeatures);
  }
  EXPECT_EQ(whole.size(0), static_cast<std::int64_t>(store.metadata().num_nodes));
  EXPECT_FLOAT_EQ(whole[0][0].item<float>(),
                  view.node_features.empty() ? 0.0F : store.graph(0).node_features[0]);
}

TEST_F(PreprocessStore, ExistingStoreNeedsForceAndIsReplacedWhole) {
  build();
  EXPECT_THROW(preprocess::preprocess_dataset(dir_ / "data", dir_ / "store", options_),
               std::runtime_error);
  options_.overwrite = true;
  options_.window.window = 50;
  options_.window.stride = 50;
  preprocess::preprocess_dataset(dir_ / "data", dir_ / "store", options_);
  const auto store = store::GraphStore::open(dir_ / "store", store::StoreVerification::kFull);
  EXPECT_EQ(store.metadata().window, 50U);
  EXPECT_EQ(store.metadata().files[0].graphs, 21U);  // (1050-50)//50+1
  // No temporary directories are left next to the store.
  for (const auto& entry : std::filesystem::directory_iterator(dir_.path())) {
    EXPECT_EQ(entry.path().filename().string().find(".tmp-"), std::string::npos) << entry.path();
  }
}

TEST_F(PreprocessStore, MalformedRowStopsTheRunNamingFileLineAndColumnAndWritesNoStore) {
  write_text_file(dir_ / "data/test_01_known_vehicle_unknown_attack/spoofing-2.csv",
                  "timestamp,arbitration_id,data_field,attack\n1.0,100,00,0\n2.0,10G,00,0\n");
  try {
    preprocess::preprocess_dataset(dir_ / "data", dir_ / "store", options_);
    FAIL() << "expected an error";
  } catch (const util::InputError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("spoofing-2.csv:3"), std::string::npos) << message;
    EXPECT_NE(message.find("arbitration_id"), std::string::npos) << message;
  }
  EXPECT_FALSE(std::filesystem::exists(dir_ / "store"));
  for (const auto& entry : std::filesystem::directory_iterator(dir_.path())) {
    EXPECT_EQ(entry.path().filename().string().find(".tmp-"), std::string::npos) << entry.path();
  }
}

TEST_F(PreprocessStore, SkipPolicyDropsAndCountsBadRowsPerFile) {
  auto rows = csv(test_);
  rows += "9.0,ZZZ,00,0\n9.1,100,0,0\n";
  write_text_file(dir_ / "data/test_01_known_vehicle_unknown_attack/spoofing-2.csv", rows);
  options_.reader.on_bad_row = can::BadRowPolicy::kSkip;
  const auto report = preprocess::preprocess_dataset(dir_ / "data", dir_ / "store", options_);
  EXPECT_EQ(report.skipped_rows, 2U);
  EXPECT_EQ(report.files[2].skipped_rows, 2U);
  EXPECT_EQ(report.files[2].rows, 250U);
  const auto store = store::GraphStore::open(dir_ / "store");
  EXPECT_EQ(store.metadata().files[2].skipped_rows, 2U);
}

TEST_F(PreprocessStore, DatasetErrorsAreOneLineAndLeaveNoStore) {
  EXPECT_THROW(preprocess::preprocess_dataset(dir_ / "missing", dir_ / "store", options_),
               std::runtime_error);
  write_text_file(dir_ / "empty_ds/train_01/x.csv", "");
  EXPECT_THROW(preprocess::preprocess_dataset(dir_ / "empty_ds", dir_ / "store", options_),
               util::InputError);
  write_text_file(dir_ / "no_train/test_01/x.csv", csv(test_));
  try {
    preprocess::preprocess_dataset(dir_ / "no_train", dir_ / "store", options_);
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("no training"), std::string::npos) << e.what();
  }
  write_text_file(dir_ / "bad_parquet/train_01/x.parquet", "PAR1 this is not parquet");
  EXPECT_THROW(preprocess::preprocess_dataset(dir_ / "bad_parquet", dir_ / "store", options_),
               util::InputError);
  write_text_file(dir_ / "header_only/train_01/x.csv",
                  "timestamp,arbitration_id,data_field,attack\n");
  EXPECT_THROW(preprocess::preprocess_dataset(dir_ / "header_only", dir_ / "store", options_),
               util::InputError);
  EXPECT_FALSE(std::filesystem::exists(dir_ / "store"));
}

TEST_F(PreprocessStore, CorruptionIsDetectedOnOpen) {
  build();
  // A flipped byte in the size index fails the default open; in graph data, the full verification.
  auto flip = [&](const std::string& file) {
    std::fstream f(dir_ / "store" / file, std::ios::in | std::ios::out | std::ios::binary);
    char c = 0;
    f.seekg(3);
    f.get(c);
    f.seekp(3);
    f.put(static_cast<char>(c ^ 0x5A));
  };
  flip("graph_num_edges.u32");
  EXPECT_THROW(store::GraphStore::open(dir_ / "store"), store::StoreError);
  flip("graph_num_edges.u32");
  EXPECT_NO_THROW(store::GraphStore::open(dir_ / "store"));
  flip("edge_features.f32");
  EXPECT_NO_THROW(store::GraphStore::open(dir_ / "store"));
  EXPECT_THROW(store::GraphStore::open(dir_ / "store", store::StoreVerification::kFull),
               store::StoreError);
  std::filesystem::resize_file(dir_ / "store/edge_features.f32", 8);
  EXPECT_THROW(store::GraphStore::open(dir_ / "store"), store::StoreError);
}

TEST_F(PreprocessStore, UncommittedBuildNeverOpensAsAStore) {
  {
    store::StoreBuilder builder(dir_ / "store", false);
    auto segment = builder.open_segment(0, store::SegmentKeys::kRawCanIds);
    graph::WindowGraph g;
    g.node_keys = {1};
    g.node_features.assign(11, 0.0F);
    segment->append(g, 0);
    segment->finish();
    // Killed here: the manifest was never written and nothing was renamed into place.
    EXPECT_THROW(store::GraphStore::open(builder.temporary_directory()), store::StoreError);
  }
  EXPECT_FALSE(std::filesystem::exists(dir_ / "store"));
}

}  // namespace
}  // namespace headroom
