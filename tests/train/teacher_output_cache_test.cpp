// The teacher output cache: per-graph GAT logits and per-node VGAE outputs equal the teacher's own
// forward on any batch, a stale or damaged cache is rebuilt, never used, and a distilled student
// trains the same with the cache as with the teacher in memory.
#include "headroom/train/caches/teacher_output_cache.hpp"

#include <gtest/gtest.h>

#include <torch/torch.h>

#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "headroom/loader/collate.hpp"
#include "headroom/models/gat_with_jk.hpp"
#include "headroom/models/vgae.hpp"
#include "headroom/store/graph_store.hpp"
#include "headroom/train/families/model_checkpoint.hpp"
#include "test_support.hpp"

namespace headroom {
namespace {

using train::TeacherCacheSettings;
using train::TeacherForward;
using train::TeacherOutputCache;
using train::TeacherRows;

nlohmann::json read_json(const std::filesystem::path& file) {
  std::ifstream in(file);
  return nlohmann::json::parse(in);
}

std::string read_text(const std::filesystem::path& file) {
  std::ifstream in(file);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

class TeacherOutputCacheTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::TempDir();
    store_path_ = testing::build_synthetic_store(dir_->path(), 20000);
  }
  static void TearDownTestSuite() { delete dir_; }

  void SetUp() override { store_.emplace(store::GraphStore::open(store_path_)); }

  const store::GraphStore& store() const { return *store_; }
  std::int64_t num_ids() const {
    return static_cast<std::int64_t>(store().metadata().vocabulary.size()) + 1;
  }

  // A GAT with random weights (seeded), saved as a checkpoint; returned in eval mode.
  models::GATWithJK save_gat(const std::filesystem::path& file, std::uint64_t seed,
                             models::ModelSize size = models::ModelSize::kStudent) const {
    torch::manual_seed(seed);
    auto config = models::gat_preset(size, num_ids());
    models::GATWithJK model(config);
    train::CheckpointInfo info;
    info.kind = "gat";
    info.model_config = config;
    train::save_model_checkpoint(file, *model, info);
    model->eval();
    return model;
  }

  // A VGAE with random weights: the student preset with `latent` latent dimensions.
  models::VGAE save_vgae(const std::filesystem::path& file, std::uint64_t seed,
                         std::int64_t latent = 16) const {
    torch::manual_seed(seed);
    auto config = models::vgae_preset(models::ModelSize::kStudent, num_ids());
    config.latent = latent;
    models::VGAE model(config);
    train::CheckpointInfo info;
    info.kind = "vgae";
    info.model_config = config;
    train::save_model_checkpoint(file, *model, info);
    model->eval();
    return model;
  }

  TeacherCacheSettings gat_settings(const std::filesystem::path& teacher) const {
    TeacherCacheSettings settings;
    settings.file = dir_->path() / "gat" / "teacher_outputs.bin";
    std::filesystem::create_directories(settings.file.parent_path());
    settings.teacher_checkpoint = teacher;
    settings.spec = {TeacherRows::kPerGraph, {{"logits", 2}}};
    settings.batch_size = 7;  // several batches, none aligned with the lookups below
    return settings;
  }

  // Every graph but each third: a lookup of those must fail.
  std::vector<std::uint32_t> some_ids() const {
    std::vector<std::uint32_t> ids;
    for (std::uint32_t g = 0; g < store().num_graphs(); ++g)
      if (g % 3 != 0) ids.push_back(g);
    return ids;
  }

  // Graph ids in another order than the cache's batches: descending, every other cached one.
  std::vector<std::uint32_t> lookup_ids(std::size_t count) const {
    std::vector<std::uint32_t> ids;
    for (auto g = static_cast<std::int64_t>(store().num_graphs()) - 1; g >= 0 && ids.size() < count;
         g -= 2)
      if (g % 3 != 0) ids.push_back(static_cast<std::uint32_t>(g));
    return ids;
  }

  static TeacherForward gat_forward(models::GATWithJK model) {
    return [model](const loader::GraphBatch& batch) mutable {
      return std::vector<at::Tensor>{
          model->forward(batch.x, batch.edge_index, batch.batch, batch.num_graphs)};
    };
  }

  static inline testing::TempDir* dir_ = nullptr;
  static inline std::filesystem::path store_path_;
  std::optional<store::GraphStore> store_;
};

void expect_close(const at::Tensor& actual, const at::Tensor& expected) {
  ASSERT_EQ(actual.sizes(), expected.sizes());
  EXPECT_EQ(actual.scalar_type(), torch::kFloat);
  const double difference = (actual - expected.to(torch::kFloat)).abs().max().item<double>();
  EXPECT_LE(difference, 1e-5);
}

TEST_F(TeacherOutputCacheTest, GatLogitsEqualTheTeachersForwardOnAnyBatch) {
  const auto teacher_file = dir_->path() / "gat_a.pt";
  auto teacher = save_gat(teacher_file, 1);
  const auto settings = gat_settings(teacher_file);
  const auto ids = some_ids();
  int forwards_made = 0;
  auto make_forward = [&] {
    ++forwards_made;
    return gat_forward(teacher);
  };
  const auto cache = TeacherOutputCache::open_or_build(settings, store(), ids, make_forward);
  EXPECT_FALSE(cache.reused());
  EXPECT_EQ(forwards_made, 1);
  EXPECT_EQ(cache.cached_graphs(), ids.size());
  EXPECT_EQ(cache.num_rows(), static_cast<std::int64_t>(ids.size()));
  EXPECT_NE(cache.summary().find("teacher outputs cached: " + std::to_string(ids.size())),
            std::string::npos)
      << cache.summary();

  const auto batch = loader::collate(store(), lookup_ids(25));
  at::Tensor expected;
  {
    torch::NoGradGuard no_grad;
    expected = teacher->forward(batch.x, batch.edge_index, batch.batch, batch.num_graphs);
  }
  const auto outputs = cache.lookup(batch);
  ASSERT_EQ(outputs.size(), 1U);
  expect_close(outputs[0], expected);

  // A graph that was not computed is an error, not a row of zeros.
  const std::vector<std::uint32_t> with_missing = {ids[0], 3, ids[1]};
  EXPECT_FALSE(cache.contains(3));
  EXPECT_THROW(cache.lookup(loader::collate(store(), with_missing)), std::out_of_range);

  // Reopened with the same key: no teacher forward at all.
  const auto again = TeacherOutputCache::open_or_build(settings, store(), ids, make_forward);
  EXPECT_TRUE(again.reused());
  EXPECT_EQ(forwards_made, 1);
  EXPECT_NE(again.summary().find("teacher outputs reused"), std::string::npos);
  expect_close(again.lookup(batch)[0], expected);

  // Asked for more graphs than it holds: rebuilt.
  std::string why_not;
  EXPECT_FALSE(
      TeacherOutputCache::open(settings, store(), std::vector<std::uint32_t>{3}, &why_not));
  EXPECT_NE(why_not.find("graph 3 not cached"), std::string::npos) << why_not;
}

TEST_F(TeacherOutputCacheTest, VgaeLatentsAndReconstructionsFollowTheBatchsNodeOrder) {
  const auto teacher_file = dir_->path() / "vgae.pt";
  auto teacher = save_vgae(teacher_file, 2);
  TeacherCacheSettings settings;
  settings.file = dir_->path() / "vgae" / "teacher_outputs.bin";
  std::filesystem::create_directories(settings.file.parent_path());
  settings.teacher_checkpoint = teacher_file;
  const auto latent = teacher->config().latent;
  const auto features = teacher->config().in_features - 1;
  settings.spec = {TeacherRows::kPerNode, {{"z", latent}, {"reconstruction", features}}};
  settings.batch_size = 5;
  const auto ids = some_ids();
  const auto cache = TeacherOutputCache::build(
      settings, store(), ids, [model = teacher](const auto& batch) mutable {
        auto out = model->forward(batch.x, batch.edge_index);
        return std::vector<at::Tensor>{out.z, out.reconstruction};
      });
  std::int64_t nodes = 0;
  for (const auto id : ids) nodes += store().size_index().num_nodes[id];
  EXPECT_EQ(cache.num_rows(), nodes);
  EXPECT_EQ(cache.width(), latent + features);

  const auto batch = loader::collate(store(), lookup_ids(9));
  models::VgaeOutput expected;
  {
    torch::NoGradGuard no_grad;
    expected = teacher->forward(batch.x, batch.edge_index);
  }
  const auto outputs = cache.lookup(batch);
  ASSERT_EQ(outputs.size(), 2U);
  ASSERT_EQ(outputs[0].size(0), batch.num_nodes);
  expect_close(outputs[0], expected.z);
  expect_close(outputs[1], expected.reconstruction);
  EXPECT_FALSE(torch::allclose(outputs[0], torch::zeros_like(outputs[0])));

  // The rows of one graph alone are that graph's slice of the batch.
  const std::vector<std::uint32_t> second = {lookup_ids(9)[1]};
  const auto first_nodes = store().size_index().num_nodes[lookup_ids(9)[0]];
  const auto single = cache.lookup(loader::collate(store(), second));
  expect_close(single[0], expected.z.narrow(0, first_nodes, single[0].size(0)));
}

TEST_F(TeacherOutputCacheTest, AnotherTeacherRebuilds) {
  const auto teacher_file = dir_->path() / "gat_b.pt";
  auto first = save_gat(teacher_file, 3);
  const auto settings = gat_settings(teacher_file);
  const auto ids = some_ids();
  TeacherOutputCache::build(settings, store(), ids, gat_forward(first));
  ASSERT_TRUE(TeacherOutputCache::open(settings, store(), ids));

  auto second = save_gat(teacher_file, 4);  // same path and size, other weights
  std::string why_not;
  EXPECT_FALSE(TeacherOutputCache::open(settings, store(), ids, &why_not));
  EXPECT_NE(why_not.find("key changed: teacher"), std::string::npos) << why_not;
  const auto cache = TeacherOutputCache::open_or_build(settings, store(), ids,
                                                       [&] { return gat_forward(second); });
  EXPECT_FALSE(cache.reused());
  EXPECT_EQ(cache.rebuild_reason(), why_not);

  const auto batch = loader::collate(store(), lookup_ids(10));
  torch::NoGradGuard no_grad;
  const auto old_logits = first->forward(batch.x, batch.edge_index, batch.batch, batch.num_graphs);
  const auto new_logits = second->forward(batch.x, batch.edge_index, batch.batch, batch.num_graphs);
  ASSERT_GT((old_logits - new_logits).abs().max().item<double>(), 1e-3);
  expect_close(cache.lookup(batch)[0], new_logits);

  // Another precision is another key too.
  auto bf16 = settings;
  bf16.precision = train::Precision::kBf16Mixed;
  EXPECT_FALSE(TeacherOutputCache::open(bf16, store(), ids, &why_not));
  EXPECT_NE(why_not.find("precision"), std::string::npos) << why_not;
}

TEST_F(TeacherOutputCacheTest, DamagedCacheIsRebuiltNotUsed) {
  const auto teacher_file = dir_->path() / "gat_c.pt";
  auto teacher = save_gat(teacher_file, 5);
  const auto settings = gat_settings(teacher_file);
  const auto ids = some_ids();
  const auto sidecar = std::filesystem::path(settings.file).replace_extension(".json");
  const auto batch = loader::collate(store(), lookup_ids(12));
  at::Tensor expected;
  {
    torch::NoGradGuard no_grad;
    expected = teacher->forward(batch.x, batch.edge_index, batch.batch, batch.num_graphs);
  }
  int forwards_made = 0;
  auto rebuild = [&] {
    ++forwards_made;
    return gat_forward(teacher);
  };
  auto expect_rebuilt = [&](const std::string& reason) {
    std::string why_not;
    EXPECT_FALSE(TeacherOutputCache::open(settings, store(), ids, &why_not));
    EXPECT_NE(why_not.find(reason), std::string::npos) << why_not;
    const int before = forwards_made;
    const auto cache = TeacherOutputCache::open_or_build(settings, store(), ids, rebuild);
    EXPECT_FALSE(cache.reused());
    EXPECT_EQ(forwards_made, before + 1);
    expect_close(cache.lookup(batch)[0], expected);
  };

  TeacherOutputCache::build(settings, store(), ids, gat_forward(teacher));
  const auto size = std::filesystem::file_size(settings.file);
  std::filesystem::resize_file(settings.file, size - 4);  // killed mid-write, renamed anyway
  expect_rebuilt("bytes, expected");

  {  // one flipped bit in the last row
    std::fstream file(settings.file, std::ios::in | std::ios::out | std::ios::binary);
    file.seekg(static_cast<std::streamoff>(size - 2));
    char byte = 0;
    file.read(&byte, 1);
    byte = static_cast<char>(byte ^ 0x10);
    file.seekp(static_cast<std::streamoff>(size - 2));
    file.write(&byte, 1);
  }
  expect_rebuilt("checksum mismatch");

  std::filesystem::remove(sidecar);  // a build killed before its key was written
  expect_rebuilt("no cache yet");

  testing::write_text_file(sidecar, "{\"key\": ");
  expect_rebuilt("unreadable");

  std::filesystem::remove(settings.file);
  expect_rebuilt("no .bin");
  // No temporary file is left behind.
  std::size_t files = 0;
  for ([[maybe_unused]] const auto& entry :
       std::filesystem::directory_iterator(settings.file.parent_path()))
    ++files;
  EXPECT_EQ(files, 2U);
}

// The done-means: a distilled GAT student trains the same with the teacher's outputs from
// the cache as with the teacher in memory, and holds less memory doing it.
TEST_F(TeacherOutputCacheTest, DistilledStudentTrainsTheSameWithTheCache) {
  const auto runs = dir_->path() / "e2e";
  std::filesystem::create_directories(runs);
  // An untrained teacher of the big preset: what matters is that both students see the same one.
  const auto teacher = runs / "teacher.pt";
  save_gat(teacher, 6, models::ModelSize::kTeacher);
  const std::string common = " --store " + store_path_.string() +
                             " --batch-size 32 --threads 1 --progress false --max-epochs 2"
                             " --patience 5 2>&1";
  std::string output;
  auto student = [&](bool cache) {
    return std::string(HEADROOM_BINARY) +
           " normal --preset gat,student --use-kd true --teacher-path " + teacher.string() +
           " --use-teacher-cache " + (cache ? "true" : "false") + " --runs-dir " +
           (runs / (cache ? "cached" : "in_memory")).string() + common;
  };
  ASSERT_EQ(testing::run_command(student(true), &output), 0) << output;
  EXPECT_NE(output.find("teacher outputs cached: "), std::string::npos) << output;
  ASSERT_EQ(testing::run_command(student(false), &output), 0) << output;
  EXPECT_EQ(output.find("teacher outputs"), std::string::npos) << output;

  const auto cached = runs / "cached" / "store" / "student_normal_kd";
  const auto in_memory = runs / "in_memory" / "store" / "student_normal_kd";
  EXPECT_TRUE(std::filesystem::exists(cached / "teacher_outputs.bin"));
  EXPECT_TRUE(std::filesystem::exists(cached / "teacher_outputs.json"));
  EXPECT_FALSE(std::filesystem::exists(in_memory / "teacher_outputs.bin"));
  const auto a = testing::read_metrics(cached / "metrics.jsonl");
  const auto b = testing::read_metrics(in_memory / "metrics.jsonl");
  ASSERT_EQ(a.size(), 2U);
  ASSERT_EQ(b.size(), 2U);
  for (std::size_t e = 0; e < a.size(); ++e) {
    SCOPED_TRACE(e);
    const double train_loss = b[e]["train_loss"].get<double>();
    const double validation_loss = b[e]["validation_loss"].get<double>();
    EXPECT_NEAR(a[e]["train_loss"].get<double>(), train_loss, 1e-4 * std::abs(train_loss));
    EXPECT_NEAR(a[e]["validation_loss"].get<double>(), validation_loss,
                1e-4 * std::abs(validation_loss));
    EXPECT_NEAR(a[e]["validation"]["f1"].get<double>(), b[e]["validation"]["f1"].get<double>(),
                1e-9);
  }
  const auto result_a = read_json(cached / "result.json")["training"];
  const auto result_b = read_json(in_memory / "result.json")["training"];
  EXPECT_NEAR(result_a["best_metrics"]["f1"].get<double>(),
              result_b["best_metrics"]["f1"].get<double>(), 1e-9);
  // No teacher weights and no teacher forward during training.
  EXPECT_LT(result_a["peak_tensor_bytes"].get<std::int64_t>(),
            result_b["peak_tensor_bytes"].get<std::int64_t>());
  std::cout << "[ peak ] cached " << result_a["peak_tensor_bytes"] << " B, in memory "
            << result_b["peak_tensor_bytes"] << " B; cache "
            << std::filesystem::file_size(cached / "teacher_outputs.bin") << " B\n";

  // Resumed (after its last epoch) and finished runs reuse the cache.
  std::filesystem::remove(cached / "result.json");
  ASSERT_EQ(testing::run_command(student(true), &output), 0) << output;
  EXPECT_NE(output.find("resuming"), std::string::npos) << output;
  EXPECT_NE(output.find("teacher outputs reused"), std::string::npos) << output;
  ASSERT_EQ(testing::run_command(student(true), &output), 0) << output;
  EXPECT_NE(output.find("already complete"), std::string::npos) << output;
  EXPECT_NE(read_text(cached / "log.txt").find("teacher outputs reused"), std::string::npos);
}

// The same for the VGAE student: per-node latents and reconstructions from the cache, looked up
// by each batch's graphs, give the losses of the teacher in memory.
TEST_F(TeacherOutputCacheTest, DistilledAutoencoderTrainsTheSameWithTheCache) {
  const auto runs = dir_->path() / "e2e_vgae";
  std::filesystem::create_directories(runs);
  const auto teacher = runs / "teacher.pt";
  save_vgae(teacher, 7, /*latent=*/12);  // the projection maps the student's 16 onto 12
  auto student = [&](bool cache, const std::string& extra = "") {
    return std::string(HEADROOM_BINARY) +
           " autoencoder --preset vgae,student --use-kd true --teacher-path " + teacher.string() +
           " --use-teacher-cache " + (cache ? "true" : "false") + " --runs-dir " +
           (runs / (cache ? "cached" : "in_memory")).string() + " --store " + store_path_.string() +
           " --batch-size 16 --threads 1 --progress false --max-epochs 2 --patience 5 " + extra +
           " 2>&1";
  };
  std::string output;
  ASSERT_EQ(testing::run_command(student(true), &output), 0) << output;
  EXPECT_NE(output.find("teacher outputs cached: "), std::string::npos) << output;
  ASSERT_EQ(testing::run_command(student(false), &output), 0) << output;
  const auto a =
      testing::read_metrics(runs / "cached" / "store" / "student_autoencoder_kd" / "metrics.jsonl");
  const auto b = testing::read_metrics(runs / "in_memory" / "store" / "student_autoencoder_kd" /
                                       "metrics.jsonl");
  ASSERT_EQ(a.size(), 2U);
  ASSERT_EQ(b.size(), 2U);
  for (std::size_t e = 0; e < a.size(); ++e) {
    SCOPED_TRACE(e);
    for (const char* key : {"train_loss", "validation_loss"}) {
      const double expected = b[e][key].get<double>();
      EXPECT_NEAR(a[e][key].get<double>(), expected, 1e-4 * std::abs(expected)) << key;
    }
  }

  // Out of memory in training: the OOM guard's micro-batches look up their own graphs' rows.
  ASSERT_EQ(testing::run_command(
                "HEADROOM_INJECT_OOM=40:3:16384:step " + student(true, "--resume false"), &output),
            0)
      << output;
  EXPECT_NE(output.find("teacher outputs reused"), std::string::npos) << output;
  const auto split =
      testing::read_metrics(runs / "cached" / "store" / "student_autoencoder_kd" / "metrics.jsonl");
  ASSERT_EQ(split.size(), 2U);
  EXPECT_EQ(split[0]["oom_events"].get<std::int64_t>(), 3);
  EXPECT_GE(split[0]["max_micro_batches"].get<std::int64_t>(), 2);
}

}  // namespace
}  // namespace headroom
