// The evaluation report over a store built from the synthetic dataset: which graphs land in which
// group, in which order, and what the table and JSON show.
#include "headroom/eval/evaluation_report.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "headroom/eval/label_free_threshold.hpp"
#include "headroom/preprocess/preprocessor.hpp"
#include "headroom/store/graph_store.hpp"
#include "headroom/store/manifest_seal.hpp"
#include "headroom/synthetic/synthetic_traffic.hpp"
#include "headroom/util/file_writer.hpp"
#include "test_support.hpp"

namespace headroom::eval {
namespace {

using Key = std::pair<std::string, std::string>;  // (split, attack type or "")

struct Counts {
  std::int64_t n = 0, positives = 0, tp = 0, fp = 0, tn = 0, fn = 0;
};

class EvaluationReport : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::TempDir();
    synthetic::generate_synthetic_dataset(*dir_ / "data", {.seed = 11, .total_frames = 30'000},
                                          false);
    preprocess::PreprocessOptions options;
    options.threads = 2;
    options.progress = 0;
    preprocess::preprocess_dataset(*dir_ / "data", *dir_ / "store", options);
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }

  void SetUp() override {
    store_ = std::make_unique<store::GraphStore>(store::GraphStore::open(*dir_ / "store"));
    for (std::uint32_t g = 0; g < store_->num_graphs(); ++g) all_ids_.push_back(g);
  }

  // The group keys each graph belongs to, worked out from the size index and the split records.
  std::vector<Key> keys_of(std::uint32_t g) const {
    const auto& m = store_->metadata();
    const auto index = store_->size_index();
    const auto validation = store_->validation_ids();
    std::string split;
    if (std::find(validation.begin(), validation.end(), g) != validation.end()) {
      split = "validation";
    } else if (m.splits[index.split[g]].role == "test") {
      split = m.splits[index.split[g]].name;
    } else {
      return {};
    }
    return {{split, ""}, {split, m.attack_types[index.attack_type[g]]}};
  }

  std::map<Key, Counts> expected_counts(const std::vector<float>& scores) const {
    std::map<Key, Counts> out;
    const auto index = store_->size_index();
    for (std::uint32_t g = 0; g < store_->num_graphs(); ++g) {
      for (const auto& key : keys_of(g)) {
        Counts& c = out[key];
        const bool positive = index.label[g] != 0;
        const bool predicted = scores[g] >= 0.5F;
        ++c.n;
        c.positives += positive ? 1 : 0;
        c.tp += positive && predicted ? 1 : 0;
        c.fp += !positive && predicted ? 1 : 0;
        c.tn += !positive && !predicted ? 1 : 0;
        c.fn += positive && !predicted ? 1 : 0;
      }
    }
    return out;
  }

  static testing::TempDir* dir_;
  std::unique_ptr<store::GraphStore> store_;
  std::vector<std::uint32_t> all_ids_;
};

testing::TempDir* EvaluationReport::dir_ = nullptr;

TEST_F(EvaluationReport, GroupsMatchTheSizeIndex) {
  // A deterministic, imperfect scorer.
  std::vector<float> scores;
  for (const auto g : all_ids_) scores.push_back(static_cast<float>((g * 7) % 5) / 4.0F);
  const auto expected = expected_counts(scores);
  const ModelEvaluation e = evaluate_scores(*store_, "some_model", all_ids_, scores);
  EXPECT_EQ(e.model, "some_model");
  ASSERT_EQ(e.groups.size(), expected.size());
  for (const auto& group : e.groups) {
    const auto it = expected.find({group.split, group.attack_type});
    ASSERT_NE(it, expected.end()) << group.split << "/" << group.attack_type;
    const Counts& c = it->second;
    const BinaryMetrics& m = group.metrics;
    EXPECT_EQ(m.count, c.n) << group.split << "/" << group.attack_type;
    EXPECT_EQ(m.positives, c.positives);
    EXPECT_EQ(m.confusion.true_positives, c.tp);
    EXPECT_EQ(m.confusion.false_positives, c.fp);
    EXPECT_EQ(m.confusion.true_negatives, c.tn);
    EXPECT_EQ(m.confusion.false_negatives, c.fn);
  }
  // Whole splits cover the validation ids and the test ids, and nothing else.
  std::int64_t whole = 0;
  for (const auto& group : e.groups) whole += group.attack_type.empty() ? group.metrics.count : 0;
  EXPECT_EQ(static_cast<std::size_t>(whole),
            store_->validation_ids().size() + store_->test_ids().size());
}

TEST_F(EvaluationReport, OrderIsWholeSplitsThenAttackTypes) {
  const std::vector<float> scores(all_ids_.size(), 0.0F);
  const ModelEvaluation e = evaluate_scores(*store_, "m", all_ids_, scores);
  const auto& m = store_->metadata();
  std::vector<std::string> split_order = {"validation"};
  for (const auto& split : m.splits) {
    if (split.role == "test") split_order.push_back(split.name);
  }
  // The synthetic dataset has two test directories, and the store a validation split.
  ASSERT_EQ(split_order.size(), 3U);
  std::map<std::string, std::set<std::string>> attack_types;
  for (const auto g : all_ids_) {
    const auto keys = keys_of(g);
    if (!keys.empty()) attack_types[keys[1].first].insert(keys[1].second);
  }
  std::vector<Key> expected;
  for (const auto& split : split_order) expected.push_back({split, ""});
  for (const auto& split : split_order) {
    for (const auto& attack : attack_types[split]) expected.push_back({split, attack});
  }
  std::vector<Key> got;
  for (const auto& group : e.groups) got.push_back({group.split, group.attack_type});
  EXPECT_EQ(got, expected);
  EXPECT_TRUE(attack_types["test_02_known_vehicle_unknown_attack"].contains("spoofing"));
}

TEST_F(EvaluationReport, PerfectScorerIsPerfect) {
  const auto index = store_->size_index();
  std::vector<float> scores;
  for (const auto g : all_ids_) scores.push_back(index.label[g] != 0 ? 0.97F : 0.02F);
  const ModelEvaluation e = evaluate_scores(*store_, "oracle", all_ids_, scores);
  int with_positives = 0;
  for (const auto& group : e.groups) {
    const BinaryMetrics& m = group.metrics;
    if (m.positives > 0) {
      ++with_positives;
      EXPECT_EQ(m.accuracy, 1.0) << group.split << "/" << group.attack_type;
      EXPECT_EQ(m.f1, 1.0) << group.split << "/" << group.attack_type;
      if (m.positives < m.count) {
        EXPECT_EQ(m.roc_auc, 1.0);
      }
    } else {
      // Attack-free groups: no false alarm, and nothing else to measure.
      EXPECT_EQ(m.false_positive_rate, 0.0) << group.split << "/" << group.attack_type;
      EXPECT_TRUE(std::isnan(m.accuracy)) << group.split << "/" << group.attack_type;
    }
  }
  EXPECT_GE(with_positives, 3);
}

// The calibration windows are each test file's first normal graphs in store order; scores adapted
// to each vehicle (VehicleCalibration::scores) set and decide the per-file thresholds, while the
// other decisions keep the model's own scores.
TEST_F(EvaluationReport, VehicleScoresSetAndDecideThePerFileThresholds) {
  const auto index = store_->size_index();
  const auto& m = store_->metadata();
  const std::size_t windows = 3;
  const auto chosen = vehicle_calibration_windows(*store_, all_ids_, windows);
  ASSERT_FALSE(chosen.empty());
  for (const auto& [file, ids] : chosen) {
    std::vector<std::uint32_t> expected;
    for (const auto g : all_ids_)
      if (index.file[g] == file && index.label[g] == 0 && expected.size() < windows)
        expected.push_back(g);
    EXPECT_EQ(ids, expected) << m.files[file].path;
    EXPECT_EQ(m.splits[index.split[ids.front()]].role, "test");
  }
  const std::vector<float> useless(all_ids_.size(), 0.7F);
  std::vector<float> adapted;
  for (const auto g : all_ids_) adapted.push_back(index.label[g] != 0 ? 0.9F : 0.1F);
  const ModelEvaluation e =
      evaluate_scores(*store_, "m", all_ids_, useless, std::nullopt, 0.5,
                      {.normal_windows = windows, .target_fpr = 0.0, .scores = adapted});
  ASSERT_EQ(e.vehicle_thresholds.size(), chosen.size());
  for (const auto& [path, threshold] : e.vehicle_thresholds)
    EXPECT_EQ(threshold, std::nextafter(static_cast<double>(0.1F), 1.0)) << path;
  std::size_t checked = 0;
  for (const auto& group : e.groups) {
    if (group.split == "validation" || !group.attack_type.empty() || group.metrics.positives == 0)
      continue;
    ASSERT_TRUE(group.vehicle.has_value()) << group.split;
    EXPECT_EQ(group.vehicle->f1, 1.0) << group.split;
    EXPECT_LT(group.metrics.f1, 1.0) << group.split << ": 0.5 flags every window of 0.7";
    ++checked;
  }
  EXPECT_GT(checked, 0U);
  const std::vector<float> short_scores(all_ids_.size() - 1, 0.1F);
  EXPECT_THROW(
      evaluate_scores(*store_, "m", all_ids_, useless, std::nullopt, 0.5,
                      {.normal_windows = windows, .target_fpr = 0.0, .scores = short_scores}),
      std::invalid_argument);
}

// A vehicle whose scores all sit higher (every window flagged at 0.5) is decided right at the
// threshold set on its own first normal windows, which are then left out of its metrics.
TEST_F(EvaluationReport, VehicleCalibrationDecidesEachTestFileAtItsOwnThreshold) {
  const auto index = store_->size_index();
  const auto& m = store_->metadata();
  const std::string shifted = "test_01_known_vehicle_known_attack";
  std::vector<float> scores;
  for (const auto g : all_ids_) {
    const bool attack = index.label[g] != 0;
    const bool on_shifted = m.splits[index.split[g]].name == shifted;
    const float noise = static_cast<float>((g * 37) % 11) / 200.0F;
    // Normal windows of a vehicle score alike; attacks spread above them.
    scores.push_back((on_shifted ? 0.6F : 0.1F) + (attack ? 0.3F + noise : 0.0F));
  }
  const std::size_t windows = 3;
  const ModelEvaluation e =
      evaluate_scores(*store_, "m", all_ids_, scores, std::nullopt, 0.5,
                      {.normal_windows = windows, .target_fpr = 0.0, .scores = {}});
  // Each test file with more than 3 normal graphs gets a threshold just above the highest score
  // among its first 3; a file with fewer has nothing left to judge and is not calibrated.
  struct FileScan {
    std::size_t normals = 0;
    float highest = -1;
    std::vector<std::uint32_t> first;
  };
  std::map<std::uint32_t, FileScan> files;
  for (const auto g : all_ids_) {
    if (m.splits[index.split[g]].role != "test" || index.label[g] != 0) continue;
    auto& file = files[index.file[g]];
    if (++file.normals > windows) continue;
    file.highest = std::max(file.highest, scores[g]);
    file.first.push_back(g);
  }
  std::int64_t judged_on_shifted = 0;
  for (const auto g : all_ids_) {
    const auto it = files.find(index.file[g]);
    if (m.splits[index.split[g]].name != shifted || it == files.end() ||
        it->second.normals <= windows)
      continue;
    const auto& first = it->second.first;
    judged_on_shifted += std::find(first.begin(), first.end(), g) == first.end() ? 1 : 0;
  }
  ASSERT_GT(judged_on_shifted, 0);
  for (const auto& [file, scan] : files) {
    const auto& path = m.files[file].path;
    ASSERT_EQ(e.vehicle_thresholds.contains(path), scan.normals > windows) << path;
    if (scan.normals <= windows) continue;
    EXPECT_EQ(
        e.vehicle_thresholds.at(path),
        std::nextafter(static_cast<double>(scan.highest), std::numeric_limits<double>::infinity()))
        << path;
  }
  for (const auto& group : e.groups) {
    if (group.split == "validation") {
      EXPECT_FALSE(group.vehicle.has_value());
      continue;
    }
    ASSERT_TRUE(group.vehicle.has_value()) << group.split << "/" << group.attack_type;
    if (group.split != shifted || !group.attack_type.empty()) continue;
    EXPECT_LT(group.metrics.f1, 0.99);  // at 0.5 every normal window is a false alarm
    EXPECT_EQ(group.vehicle->count, judged_on_shifted);
    EXPECT_EQ(group.vehicle->f1, 1.0);
  }
  const nlohmann::json json = e;
  EXPECT_TRUE(json.contains("vehicle_thresholds"));
  EXPECT_NE(render_table(e).find("veh F1"), std::string::npos);

  // Without vehicle calibration nothing of it appears.
  const ModelEvaluation plain = evaluate_scores(*store_, "m", all_ids_, scores);
  EXPECT_TRUE(plain.vehicle_thresholds.empty());
  EXPECT_EQ(render_table(plain).find("veh F1"), std::string::npos);
}

// A copy of store `from` at `to` with the labels of `flip` inverted (graph_label.u8), the array's
// checksum and the manifest sealed again as headroom writes them, so that it opens as a store.
void copy_with_flipped_labels(const std::filesystem::path& from, const std::filesystem::path& to,
                              const std::vector<std::uint32_t>& flip) {
  std::filesystem::copy(from, to, std::filesystem::copy_options::recursive);
  const auto labels_file = to / "graph_label.u8";
  std::string bytes;
  {
    std::ifstream in(labels_file, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  for (const auto g : flip) bytes.at(g) = static_cast<char>(bytes.at(g) == 0 ? 1 : 0);
  std::ofstream(labels_file, std::ios::binary | std::ios::trunc) << bytes;
  std::ifstream manifest_in(to / "manifest.json");
  const std::string text((std::istreambuf_iterator<char>(manifest_in)), {});
  auto manifest = store::unseal_manifest(text, "manifest.json");
  manifest["arrays"]["graph_label"]["xxh3"] = util::checksum_hex(util::checksum_file(labels_file));
  std::ofstream(to / "manifest.json", std::ios::trunc) << store::seal_manifest(manifest);
}

// Scores where attacks sit above normal windows, with a spread, deterministic per graph.
std::vector<float> separable_scores(const store::GraphStore& store,
                                    std::span<const std::uint32_t> ids) {
  const auto index = store.size_index();
  std::vector<float> scores;
  for (const auto g : ids)
    scores.push_back(0.1F + static_cast<float>((g * 37) % 11) / 100.0F +
                     (index.label[g] != 0 ? 0.5F : 0.0F));
  return scores;
}

// The label-free thresholds read scores only: every label of the adaptation windows inverted, the
// thresholds and every label-free decision stay as they were; only the count of attacks among the
// adaptation windows (a report, not an input) follows the labels.
TEST_F(EvaluationReport, LabelFreeDecisionsReadNoLabel) {
  const std::size_t windows = 4;
  const auto scores = separable_scores(*store_, all_ids_);
  const LabelFreeAdaptation adaptation{.windows = windows, .target_fpr = 0.0, .scores = {}};
  const auto first = label_free_adaptation_windows(*store_, all_ids_, windows);
  ASSERT_FALSE(first.empty());
  std::vector<std::uint32_t> flipped;
  for (const auto& [file, ids] : first) {
    ASSERT_EQ(ids.size(), windows);
    flipped.insert(flipped.end(), ids.begin(), ids.end());
  }
  copy_with_flipped_labels(*dir_ / "store", *dir_ / "flipped", flipped);
  const auto flipped_store = store::GraphStore::open(*dir_ / "flipped");
  ASSERT_NE(flipped_store.size_index().label[flipped[0]], store_->size_index().label[flipped[0]]);

  const auto original =
      evaluate_scores(*store_, "m", all_ids_, scores, std::nullopt, 0.5, {}, adaptation);
  const auto relabelled =
      evaluate_scores(flipped_store, "m", all_ids_, scores, std::nullopt, 0.5, {}, adaptation);
  ASSERT_FALSE(original.label_free_thresholds.empty());
  EXPECT_EQ(original.label_free_thresholds, relabelled.label_free_thresholds);
  // Each threshold is the one the file's first windows' scores give, by the robust rule.
  for (const auto& [file, ids] : first) {
    std::vector<float> first_scores;
    for (const auto g : ids) first_scores.push_back(scores[g]);
    EXPECT_EQ(original.label_free_thresholds.at(store_->metadata().files[file].path),
              label_free_threshold(first_scores, 0.0, kDefaultFenceMads));
  }
  ASSERT_EQ(original.groups.size(), relabelled.groups.size());
  std::size_t attack_adaptation_windows = 0;
  for (std::size_t i = 0; i < original.groups.size(); ++i) {
    const auto& a = original.groups[i];
    const auto& b = relabelled.groups[i];
    ASSERT_EQ(a.label_free.has_value(), a.split != "validation") << a.split;
    if (!a.label_free) continue;
    EXPECT_EQ(a.label_free->confusion.true_positives, b.label_free->confusion.true_positives);
    EXPECT_EQ(a.label_free->confusion.false_positives, b.label_free->confusion.false_positives);
    EXPECT_EQ(a.label_free->confusion.true_negatives, b.label_free->confusion.true_negatives);
    EXPECT_EQ(a.label_free->confusion.false_negatives, b.label_free->confusion.false_negatives);
    EXPECT_EQ(a.adaptation_windows, b.adaptation_windows);
    if (a.attack_type.empty()) {
      // The adaptation windows are not judged: the two add up to the split.
      EXPECT_EQ(a.label_free->count + static_cast<std::int64_t>(a.adaptation_windows),
                a.metrics.count);
      attack_adaptation_windows += a.adaptation_attack_windows + b.adaptation_attack_windows;
    }
  }
  // Inverting every adaptation label turns each of its windows into the other class once.
  EXPECT_EQ(attack_adaptation_windows, flipped.size());
  const nlohmann::json json = original;
  bool reported = false;
  for (const auto& group : json["groups"])
    if (group.contains("label_free_metrics")) {
      reported = true;
      EXPECT_EQ(group["label_free_coverage"]["adaptation_windows"].get<std::size_t>() +
                    group["label_free_coverage"]["judged"].get<std::size_t>(),
                group["label_free_coverage"]["windows"].get<std::size_t>())
          << group.dump();
    }
  EXPECT_TRUE(reported);
  EXPECT_NE(render_table(original).find("lf F1"), std::string::npos);
}

// Label-free decisions worked by hand, with a non-zero target FPR (20%), for three vehicles whose
// adaptation windows hold outliers (attacks among them). The test files take them in turn.
//   Vehicle A, first 10 windows {3, 100, 1, 8, 5, 2, 7, 4, 6, 9}: median 5.5, MAD 2.5 (spread
//     3.7065), fence 16.62 drops 100; then {1..9}: median 5, MAD 2, fence 13.90, nothing more.
//     9 inliers; floor(0.2 x 9) = 1 may be flagged: the threshold is just above the 2nd highest, 8.
//   Vehicle B, {11, 12, 13, 10, 10, 13, 12, 18, 15, 30}: median 12.5, MAD 2, fence 21.40 drops
//     30; then median 12, MAD 1 (spread 1.4826), fence 16.45 drops 18 (a second round matters
//     here: one round would keep 18 and put the threshold above 15); then nothing more. 8 inliers;
//     floor(0.2 x 8) = 1: just above the 2nd highest, 13.
//   Vehicle C, {12, 9, 8, 17, 12, 18, 17, 13, 30, 30}: median 15, MAD 3 (spread 4.4478), fence
//     28.34 drops both 30s; then median 12.5, MAD median{4.5, 3.5, 0.5, 0.5, 0.5, 4.5, 4.5, 5.5}
//     = 4 (spread 5.9304), fence 30.29 drops nothing, though it lies above the 30s: they stay
//     out. 8 inliers; floor(0.2 x 8) = 1: just above the 2nd highest, 17 (readmitting the 30s
//     would make it 18).
// The windows after them score by their label, with chosen mistakes: A's normal windows 5 (every
// third 8.5, a false alarm), attacks 9.5; B's normal 11 (every fourth 13, a tie with the
// threshold's score, not flagged), attacks 14 (every fifth 13, missed); C's normal 12 (every
// third 17.5, a false alarm), attacks 18 (every fourth 17, missed). Each split's confusion is
// counted from the labels alone. (Mutations seen to fail: robust_fence stopped after one round;
// fpr_threshold's index rounded up instead of down; the threshold set on every score at or below
// the last round's fence.)
TEST_F(EvaluationReport, LabelFreeThresholdsAndF1MatchAHandWorkedCase) {
  constexpr std::size_t kWindows = 10;
  const std::vector<float> vehicle_a = {3, 100, 1, 8, 5, 2, 7, 4, 6, 9};
  const std::vector<float> vehicle_b = {11, 12, 13, 10, 10, 13, 12, 18, 15, 30};
  const std::vector<float> vehicle_c = {12, 9, 8, 17, 12, 18, 17, 13, 30, 30};
  const double threshold_a = std::nextafter(8.0, 9.0);
  const double threshold_b = std::nextafter(13.0, 14.0);
  const double threshold_c = std::nextafter(17.0, 18.0);
  const auto first = label_free_adaptation_windows(*store_, all_ids_, kWindows);
  ASSERT_GE(first.size(), 3U);
  const auto index = store_->size_index();
  std::vector<float> scores(all_ids_.size(), 0.0F);
  std::map<std::string, Counts> expected;  // by split
  std::map<std::string, double> expected_thresholds;
  std::size_t vehicle = 0;
  for (const auto& [file, ids] : first) {
    const auto which = vehicle++ % 3;  // 0: A, 1: B, 2: C
    const auto& stream = which == 0 ? vehicle_a : which == 1 ? vehicle_b : vehicle_c;
    const double threshold = which == 0 ? threshold_a : which == 1 ? threshold_b : threshold_c;
    for (std::size_t i = 0; i < kWindows; ++i) scores[ids[i]] = stream[i];
    const auto& record = store_->metadata().files[file];
    expected_thresholds[record.path] = threshold;
    auto& counts = expected[store_->metadata().splits[record.split].name];
    std::size_t normals = 0;
    std::size_t attacks = 0;
    for (auto g = static_cast<std::uint32_t>(ids.back() + 1);
         g < record.first_graph + record.graphs; ++g) {
      const bool attack = index.label[g] != 0;
      const auto nth = attack ? ++attacks : ++normals;
      float score = 0;
      if (which == 0)
        score = attack ? 9.5F : (nth % 3 == 0 ? 8.5F : 5.0F);
      else if (which == 1)
        score = attack ? (nth % 5 == 0 ? 13.0F : 14.0F) : (nth % 4 == 0 ? 13.0F : 11.0F);
      else
        score = attack ? (nth % 4 == 0 ? 17.0F : 18.0F) : (nth % 3 == 0 ? 17.5F : 12.0F);
      scores[g] = score;
      const bool flagged = score >= threshold;
      ++counts.n;
      counts.tp += attack && flagged;
      counts.fp += !attack && flagged;
      counts.fn += attack && !flagged;
      counts.tn += !attack && !flagged;
    }
  }
  const LabelFreeAdaptation adaptation{.windows = kWindows, .target_fpr = 0.2, .scores = {}};
  const auto evaluation =
      evaluate_scores(*store_, "m", all_ids_, scores, std::nullopt, 0.5, {}, adaptation);
  EXPECT_EQ(evaluation.label_free_thresholds.size(), expected_thresholds.size());
  for (const auto& [path, threshold] : expected_thresholds)
    EXPECT_EQ(evaluation.label_free_thresholds.at(path), threshold) << path;
  std::size_t checked = 0;
  for (const auto& group : evaluation.groups) {
    if (!group.attack_type.empty() || !expected.count(group.split)) continue;
    ASSERT_TRUE(group.label_free.has_value()) << group.split;
    const auto& c = expected.at(group.split);
    const auto& m = group.label_free->confusion;
    EXPECT_EQ(m.true_positives, c.tp) << group.split;
    EXPECT_EQ(m.false_positives, c.fp) << group.split;
    EXPECT_EQ(m.false_negatives, c.fn) << group.split;
    EXPECT_EQ(m.true_negatives, c.tn) << group.split;
    if (c.tp + c.fp + c.fn > 0) {
      EXPECT_DOUBLE_EQ(group.label_free->f1,
                       2.0 * c.tp / static_cast<double>(2 * c.tp + c.fp + c.fn))
          << group.split;
    }
    EXPECT_GT(c.fp + c.fn, 0) << "the case must hold mistakes to be worth checking";
    ++checked;
  }
  EXPECT_EQ(checked, expected.size());
}

// A model that learnt from the first adaptation windows (in-sample scores there) has its threshold
// set on the adaptation windows after them; all of them stay out of the metrics.
TEST_F(EvaluationReport, LabelFreeThresholdSkipsTheWindowsTheModelLearntFrom) {
  const auto scores = separable_scores(*store_, all_ids_);
  const LabelFreeAdaptation adaptation{
      .windows = 5, .learned_windows = 3, .target_fpr = 0.0, .scores = {}};
  const auto e = evaluate_scores(*store_, "m", all_ids_, scores, std::nullopt, 0.5, {}, adaptation);
  const auto windows = label_free_adaptation_windows(*store_, all_ids_, 5);
  ASSERT_FALSE(windows.empty());
  for (const auto& [file, ids] : windows) {
    const std::vector<float> after = {scores[ids[3]], scores[ids[4]]};
    EXPECT_EQ(e.label_free_thresholds.at(store_->metadata().files[file].path),
              label_free_threshold(after, 0.0, kDefaultFenceMads));
  }
  for (const auto& group : e.groups) {
    if (!group.label_free || !group.attack_type.empty()) continue;
    EXPECT_EQ(group.label_free->count + static_cast<std::int64_t>(group.adaptation_windows),
              group.metrics.count);
  }
  EXPECT_THROW(evaluate_scores(*store_, "m", all_ids_, scores, std::nullopt, 0.5, {},
                               {.windows = 3, .learned_windows = 3, .scores = {}}),
               std::invalid_argument);
}

// The same for the label-picked decision: a model that learnt the vehicle from a file's first
// calibration windows (the baseline) has its threshold set on the calibration windows after them.
TEST_F(EvaluationReport, VehicleThresholdSkipsTheCalibrationWindowsTheModelLearntFrom) {
  const std::size_t windows = 5;
  const auto chosen = vehicle_calibration_windows(*store_, all_ids_, windows);
  ASSERT_FALSE(chosen.empty());
  // In-sample scores far below the others on the learnt windows, as a model that learnt them has.
  std::set<std::uint32_t> learnt;
  for (const auto& [file, ids] : chosen) learnt.insert(ids.begin(), ids.begin() + 2);
  std::vector<float> scores;
  for (const auto g : all_ids_) scores.push_back(learnt.count(g) ? 0.0F : 0.4F);
  VehicleCalibration vehicle{.normal_windows = windows, .target_fpr = 0.0, .scores = {}};
  vehicle.learned_windows = 2;
  const auto e = evaluate_scores(*store_, "m", all_ids_, scores, std::nullopt, 0.5, vehicle);
  ASSERT_EQ(e.vehicle_thresholds.size(), chosen.size());
  for (const auto& [path, threshold] : e.vehicle_thresholds)
    EXPECT_EQ(threshold, std::nextafter(static_cast<double>(0.4F), 1.0)) << path;
  vehicle.learned_windows = windows;
  EXPECT_THROW(evaluate_scores(*store_, "m", all_ids_, scores, std::nullopt, 0.5, vehicle),
               std::invalid_argument);
}

// A file with no more windows than the adaptation takes is not judged, and the split says how
// much of it its label-free numbers cover.
TEST_F(EvaluationReport, LabelFreeCoverageIsReportedWhereFilesAreTooShort) {
  const auto index = store_->size_index();
  std::map<std::uint32_t, std::size_t> windows_of_file;
  for (const auto g : store_->test_ids()) ++windows_of_file[index.file[g]];
  std::size_t shortest = std::numeric_limits<std::size_t>::max();
  std::size_t longest = 0;
  for (const auto& [file, n] : windows_of_file) {
    shortest = std::min(shortest, n);
    longest = std::max(longest, n);
  }
  ASSERT_LT(shortest, longest) << "every test file has as many windows";
  const auto scores = separable_scores(*store_, all_ids_);
  const auto e = evaluate_scores(*store_, "m", all_ids_, scores, std::nullopt, 0.5, {},
                                 {.windows = shortest, .target_fpr = 0.0, .scores = {}});
  bool warned = false;
  for (const auto& warning : e.warnings)
    warned = warned || warning.find("label-free decision judges") != std::string::npos;
  EXPECT_TRUE(warned) << fmt::format("{}", fmt::join(e.warnings, "\n"));

  // Asked for with more windows than any test file holds: no per-file decision at all, and both
  // say so instead of vanishing from the tables.
  const auto none = evaluate_scores(*store_, "m", all_ids_, scores, std::nullopt, 0.5,
                                    {.normal_windows = longest, .target_fpr = 0.0, .scores = {}},
                                    {.windows = longest, .target_fpr = 0.0, .scores = {}});
  const auto all = fmt::format("{}", fmt::join(none.warnings, "\n"));
  EXPECT_NE(all.find(fmt::format("the label-free decision judges no window: no test file has more "
                                 "than {} windows",
                                 longest)),
            std::string::npos)
      << all;
  EXPECT_NE(all.find("the per-vehicle decision judges no window"), std::string::npos) << all;
}

// Attack types present in a training file are seen, the others unseen; the synthetic layout names
// its conditions for it (test_01: known attacks, test_02: an unknown one).
TEST_F(EvaluationReport, MarksEachAttackTypeSeenOrUnseenInTraining) {
  const auto scores = separable_scores(*store_, all_ids_);
  const auto e = evaluate_scores(*store_, "m", all_ids_, scores);
  std::size_t marked = 0;
  for (const auto& group : e.groups) {
    if (group.attack_type.empty() || group.metrics.positives == 0) {
      EXPECT_FALSE(group.seen_in_training.has_value()) << group.split << "/" << group.attack_type;
      continue;
    }
    ASSERT_TRUE(group.seen_in_training.has_value()) << group.split << "/" << group.attack_type;
    const bool unknown = group.split.find("unknown_attack") != std::string::npos;
    EXPECT_EQ(*group.seen_in_training, !unknown) << group.split << "/" << group.attack_type;
    ++marked;
  }
  EXPECT_GE(marked, 3U);
  const nlohmann::json json = e;
  EXPECT_NE(json.dump().find("\"seen_in_training\":false"), std::string::npos);
}

// A decision that flags nearly every normal window, or catches nearly no attack, is named.
TEST_F(EvaluationReport, WarnsOnNearDegenerateDecisions) {
  const auto index = store_->size_index();
  const auto& m = store_->metadata();
  const std::string known = "test_01_known_vehicle_known_attack";
  std::int64_t known_normals = 0;
  for (const auto g : all_ids_)
    known_normals += m.splits[index.split[g]].name == known && index.label[g] == 0 ? 1 : 0;
  ASSERT_GE(known_normals, 20) << "too few normal windows for a 95% cut to differ from 100%";
  // test_01: every window flagged but one normal one. Elsewhere: no attack caught, one normal
  // window flagged per split.
  std::vector<float> scores;
  std::map<std::string, bool> marked;
  for (const auto g : all_ids_) {
    const auto& split = m.splits[index.split[g]].name;
    const bool attack = index.label[g] != 0;
    const bool first_normal = !attack && !std::exchange(marked[split], true);
    if (split == known)
      scores.push_back(first_normal ? 0.1F : 0.9F);
    else
      scores.push_back(first_normal ? 0.9F : 0.1F);
  }
  const auto e = evaluate_scores(*store_, "m", all_ids_, scores);
  const auto has = [&](const std::string& a, const std::string& b) {
    return std::any_of(e.warnings.begin(), e.warnings.end(), [&](const std::string& w) {
      return w.find(a) != std::string::npos && w.find(b) != std::string::npos;
    });
  };
  EXPECT_TRUE(has("test_01_known_vehicle_known_attack: flags 9", "near-degenerate"))
      << fmt::format("{}", fmt::join(e.warnings, "\n"));
  EXPECT_TRUE(has("test_02_known_vehicle_unknown_attack: catches", "near-degenerate"))
      << fmt::format("{}", fmt::join(e.warnings, "\n"));
}

TEST_F(EvaluationReport, OnlyTheGivenGraphsCount) {
  // Training graphs outside validation are never evaluated.
  const auto validation = store_->validation_ids();
  std::vector<std::uint32_t> training_only;
  for (const auto g : store_->train_ids()) {
    if (std::find(validation.begin(), validation.end(), g) == validation.end()) {
      training_only.push_back(g);
    }
  }
  ASSERT_FALSE(training_only.empty());
  const std::vector<float> scores(training_only.size(), 1.0F);
  EXPECT_TRUE(evaluate_scores(*store_, "m", training_only, scores).groups.empty());

  // Only test graphs: no validation rows.
  const auto test = store_->test_ids();
  const std::vector<std::uint32_t> test_ids(test.begin(), test.end());
  const auto e = evaluate_scores(*store_, "m", test_ids, std::vector<float>(test_ids.size(), 0.F));
  ASSERT_FALSE(e.groups.empty());
  for (const auto& group : e.groups) EXPECT_NE(group.split, "validation");
}

TEST_F(EvaluationReport, RejectsBadInput) {
  EXPECT_THROW(evaluate_scores(*store_, "m", all_ids_, std::vector<float>(1, 0.F)),
               std::invalid_argument);
  const std::vector<std::uint32_t> outside = {static_cast<std::uint32_t>(store_->num_graphs())};
  EXPECT_THROW(evaluate_scores(*store_, "m", outside, std::vector<float>{0.5F}), std::out_of_range);
}

TEST_F(EvaluationReport, TableHasAnAlignedRowPerGroup) {
  std::vector<float> scores;
  for (const auto g : all_ids_) scores.push_back(static_cast<float>(g % 2));
  const ModelEvaluation e = evaluate_scores(*store_, "m", all_ids_, scores);
  const std::string table = render_table(e);
  std::vector<std::string> lines;
  std::istringstream in(table);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), 1 + e.groups.size() + 1 + e.warnings.size());
  EXPECT_EQ(lines[0], "attack probability: decisions at 0.5");
  lines.erase(lines.begin());
  for (const char* column : {"split", "attack type", "seen", "n", "accuracy", "precision", "recall",
                             "F1", "FPR", "MCC", "ROC AUC", "PR AUC"}) {
    EXPECT_NE(lines[0].find(column), std::string::npos) << column;
  }
  bool saw_na = false;
  for (std::size_t i = 0; i < e.groups.size(); ++i) {
    const auto& group = e.groups[i];
    const std::string& line = lines[i + 1];
    std::istringstream fields(line);
    std::string split, attack, seen, n;
    fields >> split >> attack >> seen >> n;
    EXPECT_EQ(split, group.split);
    EXPECT_EQ(attack, group.attack_type.empty() ? "all" : group.attack_type);
    EXPECT_EQ(seen, !group.seen_in_training ? "-" : (*group.seen_in_training ? "yes" : "no"));
    EXPECT_EQ(n, std::to_string(group.metrics.count));
    // Numbers are right-aligned in fixed-width columns: every line ends at the same column.
    EXPECT_EQ(line.size(), lines[0].size()) << line;
    std::ostringstream accuracy;
    accuracy.precision(4);
    accuracy << std::fixed << group.metrics.accuracy;
    // Accuracy is undefined (n/a) in a group without attack labels.
    EXPECT_NE(line.find(std::isnan(group.metrics.accuracy) ? "n/a" : accuracy.str()),
              std::string::npos)
        << line;
    if (std::isnan(group.metrics.roc_auc)) {
      saw_na = true;
      EXPECT_NE(line.find("n/a"), std::string::npos) << line;
    }
  }
  // The attack-free rows hold normals only, so their AUC is undefined.
  EXPECT_TRUE(saw_na);
}

TEST_F(EvaluationReport, JsonListsModelAndGroups) {
  const std::vector<float> scores(all_ids_.size(), 0.25F);
  const ModelEvaluation e = evaluate_scores(*store_, "student", all_ids_, scores);
  const nlohmann::json json = e;
  EXPECT_EQ(json.at("model"), "student");
  ASSERT_EQ(json.at("groups").size(), e.groups.size());
  for (std::size_t i = 0; i < e.groups.size(); ++i) {
    const auto& g = json.at("groups")[i];
    EXPECT_EQ(g.at("split"), e.groups[i].split);
    EXPECT_EQ(g.at("attack_type"), e.groups[i].attack_type);
    EXPECT_EQ(g.at("metrics").at("count").get<std::int64_t>(), e.groups[i].metrics.count);
    // A constant scorer ranks nothing: AUC 0.5, or null with a single class.
    const auto& auc = g.at("metrics").at("roc_auc");
    if (auc.is_null()) {
      EXPECT_TRUE(std::isnan(e.groups[i].metrics.roc_auc));
    } else {
      EXPECT_EQ(auc.get<double>(), 0.5);
    }
  }
}

// can-train-and-test rows over four IDs; every 40th run of 8 rows attacks when `attacks` is set.
std::string labelled_traffic(std::size_t rows, bool attacks) {
  std::string text = "timestamp,arbitration_id,data_field,attack\n";
  for (std::size_t i = 0; i < rows; ++i)
    text += fmt::format("{:.6f},{:X},0102{:02X},{}\n", 1000.0 + 0.001 * static_cast<double>(i),
                        0x100 * (1 + i % 4), i % 256, attacks && i % 40 < 8 ? 1 : 0);
  return text;
}

// A test directory without a single attack label (an unlabelled capture) gets n/a, not F1 0
// beside accuracy 1.0, in the table and in the JSON, and a warning that says why.
TEST(EvaluationReportUnlabelled, SplitWithoutAttackLabelsIsNotAnF1OfZero) {
  testing::TempDir dir;
  testing::write_text_file(dir / "data/train_01_attack_free/drive-1.csv",
                           labelled_traffic(2000, false));
  testing::write_text_file(dir / "data/train_02_with_attacks/DoS-1.csv",
                           labelled_traffic(2000, true));
  testing::write_text_file(dir / "data/test_01_known_attack/DoS-2.csv",
                           labelled_traffic(1000, true));
  testing::write_text_file(dir / "data/test_02_unlabelled/capture-1.csv",
                           labelled_traffic(1000, false));
  preprocess::PreprocessOptions options;
  options.progress = 0;
  preprocess::preprocess_dataset(dir / "data", dir / "store", options);
  const auto store = store::GraphStore::open(dir / "store");
  std::vector<std::uint32_t> ids(store.num_graphs());
  for (std::uint32_t g = 0; g < ids.size(); ++g) ids[g] = g;
  const std::vector<float> scores(ids.size(), 0.1F);  // flags nothing
  const ModelEvaluation e = evaluate_scores(store, "m", ids, scores);

  const auto whole = std::find_if(e.groups.begin(), e.groups.end(), [](const auto& g) {
    return g.split == "test_02_unlabelled" && g.attack_type.empty();
  });
  ASSERT_NE(whole, e.groups.end());
  const BinaryMetrics& m = whole->metrics;
  EXPECT_EQ(m.positives, 0);
  for (const double undefined : {m.accuracy, m.precision, m.recall, m.f1, m.mcc})
    EXPECT_TRUE(std::isnan(undefined));
  EXPECT_EQ(m.false_positive_rate, 0.0);  // the one measure left: no false alarm
  const nlohmann::json json = e;
  for (const auto& group : json.at("groups")) {
    if (group.at("split") != "test_02_unlabelled") continue;
    EXPECT_TRUE(group.at("metrics").at("f1").is_null());
    EXPECT_TRUE(group.at("metrics").at("accuracy").is_null());
  }

  // The split with attacks keeps its numbers, and gets no such warning.
  const auto labelled = std::find_if(e.groups.begin(), e.groups.end(), [](const auto& g) {
    return g.split == "test_01_known_attack" && g.attack_type.empty();
  });
  ASSERT_NE(labelled, e.groups.end());
  EXPECT_EQ(labelled->metrics.f1, 0.0);
  EXPECT_FALSE(std::isnan(labelled->metrics.accuracy));
  std::vector<std::string> unlabelled;
  for (const auto& warning : e.warnings)
    if (warning.find("no attack labels") != std::string::npos) unlabelled.push_back(warning);
  ASSERT_EQ(unlabelled.size(), 1u);
  EXPECT_EQ(unlabelled[0].rfind("test_02_unlabelled: no attack labels", 0), 0u) << unlabelled[0];

  const std::string table = render_table(e);
  std::istringstream lines(table);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("test_02_unlabelled", 0) != 0) continue;
    EXPECT_EQ(line.find("1.0000"), std::string::npos) << line;  // no accuracy 1.0
    EXPECT_NE(line.find("n/a"), std::string::npos) << line;
  }
  EXPECT_NE(table.find("WARNING: test_02_unlabelled: no attack labels"), std::string::npos)
      << table;
}

// Split and attack-type names are directory and file names: the table prints them escaped, so an
// escape sequence in one never reaches the terminal.
TEST(EvaluationReportNames, TheTablePrintsNamesEscaped) {
  ModelEvaluation e;
  e.model = "m";
  EvaluationGroup whole;
  whole.split = "test_\x1b]0;title\x07";
  EvaluationGroup attack = whole;
  attack.attack_type = "dos\x1b[31m\nx";
  e.groups = {whole, attack};
  const std::string table = render_table(e);
  for (const char c : table)
    EXPECT_TRUE(c == '\n' || static_cast<unsigned char>(c) >= 0x20) << table;
  EXPECT_NE(table.find("test_\\x1B]0;title\\x07"), std::string::npos) << table;
  EXPECT_NE(table.find("dos\\x1B[31m\\x0Ax"), std::string::npos) << table;
}

}  // namespace
}  // namespace headroom::eval
