// The curriculum sampler: numpy-style percentiles, the schedule, and the hard-normal sample.
#include "headroom/train/config/curriculum.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <set>
#include <stdexcept>
#include <vector>

namespace headroom::train {
namespace {

TEST(CurriculumPercentile, LinearInterpolationByHand) {
  const std::vector<float> values = {5, 1, 3, 2, 4, 10};  // sorted: 1 2 3 4 5 10
  EXPECT_DOUBLE_EQ(percentile(values, 0), 1.0);
  EXPECT_DOUBLE_EQ(percentile(values, 100), 10.0);
  EXPECT_DOUBLE_EQ(percentile(values, 50), 3.5);   // position 2.5: 3 + 0.5 * (4 - 3)
  EXPECT_DOUBLE_EQ(percentile(values, 75), 4.75);  // position 3.75: 4 + 0.75 * (5 - 4)
  EXPECT_DOUBLE_EQ(percentile(values, 90), 7.5);   // position 4.5: 5 + 0.5 * (10 - 5)
  EXPECT_DOUBLE_EQ(percentile(values, 10), 1.5);   // position 0.5
  EXPECT_DOUBLE_EQ(percentile(std::vector<float>{7}, 33), 7.0);
  EXPECT_THROW(percentile(std::vector<float>{}, 50), std::invalid_argument);
  EXPECT_THROW(percentile(values, 101), std::invalid_argument);
  EXPECT_THROW(percentile(values, -1), std::invalid_argument);
}

// The test's own reference: sort, then interpolate between the neighbours of q/100 * (n - 1).
double reference_percentile(std::vector<float> values, double q) {
  std::sort(values.begin(), values.end());
  const double position = q / 100.0 * static_cast<double>(values.size() - 1);
  const auto lo = static_cast<std::size_t>(position);
  const std::size_t hi = std::min(lo + 1, values.size() - 1);
  const double t = position - static_cast<double>(lo);
  return static_cast<double>(values[lo]) * (1.0 - t) + static_cast<double>(values[hi]) * t;
}

class Curriculum : public ::testing::Test {
 protected:
  void SetUp() override {
    std::uint64_t state = 99;
    for (std::uint32_t i = 0; i < 10; ++i) attacks_.push_back(1000 + 7 * i);
    for (std::uint32_t i = 0; i < 100; ++i) {
      normals_.push_back(3 * i);
      state = state * 6364136223846793005ULL + 1442695040888963407ULL;
      difficulty_.push_back(static_cast<float>(state >> 40) / 16777216.0F);
    }
  }

  std::set<std::uint32_t> sampled_normals(const CurriculumEpoch& e) const {
    std::set<std::uint32_t> out;
    for (const auto id : e.graph_ids) {
      if (id < 1000) out.insert(id);
    }
    return out;
  }

  // Checks the invariants of one epoch and returns its normals.
  std::set<std::uint32_t> check_epoch(const CurriculumEpoch& e) const {
    const double threshold = reference_percentile(difficulty_, e.percentile);
    EXPECT_NEAR(e.threshold, threshold, 1e-6);
    std::size_t hard = 0;
    for (const float d : difficulty_) hard += static_cast<double>(d) >= e.threshold ? 1 : 0;
    EXPECT_EQ(e.hard_normals, hard);
    const auto wanted = static_cast<std::size_t>(std::floor(e.ratio * 10.0));
    EXPECT_EQ(e.graph_ids.size(), attacks_.size() + std::min(wanted, hard));
    EXPECT_TRUE(std::is_sorted(e.graph_ids.begin(), e.graph_ids.end()));
    EXPECT_EQ(std::set<std::uint32_t>(e.graph_ids.begin(), e.graph_ids.end()).size(),
              e.graph_ids.size())
        << "duplicates";
    for (const auto a : attacks_) {
      EXPECT_TRUE(std::binary_search(e.graph_ids.begin(), e.graph_ids.end(), a)) << a;
    }
    const auto normals = sampled_normals(e);
    for (const auto id : normals) {
      EXPECT_EQ(id % 3, 0U);
      EXPECT_GE(static_cast<double>(difficulty_[id / 3]), e.threshold) << id;
    }
    return normals;
  }

  std::vector<std::uint32_t> attacks_, normals_;
  std::vector<float> difficulty_;
};

TEST_F(Curriculum, FirstEpochUsesTheStartOfTheSchedule) {
  const auto e = curriculum_epoch(attacks_, normals_, difficulty_, 0, 10, {}, 1);
  EXPECT_DOUBLE_EQ(e.ratio, 1.0);
  EXPECT_DOUBLE_EQ(e.percentile, 75.0);
  // 100 distinct values: position 74.25, so the top 25 are at or above the threshold.
  EXPECT_EQ(e.hard_normals, 25U);
  EXPECT_EQ(e.graph_ids.size(), 10U + 10U);  // one normal per attack
  check_epoch(e);
}

TEST_F(Curriculum, LaterEpochsRaiseRatioAndPercentile) {
  const auto e = curriculum_epoch(attacks_, normals_, difficulty_, 5, 10, {}, 1);
  EXPECT_DOUBLE_EQ(e.ratio, 1.0 + 9.0 * 0.5);
  EXPECT_DOUBLE_EQ(e.percentile, 75.0 + 20.0 * 0.5);
  // Position 84.15: 15 hard normals, fewer than floor(5.5 * 10) = 55, so all of them.
  EXPECT_EQ(e.hard_normals, 15U);
  EXPECT_EQ(e.graph_ids.size(), 10U + 15U);
  check_epoch(e);

  const CurriculumSchedule custom{2.0, 0.0, 50.0, 0.0};
  const auto half = curriculum_epoch(attacks_, normals_, difficulty_, 3, 10, custom, 1);
  EXPECT_EQ(half.hard_normals, 50U);
  EXPECT_EQ(half.graph_ids.size(), 10U + 20U);
  check_epoch(half);
}

TEST_F(Curriculum, SampleDependsOnSeedAndEpochOnly) {
  const CurriculumSchedule flat{1.0, 0.0, 75.0, 0.0};  // same threshold every epoch
  const auto a = curriculum_epoch(attacks_, normals_, difficulty_, 2, 10, flat, 7);
  const auto again = curriculum_epoch(attacks_, normals_, difficulty_, 2, 10, flat, 7);
  EXPECT_EQ(a.graph_ids, again.graph_ids);
  const auto next_epoch = curriculum_epoch(attacks_, normals_, difficulty_, 3, 10, flat, 7);
  const auto other_seed = curriculum_epoch(attacks_, normals_, difficulty_, 2, 10, flat, 8);
  EXPECT_NE(check_epoch(a), check_epoch(next_epoch));
  EXPECT_NE(check_epoch(a), check_epoch(other_seed));
}

TEST_F(Curriculum, EveryHardNormalIsDrawnAboutEquallyOften) {
  const CurriculumSchedule flat{1.0, 0.0, 75.0, 0.0};
  std::vector<int> drawn(300, 0);
  constexpr int kSeeds = 2000;
  for (int seed = 0; seed < kSeeds; ++seed) {
    const auto e = curriculum_epoch(attacks_, normals_, difficulty_, 0, 10, flat,
                                    static_cast<std::uint64_t>(seed));
    for (const auto id : sampled_normals(e)) ++drawn[id];
  }
  // 10 of 25 hard normals per draw: each expected 800 times (standard deviation about 22).
  int hard_seen = 0;
  for (std::size_t i = 0; i < difficulty_.size(); ++i) {
    if (drawn[3 * i] == 0) continue;
    ++hard_seen;
    EXPECT_NEAR(drawn[3 * i], kSeeds * 10 / 25, 130) << "normal " << 3 * i;
  }
  EXPECT_EQ(hard_seen, 25);
}

TEST_F(Curriculum, NoAttacksOrNoNormals) {
  const auto no_attacks = curriculum_epoch({}, normals_, difficulty_, 0, 10, {}, 1);
  EXPECT_TRUE(no_attacks.graph_ids.empty());
  EXPECT_EQ(no_attacks.hard_normals, 25U);

  const auto no_normals = curriculum_epoch(attacks_, {}, {}, 4, 10, {}, 1);
  EXPECT_EQ(no_normals.graph_ids, attacks_);
  EXPECT_EQ(no_normals.hard_normals, 0U);
}

TEST_F(Curriculum, RejectsBadArguments) {
  const std::vector<float> short_difficulty(difficulty_.begin(), difficulty_.end() - 1);
  EXPECT_THROW(curriculum_epoch(attacks_, normals_, short_difficulty, 0, 10, {}, 1),
               std::invalid_argument);
  EXPECT_THROW(curriculum_epoch(attacks_, normals_, difficulty_, 0, 0, {}, 1),
               std::invalid_argument);
  EXPECT_THROW(curriculum_epoch(attacks_, normals_, difficulty_, -1, 10, {}, 1),
               std::invalid_argument);
}

}  // namespace
}  // namespace headroom::train
