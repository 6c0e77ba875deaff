// The classical CAN intrusion detector headroom's GNNs are compared with: no graph, no learning
// beyond counting. It learns from normal training traffic how often each CAN ID repeats (the log
// of its inter-arrival time: mean and spread) and which ID follows which (the transitions seen),
// and scores each frame by its surprise: a frame whose transition from the previous frame's ID
// was never seen in training (an unknown ID included) scores kNovelSurprise; any other frame, the
// distance of its log inter-arrival from its ID's mean in spreads, capped there (an ID never seen
// scores kNovelSurprise too). A window's score
// (window_score) counts its frames of IDs never seen, and adds the mean surprise of its frames
// scaled into [0, 1]: an ID the bus never carried outranks any timing or transition evidence.
// ID whitelists, per-ID timing and ID transitions are what the CAN IDS literature compares with;
// this is the three in one score.
#pragma once

#include <cstdint>
#include <span>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "headroom/can/can_frame.hpp"

namespace headroom::baseline {

// A frame's surprise is at most this, and a novel transition scores exactly this.
inline constexpr double kNovelSurprise = 10.0;
// Floors that keep one ID's statistics from making every deviation infinite: a spread of log
// inter-arrival times below this (a perfectly periodic ID) counts as this, and an inter-arrival
// below kMinInterArrival_s (equal timestamps) as that.
inline constexpr double kMinLogSpread = 0.05;
inline constexpr double kMinInterArrival_s = 1e-6;

// One CAN ID's inter-arrival statistics, in natural log of seconds.
struct InterArrival {
  double mean_log = 0;
  double spread_log = kMinLogSpread;  // standard deviation, floored
  std::uint64_t count = 0;            // inter-arrivals learnt
};

// What normal traffic looked like. Immutable once built; thread-safe to read.
class TrafficProfile {
 public:
  // The inter-arrival statistics of `id`, or null for an ID without at least two inter-arrivals
  // in training.
  const InterArrival* inter_arrival(std::uint32_t id) const;
  bool knows_id(std::uint32_t id) const { return ids_.contains(id); }
  bool knows_transition(std::uint32_t from, std::uint32_t to) const;
  std::size_t ids() const { return ids_.size(); }
  std::size_t transitions() const { return transitions_.size(); }
  // Whether a transition never seen makes a frame surprising (frame_surprise). Off for a profile
  // that learnt a vehicle from its first minutes only: enough traffic for its IDs and their
  // periods, not for which ID follows which (on set_01's and hcrl_sa's new vehicles, judging
  // transitions learnt from 10,000 frames cost F1 0.3-0.4; docs/detection.md).
  bool judges_transitions() const { return judges_transitions_; }

 private:
  friend class TrafficProfileBuilder;
  bool judges_transitions_ = true;
  std::unordered_set<std::uint32_t> ids_;
  std::unordered_map<std::uint32_t, InterArrival> inter_arrival_;
  std::unordered_set<std::uint64_t> transitions_;  // from << 32 | to
};

// Learns a TrafficProfile from runs of normal frames, each in time order. A run is contiguous
// traffic: inter-arrivals and transitions are taken within a run, never across two. Copyable, so
// that one learnt on training traffic can go on learning a new vehicle's. Not thread-safe.
class TrafficProfileBuilder {
 public:
  void learn_run(std::span<const can::CanFrame> frames);
  // `judge_transitions`: TrafficProfile::judges_transitions.
  TrafficProfile build(bool judge_transitions = true) const;

 private:
  struct Moments {
    double sum = 0, sum_squares = 0;
    std::uint64_t count = 0;
  };
  std::unordered_set<std::uint32_t> ids_;
  std::unordered_map<std::uint32_t, Moments> moments_;
  std::unordered_set<std::uint64_t> transitions_;
};

// The surprise of every frame of one recording, in time order (`frames` the whole recording, so
// that each frame's inter-arrival and transition read the frames before it, as a detector on the
// bus would): kNovelSurprise for an ID the profile never saw, or (where the profile judges
// transitions) a transition it never saw; else the timing deviation. The first frame of the
// recording has no transition; an ID's first frame has no inter-arrival: each scores 0 on what it
// lacks.
std::vector<float> frame_surprise(const TrafficProfile& profile,
                                  std::span<const can::CanFrame> frames);

// The score of a window of frames (`surprise` theirs, from frame_surprise over the recording):
// how many of its frames carry an ID the profile never saw, plus their mean surprise divided by
// kNovelSurprise (so in [0, 1]). 0 for an empty window.
double window_score(const TrafficProfile& profile, std::span<const can::CanFrame> frames,
                    std::span<const float> surprise);

}  // namespace headroom::baseline
