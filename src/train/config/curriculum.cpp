#include "headroom/train/config/curriculum.hpp"

#include "headroom/util/split_mix.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

namespace headroom::train {
namespace {

// Separates the curriculum's stream from the loader's epoch shuffle when both get the same seed.
constexpr std::uint64_t kCurriculumStream = 0x63757272696375ULL;  // "curricu"

}  // namespace

double percentile(std::span<const float> values, double q) {
  if (values.empty()) throw std::invalid_argument("percentile: no values");
  if (!(q >= 0.0 && q <= 100.0)) {
    throw std::invalid_argument("percentile: q = " + std::to_string(q) + " is outside [0, 100]");
  }
  if (std::any_of(values.begin(), values.end(), [](float v) { return std::isnan(v); })) {
    throw std::invalid_argument("percentile: a value is NaN");
  }
  std::vector<double> sorted(values.begin(), values.end());
  std::sort(sorted.begin(), sorted.end());
  const double position = q / 100.0 * static_cast<double>(sorted.size() - 1);
  const auto below = static_cast<std::size_t>(std::floor(position));
  const std::size_t above = std::min(below + 1, sorted.size() - 1);
  const double t = position - static_cast<double>(below);
  const double a = sorted[below];
  const double b = sorted[above];
  // numpy's lerp: interpolate from the nearer end, which keeps the result inside [a, b].
  return t < 0.5 ? a + (b - a) * t : b - (b - a) * (1.0 - t);
}

CurriculumEpoch curriculum_epoch(std::span<const std::uint32_t> attack_ids,
                                 std::span<const std::uint32_t> normal_ids,
                                 std::span<const float> normal_difficulty, std::int64_t epoch,
                                 std::int64_t max_epochs, const CurriculumSchedule& schedule,
                                 std::uint64_t seed) {
  if (normal_difficulty.size() != normal_ids.size()) {
    throw std::invalid_argument("curriculum_epoch: " + std::to_string(normal_ids.size()) +
                                " normal graphs but " + std::to_string(normal_difficulty.size()) +
                                " difficulty scores");
  }
  if (max_epochs < 1) throw std::invalid_argument("curriculum_epoch: max_epochs must be >= 1");
  if (epoch < 0 || epoch > max_epochs) {
    throw std::invalid_argument("curriculum_epoch: epoch " + std::to_string(epoch) +
                                " is outside [0, " + std::to_string(max_epochs) + "]");
  }
  const double progress = static_cast<double>(epoch) / static_cast<double>(max_epochs);
  CurriculumEpoch out;
  out.ratio = schedule.start_ratio + schedule.ratio_growth * progress;
  out.percentile = schedule.start_percentile + schedule.percentile_growth * progress;
  out.graph_ids.assign(attack_ids.begin(), attack_ids.end());

  std::vector<std::uint32_t> hard;
  if (normal_ids.empty()) {
    out.threshold = std::numeric_limits<double>::quiet_NaN();  // no difficulty to rank
  } else {
    out.threshold = percentile(normal_difficulty, out.percentile);
    for (std::size_t i = 0; i < normal_ids.size(); ++i) {
      if (static_cast<double>(normal_difficulty[i]) >= out.threshold) hard.push_back(normal_ids[i]);
    }
  }
  out.hard_normals = hard.size();

  const double wanted =
      std::floor(std::max(0.0, out.ratio) * static_cast<double>(attack_ids.size()));
  const std::size_t take =
      wanted >= static_cast<double>(hard.size()) ? hard.size() : static_cast<std::size_t>(wanted);
  // Partial Fisher-Yates: after step i, hard[0..i] is a uniform sample without replacement.
  auto rng =
      util::SplitMix64::for_epoch(seed ^ kCurriculumStream, static_cast<std::uint64_t>(epoch));
  for (std::size_t i = 0; i < take; ++i) {
    const auto j = i + static_cast<std::size_t>(rng.below(hard.size() - i));
    std::swap(hard[i], hard[j]);
  }
  out.graph_ids.insert(out.graph_ids.end(), hard.begin(),
                       hard.begin() + static_cast<std::ptrdiff_t>(take));
  std::sort(out.graph_ids.begin(), out.graph_ids.end());
  return out;
}

}  // namespace headroom::train
