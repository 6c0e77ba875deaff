// The classical baseline's per-frame surprise against values worked by hand.
#include "headroom/baseline/traffic_profile.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <span>
#include <vector>

namespace headroom::baseline {
namespace {

can::CanFrame frame(double t, std::uint32_t id) {
  can::CanFrame f;
  f.timestamp_s = t;
  f.id = id;
  return f;
}

constexpr std::uint32_t kA = 0x100, kB = 0x200, kC = 0x300;

// Training: A at 0, 1 and 3 s (inter-arrivals 1 and 2 s), B at 0.5 and 1.5 s (one inter-arrival:
// too few for statistics); transitions A->B and B->A.
TrafficProfile hand_profile() {
  TrafficProfileBuilder builder;
  const std::vector<can::CanFrame> run = {frame(0.0, kA), frame(0.5, kB), frame(1.0, kA),
                                          frame(1.5, kB), frame(3.0, kA)};
  builder.learn_run(run);
  return builder.build();
}

TEST(TrafficProfile, LearnsLogInterArrivalsAndTransitions) {
  const auto profile = hand_profile();
  const InterArrival* a = profile.inter_arrival(kA);
  ASSERT_NE(a, nullptr);
  EXPECT_NEAR(a->mean_log, std::log(2.0) / 2, 1e-12);                 // mean of ln 1 and ln 2
  EXPECT_NEAR(a->spread_log, std::log(2.0) / std::sqrt(2.0), 1e-12);  // their sample sd
  EXPECT_EQ(a->count, 2U);
  EXPECT_EQ(profile.inter_arrival(kB), nullptr);
  EXPECT_TRUE(profile.knows_transition(kA, kB));
  EXPECT_TRUE(profile.knows_transition(kB, kA));
  EXPECT_FALSE(profile.knows_transition(kA, kA));
  EXPECT_EQ(profile.transitions(), 2U);
  EXPECT_TRUE(profile.knows_id(kB));  // seen, though too rarely for timing statistics
  EXPECT_FALSE(profile.knows_id(kC));
  EXPECT_EQ(profile.ids(), 2U);
}

// A at 10, B at 10.2, A at 10.5, C at 10.6, A at 14.5:
// - A: the recording's first frame, and A's: 0.
// - B: A->B is known; B has no statistics: 0.
// - A: B->A known; inter-arrival 0.5 s, |ln 0.5 - ln2/2| / (ln2/sqrt 2) = 1.5 sqrt 2.
// - C: A->C was never seen: kNovelSurprise. A: C->A neither: kNovelSurprise.
TEST(TrafficProfile, FrameSurpriseWorkedByHand) {
  const std::vector<can::CanFrame> recording = {frame(10.0, kA), frame(10.2, kB), frame(10.5, kA),
                                                frame(10.6, kC), frame(14.5, kA)};
  const auto surprise = frame_surprise(hand_profile(), recording);
  ASSERT_EQ(surprise.size(), 5U);
  EXPECT_EQ(surprise[0], 0.0F);
  EXPECT_EQ(surprise[1], 0.0F);
  EXPECT_NEAR(surprise[2], 1.5 * std::sqrt(2.0), 1e-5);
  EXPECT_EQ(surprise[3], static_cast<float>(kNovelSurprise));
  EXPECT_EQ(surprise[4], static_cast<float>(kNovelSurprise));
  // The window of all five: one frame of an ID never seen (C), plus the mean surprise / 10.
  EXPECT_NEAR(window_score(hand_profile(), recording, surprise),
              1 + (1.5 * std::sqrt(2.0) + 2 * kNovelSurprise) / 5 / kNovelSurprise, 1e-6);
  // Without C: no unknown ID, only the surprise.
  EXPECT_NEAR(
      window_score(hand_profile(), std::span(recording).first(3), std::span(surprise).first(3)),
      1.5 * std::sqrt(2.0) / 3 / kNovelSurprise, 1e-6);
  EXPECT_EQ(window_score(hand_profile(), {}, {}), 0.0);
}

// A profile that does not judge transitions still flags an ID never seen, and reads the others by
// their timing alone.
TEST(TrafficProfile, WithoutTransitionsUnknownIdsStillScore) {
  TrafficProfileBuilder builder;
  const std::vector<can::CanFrame> run = {frame(0.0, kA), frame(0.5, kB), frame(1.0, kA),
                                          frame(1.5, kB), frame(3.0, kA)};
  builder.learn_run(run);
  const auto profile = builder.build(/*judge_transitions=*/false);
  EXPECT_FALSE(profile.judges_transitions());
  // A->A was never seen: no matter. C was never seen: kNovelSurprise.
  const std::vector<can::CanFrame> recording = {frame(10.0, kA), frame(11.0, kA), frame(11.1, kC)};
  const auto surprise = frame_surprise(profile, recording);
  EXPECT_NEAR(surprise[1], std::fabs(0.0 - std::log(2.0) / 2) / (std::log(2.0) / std::sqrt(2.0)),
              1e-5);
  EXPECT_EQ(surprise[2], static_cast<float>(kNovelSurprise));
  EXPECT_EQ(frame_surprise(builder.build(), recording)[1], static_cast<float>(kNovelSurprise));
}

// Runs are learnt apart: no transition or inter-arrival from the end of one to the next; and a
// deviation is capped at kNovelSurprise.
TEST(TrafficProfile, RunsAreLearntApartAndSurpriseIsCapped) {
  TrafficProfileBuilder builder;
  const std::vector<can::CanFrame> first = {frame(0.0, kA), frame(1.0, kA), frame(2.0, kA)};
  const std::vector<can::CanFrame> second = {frame(100.0, kB), frame(100.0, kA)};
  builder.learn_run(first);
  builder.learn_run(second);
  const auto profile = builder.build();
  EXPECT_FALSE(profile.knows_transition(kA, kB));
  EXPECT_TRUE(profile.knows_transition(kB, kA));
  const InterArrival* a = profile.inter_arrival(kA);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->count, 2U);  // 1 s twice; not the 98 s between the runs
  EXPECT_EQ(a->spread_log, kMinLogSpread);
  // A repeating after 1 ms where it repeats every second: 6.9 / 0.05 spreads, capped.
  const std::vector<can::CanFrame> burst = {frame(0.0, kA), frame(1.0, kA), frame(1.001, kA)};
  const auto surprise = frame_surprise(profile, burst);
  EXPECT_NEAR(surprise[1], 0.0, 1e-6);
  EXPECT_EQ(surprise[2], static_cast<float>(kNovelSurprise));
}

}  // namespace
}  // namespace headroom::baseline
