#include "headroom/baseline/traffic_profile.hpp"

#include <algorithm>
#include <cmath>

namespace headroom::baseline {
namespace {

std::uint64_t transition_key(std::uint32_t from, std::uint32_t to) {
  return (static_cast<std::uint64_t>(from) << 32) | to;
}

double log_inter_arrival(double previous_s, double now_s) {
  return std::log(std::max(now_s - previous_s, kMinInterArrival_s));
}

}  // namespace

const InterArrival* TrafficProfile::inter_arrival(std::uint32_t id) const {
  const auto it = inter_arrival_.find(id);
  return it == inter_arrival_.end() ? nullptr : &it->second;
}

bool TrafficProfile::knows_transition(std::uint32_t from, std::uint32_t to) const {
  return transitions_.contains(transition_key(from, to));
}

void TrafficProfileBuilder::learn_run(std::span<const can::CanFrame> frames) {
  std::unordered_map<std::uint32_t, double> last_seen_s;
  for (std::size_t i = 0; i < frames.size(); ++i) {
    const auto& frame = frames[i];
    ids_.insert(frame.id);
    if (i > 0) transitions_.insert(transition_key(frames[i - 1].id, frame.id));
    const auto [it, first] = last_seen_s.try_emplace(frame.id, frame.timestamp_s);
    if (!first) {
      const double value = log_inter_arrival(it->second, frame.timestamp_s);
      auto& m = moments_[frame.id];
      m.sum += value;
      m.sum_squares += value * value;
      ++m.count;
      it->second = frame.timestamp_s;
    }
  }
}

TrafficProfile TrafficProfileBuilder::build(bool judge_transitions) const {
  TrafficProfile profile;
  profile.judges_transitions_ = judge_transitions;
  profile.ids_ = ids_;
  profile.transitions_ = transitions_;
  for (const auto& [id, m] : moments_) {
    if (m.count < 2) continue;
    const double n = static_cast<double>(m.count);
    const double mean = m.sum / n;
    const double variance = std::max(0.0, (m.sum_squares - n * mean * mean) / (n - 1));
    profile.inter_arrival_[id] = {mean, std::max(std::sqrt(variance), kMinLogSpread), m.count};
  }
  return profile;
}

std::vector<float> frame_surprise(const TrafficProfile& profile,
                                  std::span<const can::CanFrame> frames) {
  std::vector<float> surprise(frames.size(), 0.0F);
  std::unordered_map<std::uint32_t, double> last_seen_s;
  for (std::size_t i = 0; i < frames.size(); ++i) {
    const auto& frame = frames[i];
    const auto [it, first] = last_seen_s.try_emplace(frame.id, frame.timestamp_s);
    const double previous_s = it->second;
    it->second = frame.timestamp_s;
    const bool novel =
        !profile.knows_id(frame.id) || (profile.judges_transitions() && i > 0 &&
                                        !profile.knows_transition(frames[i - 1].id, frame.id));
    if (novel) {
      surprise[i] = static_cast<float>(kNovelSurprise);
      continue;
    }
    const InterArrival* stats = profile.inter_arrival(frame.id);
    if (first || stats == nullptr) continue;
    const double z = std::fabs(log_inter_arrival(previous_s, frame.timestamp_s) - stats->mean_log) /
                     stats->spread_log;
    surprise[i] = static_cast<float>(std::min(z, kNovelSurprise));
  }
  return surprise;
}

double window_score(const TrafficProfile& profile, std::span<const can::CanFrame> frames,
                    std::span<const float> surprise) {
  if (frames.empty()) return 0;
  double unknown = 0;
  double sum = 0;
  for (std::size_t i = 0; i < frames.size(); ++i) {
    unknown += profile.knows_id(frames[i].id) ? 0 : 1;
    sum += surprise[i];
  }
  return unknown + sum / static_cast<double>(frames.size()) / kNovelSurprise;
}

}  // namespace headroom::baseline
