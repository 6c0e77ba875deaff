// Data-parallel training on c10d's Gloo over loopback, each rank a separate headroom process
// started the way torchrun starts them (testing::LocalJob): N ranks train like one process on N
// times the batch, every graph is trained once per epoch on some rank, only rank 0 writes, rank 0
// alone builds the caches the others read, and a lost rank ends the job with an error naming it.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <chrono>
#include <cmath>
#include <csignal>
#include <string>
#include <thread>
#include <vector>

#include "headroom/models/gat_with_jk.hpp"
#include "headroom/store/graph_store.hpp"
#include "headroom/train/families/model_checkpoint.hpp"
#include "test_support.hpp"

namespace headroom {
namespace {

class DataParallelTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::TempDir();
    store_ = new std::filesystem::path(testing::build_synthetic_store(dir_->path(), 24000, 11));
  }
  static void TearDownTestSuite() {
    delete store_;
    delete dir_;
  }
  static std::size_t training_graphs() {
    return store::GraphStore::open(*store_).train_ids().size();
  }
  // A batch size B for which batches of 2B in one process are pairs of consecutive batches of B
  // dealt to two ranks: the last pair must not be cut (the epoch's remainder mod 2B is 0 or more
  // than B). 0 when none of those tried is.
  static std::size_t batch_dealt_in_pairs() {
    const auto graphs = training_graphs();
    for (const std::size_t candidate : {8, 7, 9, 6, 10, 11, 5, 12}) {
      const auto remainder = graphs % (2 * candidate);
      if (remainder == 0 || remainder > candidate) return candidate;
    }
    return 0;
  }
  static inline testing::TempDir* dir_ = nullptr;
  static inline std::filesystem::path* store_ = nullptr;
};

std::string train_command(const std::filesystem::path& store, const std::filesystem::path& runs,
                          std::size_t batch_size, const std::string& extra = "", int epochs = 2) {
  return std::string(HEADROOM_TRAIN_BINARY) + " normal --store " + store.string() + " --runs-dir " +
         runs.string() +
         " --preset gat,student --dropout 0 --patience 10 --threads 1 --progress false"
         " --seed 3 --max-epochs " +
         std::to_string(epochs) + " --batch-size " + std::to_string(batch_size) + " " + extra;
}

std::size_t occurrences(const std::string& text, const std::string& what) {
  std::size_t count = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++count;
  return count;
}

std::size_t files_under(const std::filesystem::path& dir) {
  if (!std::filesystem::exists(dir)) return 0;
  std::size_t count = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir))
    count += entry.is_regular_file() ? 1 : 0;
  return count;
}

std::string logs(const testing::LocalJob& job, int ranks) {
  std::string text;
  for (int r = 0; r < ranks; ++r) text += "--- rank " + std::to_string(r) + "\n" + job.log(r);
  return text;
}

// ||a - b|| <= tolerance * ||b|| for every parameter of the two GAT checkpoints.
void expect_same_weights(const std::filesystem::path& a, const std::filesystem::path& b,
                         double tolerance) {
  auto model_a = train::load_gat_checkpoint(a, torch::kCPU);
  auto model_b = train::load_gat_checkpoint(b, torch::kCPU);
  const auto pa = model_a->named_parameters();
  const auto pb = model_b->named_parameters();
  ASSERT_EQ(pa.size(), pb.size());
  for (const auto& item : pa) {
    const auto& reference = pb[item.key()];
    const double difference = (item.value() - reference).norm().item<double>();
    EXPECT_LE(difference, tolerance * reference.norm().item<double>()) << item.key();
  }
}

TEST_F(DataParallelTest, TwoRanksOfBatchBTrainLikeOneProcessOfBatch2B) {
  const auto graphs = training_graphs();
  const auto batch = batch_dealt_in_pairs();
  ASSERT_GT(batch, 0U) << graphs << " training graphs";
  const auto single_runs = dir_->path() / "single";
  std::string output;
  ASSERT_EQ(testing::run_command(train_command(*store_, single_runs, 2 * batch,
                                               "--pack-batches false --calibration none"),
                                 &output),
            0)
      << output;

  // Rank 1 gets a runs directory of its own, which must stay empty: only rank 0 writes. (Without
  // calibration, which reads best.pt back, rank 1 reads nothing from its runs directory.)
  const auto ranks_runs = dir_->path() / "two_ranks";
  const auto rank1_runs = dir_->path() / "two_ranks_rank1";
  testing::LocalJob job(
      train_command(*store_, "$RUNS", batch, "--pack-batches false --calibration none"), 2,
      dir_->path() / "logs_two_ranks",
      {"RUNS=" + ranks_runs.string(), "RUNS=" + rank1_runs.string()});
  ASSERT_EQ(job.wait_all(std::chrono::seconds(300)), (std::vector<int>{0, 0})) << logs(job, 2);
  EXPECT_FALSE(std::filesystem::exists(rank1_runs)) << "rank 1 wrote files";

  const auto run = [](const std::filesystem::path& runs) {
    return runs / store_->filename() / "student_normal";
  };
  const auto single = testing::read_metrics(run(single_runs) / "metrics.jsonl");
  const auto ranks = testing::read_metrics(run(ranks_runs) / "metrics.jsonl");
  ASSERT_EQ(single.size(), 2U);
  ASSERT_EQ(ranks.size(), 2U);
  for (std::size_t e = 0; e < 2; ++e) {
    SCOPED_TRACE(::testing::Message() << "epoch " << e);
    EXPECT_EQ(ranks[e]["graphs"], graphs) << "the epoch's graphs over both ranks";
    EXPECT_EQ(single[e]["graphs"], graphs);
    EXPECT_EQ(ranks[e]["steps"], single[e]["steps"])
        << "each rank takes as many steps as the single process";
    EXPECT_NEAR(ranks[e]["train_loss"].get<double>(), single[e]["train_loss"].get<double>(),
                1e-5 * single[e]["train_loss"].get<double>());
    EXPECT_NEAR(ranks[e]["validation_loss"].get<double>(),
                single[e]["validation_loss"].get<double>(),
                1e-5 * single[e]["validation_loss"].get<double>());
    for (const char* metric : {"accuracy", "f1", "precision", "recall"})
      EXPECT_EQ(ranks[e]["validation"][metric], single[e]["validation"][metric]) << metric;
  }
  expect_same_weights(run(ranks_runs) / "best.pt", run(single_runs) / "best.pt", 1e-5);
}

TEST_F(DataParallelTest, RankZeroAloneCachesTheTeachersOutputsAndTheRanksStillTrainLikeOne) {
  // An untrained teacher: what matters is that every process distils from the same outputs.
  const auto teacher = dir_->path() / "kd_teacher.pt";
  {
    const auto store = store::GraphStore::open(*store_);
    torch::manual_seed(5);
    const auto config =
        models::gat_preset(models::ModelSize::kStudent,
                           static_cast<std::int64_t>(store.metadata().vocabulary.size()) + 1);
    models::GATWithJK model(config);
    train::CheckpointInfo info;
    info.kind = "gat";
    info.model_config = config;
    train::save_model_checkpoint(teacher, *model, info);
  }
  const auto batch = batch_dealt_in_pairs();
  ASSERT_GT(batch, 0U) << training_graphs() << " training graphs";
  const std::string distilled =
      " --pack-batches false --calibration none --use-kd true"
      " --teacher-path " +
      teacher.string();
  const auto single_runs = dir_->path() / "kd_single";
  std::string output;
  ASSERT_EQ(testing::run_command(
                train_command(*store_, single_runs, 2 * batch, distilled) + " 2>&1", &output),
            0)
      << output;

  const auto ranks_runs = dir_->path() / "kd_two_ranks";
  testing::LocalJob job(train_command(*store_, ranks_runs, batch, distilled), 2,
                        dir_->path() / "logs_kd_two_ranks");
  ASSERT_EQ(job.wait_all(std::chrono::seconds(300)), (std::vector<int>{0, 0})) << logs(job, 2);
  // Rank 0 built the file (its log says so once); rank 1 built nothing and read rank 0's.
  EXPECT_EQ(occurrences(logs(job, 2), "teacher outputs cached: "), 1U) << logs(job, 2);
  EXPECT_NE(job.log(0).find("teacher outputs cached: "), std::string::npos) << job.log(0);
  EXPECT_NE(job.log(1).find("rank 1 of 2: teacher outputs reused: "), std::string::npos)
      << job.log(1);
  EXPECT_NE(job.log(1).find("written by rank 0"), std::string::npos) << job.log(1);

  const auto run = [](const std::filesystem::path& runs) {
    return runs / store_->filename() / "student_normal_kd";
  };
  EXPECT_TRUE(std::filesystem::exists(run(ranks_runs) / "teacher_outputs.bin"));
  const auto single = testing::read_metrics(run(single_runs) / "metrics.jsonl");
  const auto ranks = testing::read_metrics(run(ranks_runs) / "metrics.jsonl");
  ASSERT_EQ(ranks.size(), single.size());
  for (std::size_t e = 0; e < ranks.size(); ++e) {
    SCOPED_TRACE(::testing::Message() << "epoch " << e);
    EXPECT_EQ(ranks[e]["graphs"], training_graphs());
    EXPECT_NEAR(ranks[e]["train_loss"].get<double>(), single[e]["train_loss"].get<double>(),
                1e-5 * std::abs(single[e]["train_loss"].get<double>()));
  }
  // Rank 1 distilled from the same outputs as rank 0: otherwise the averaged gradients, and so the
  // weights, would differ from one process's.
  expect_same_weights(run(ranks_runs) / "best.pt", run(single_runs) / "best.pt", 1e-5);
}

TEST_F(DataParallelTest, RankZeroAloneMeasuresThePeakFitAndItsFailureEndsTheOtherRanks) {
  // The cache directory is shared, as a home directory is on a cluster: rank 0 probes and stores
  // the fit, rank 1 reads it and probes nothing.
  const auto cache = dir_->path() / "fit_cache";
  const auto runs = dir_->path() / "fit_once";
  testing::LocalJob job(
      train_command(*store_, runs, 16, "", 1), 2, dir_->path() / "logs_fit_once",
      {"HEADROOM_CACHE_DIR=" + cache.string(), "HEADROOM_CACHE_DIR=" + cache.string()});
  ASSERT_EQ(job.wait_all(std::chrono::seconds(300)), (std::vector<int>{0, 0})) << logs(job, 2);
  EXPECT_NE(job.log(0).find("fit on "), std::string::npos) << job.log(0);
  // The two ranks share this machine: each plans with half of its host memory.
  EXPECT_NE(job.log(0).find("limit, shared by 2 ranks on this node)"), std::string::npos)
      << job.log(0);
  EXPECT_NE(job.log(1).find("rank 1 of 2: peak fit read from " + (cache / "peak-fits").string()),
            std::string::npos)
      << job.log(1);
  EXPECT_EQ(files_under(cache / "peak-fits"), 1U);

  // Rank 0 cannot store its fit (its cache directory cannot be created): rank 1, which would have
  // measured and stored its own, ends at once with rank 0's reason and has written nothing.
  const auto rank1_cache = dir_->path() / "fit_cache_rank1";
  testing::LocalJob failing(
      train_command(*store_, dir_->path() / "fit_failing", 16, "", 1), 2,
      dir_->path() / "logs_fit_failing",
      {"HEADROOM_CACHE_DIR=/dev/null/headroom", "HEADROOM_CACHE_DIR=" + rank1_cache.string()});
  const auto statuses = failing.wait_all(std::chrono::seconds(120));
  EXPECT_EQ(statuses, (std::vector<int>{1, 1})) << logs(failing, 2);
  EXPECT_NE(failing.log(1).find("rank 1 of 2: rank 0 could not measure the training step's peak "
                                "memory: /dev/null/headroom/peak-fits: cannot create"),
            std::string::npos)
      << failing.log(1);
  EXPECT_EQ(failing.log(1).find("lost rank"), std::string::npos) << failing.log(1);
  EXPECT_EQ(files_under(rank1_cache), 0U);
}

TEST_F(DataParallelTest, ThreeRanksWithBytePackingTrainEveryGraphOncePerEpoch) {
  const auto runs = dir_->path() / "three_ranks";
  testing::LocalJob job(train_command(*store_, runs, 16), 3, dir_->path() / "logs_three_ranks");
  ASSERT_EQ(job.wait_all(std::chrono::seconds(300)), (std::vector<int>{0, 0, 0})) << logs(job, 3);
  const auto epochs =
      testing::read_metrics(runs / store_->filename() / "student_normal" / "metrics.jsonl");
  ASSERT_EQ(epochs.size(), 2U);
  for (const auto& epoch : epochs) EXPECT_EQ(epoch["graphs"], training_graphs());
  EXPECT_NE(job.log(0).find("rank 0 of 3"), std::string::npos) << job.log(0);
  EXPECT_NE(job.log(2).find("gloo"), std::string::npos) << job.log(2);
}

TEST_F(DataParallelTest, OutOfMemoryOnOneRankKeepsTheRanksInStepWithTheSameWeights) {
  // Rank 1's allocator fails 3 allocations in a row early in training (after 40 of at least 16 KiB,
  // as tests/train/oom_guard_test.cpp): its OOM guard redoes that batch as micro-batches while
  // rank 0 waits in the gradient all-reduce, and the update is the same.
  const auto plain_runs = dir_->path() / "oom_plain";
  const auto injected_runs = dir_->path() / "oom_injected";
  const auto command = [&](const std::filesystem::path& runs) {
    return train_command(*store_, runs, 16, "--pack-batches false --calibration none");
  };
  testing::LocalJob plain(command(plain_runs), 2, dir_->path() / "logs_oom_plain");
  ASSERT_EQ(plain.wait_all(std::chrono::seconds(300)), (std::vector<int>{0, 0})) << logs(plain, 2);
  testing::LocalJob injected(command(injected_runs), 2, dir_->path() / "logs_oom_injected",
                             {"", "HEADROOM_INJECT_OOM=40:3:16384"});
  ASSERT_EQ(injected.wait_all(std::chrono::seconds(300)), (std::vector<int>{0, 0}))
      << logs(injected, 2);
  const auto run = [](const std::filesystem::path& runs) {
    return runs / store_->filename() / "student_normal";
  };
  const auto epochs = testing::read_metrics(run(injected_runs) / "metrics.jsonl");
  ASSERT_EQ(epochs.size(), 2U);
  std::int64_t events = 0;
  for (const auto& epoch : epochs) {
    events += epoch["oom_events"].get<std::int64_t>();
    EXPECT_EQ(epoch["graphs"], training_graphs());
  }
  EXPECT_EQ(events, 3) << "rank 1's injected failures, in the job's metrics";
  expect_same_weights(run(injected_runs) / "best.pt", run(plain_runs) / "best.pt", 1e-4);
}

TEST_F(DataParallelTest, AKilledRankEndsTheJobNamingItAndTheRerunResumes) {
  const auto runs = dir_->path() / "killed";
  const auto command = train_command(*store_, runs, 8, "", 4);
  const auto metrics = runs / store_->filename() / "student_normal" / "metrics.jsonl";
  {
    testing::LocalJob job(command, 2, dir_->path() / "logs_killed");
    for (int i = 0; i < 6000 && testing::read_metrics(metrics).empty(); ++i) {
      ASSERT_EQ(job.wait(0, std::chrono::seconds(0)), -1) << "rank 0 ended early:\n"
                                                          << logs(job, 2);
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ASSERT_EQ(testing::read_metrics(metrics).size(), 1U) << logs(job, 2);
    job.kill(1);
    const auto killed_at = std::chrono::steady_clock::now();
    const int status = job.wait(0, std::chrono::seconds(60));
    const auto waited = std::chrono::steady_clock::now() - killed_at;
    ASSERT_NE(status, -1) << "rank 0 still runs 60 s after rank 1 was killed:\n" << logs(job, 2);
    EXPECT_NE(status, 0);
    EXPECT_LT(waited, std::chrono::seconds(60));
    EXPECT_NE(job.log(0).find("lost rank 1"), std::string::npos) << job.log(0);
    EXPECT_EQ(job.wait(1, std::chrono::seconds(5)), 128 + SIGKILL);
  }
  testing::LocalJob rerun(command, 2, dir_->path() / "logs_rerun");
  ASSERT_EQ(rerun.wait_all(std::chrono::seconds(300)), (std::vector<int>{0, 0})) << logs(rerun, 2);
  EXPECT_NE(rerun.log(0).find("resuming"), std::string::npos) << rerun.log(0);
  const auto epochs = testing::read_metrics(metrics);
  ASSERT_EQ(epochs.size(), 4U);
  for (std::size_t e = 0; e < epochs.size(); ++e) EXPECT_EQ(epochs[e]["epoch"], e);
}

}  // namespace
}  // namespace headroom
