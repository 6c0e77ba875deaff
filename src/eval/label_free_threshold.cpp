#include "headroom/eval/label_free_threshold.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <vector>

#include "headroom/eval/decision_threshold.hpp"

namespace headroom::eval {
namespace {

// The median of `values` (reordered), the mean of the two middle ones for an even count.
double median_of(std::vector<double>& values) {
  const auto middle = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
  std::nth_element(values.begin(), middle, values.end());
  const double upper = *middle;
  if (values.size() % 2 == 1) return upper;
  const double lower = *std::max_element(values.begin(), middle);
  return 0.5 * (lower + upper);
}

// Scale that makes the MAD estimate the standard deviation of normally distributed data.
constexpr double kMadToSigma = 1.4826;
constexpr int kMaxRounds = 32;

}  // namespace

RobustFence robust_fence(std::span<const float> scores, double fence_mads) {
  if (scores.empty()) throw std::invalid_argument("robust_fence: no score");
  if (!(fence_mads > 0)) throw std::invalid_argument("robust_fence: fence_mads must be > 0");
  std::vector<double> inliers(scores.begin(), scores.end());
  if (std::any_of(inliers.begin(), inliers.end(), [](double s) { return std::isnan(s); }))
    throw std::invalid_argument("robust_fence: a score is NaN");
  RobustFence fence;
  fence.fence = std::numeric_limits<double>::infinity();
  for (int round = 0; round < kMaxRounds; ++round) {
    std::vector<double> work = inliers;
    fence.median = median_of(work);
    for (auto& value : work) value = std::fabs(value - fence.median);
    fence.spread = kMadToSigma * median_of(work);
    const double round_fence = fence.spread > 0 ? fence.median + fence_mads * fence.spread
                                                : std::numeric_limits<double>::infinity();
    // What is left passed every earlier fence; a round's fence can still lie above an earlier one
    // (dropping the high scores lowers the median but can widen the MAD, and a spread of 0 makes
    // it infinite), and the scores between the two were dropped: the bound is the lowest fence.
    fence.fence = std::min(fence.fence, round_fence);
    const auto kept =
        std::partition(inliers.begin(), inliers.end(), [&](double s) { return s <= fence.fence; });
    if (kept == inliers.end()) break;
    inliers.erase(kept, inliers.end());
  }
  fence.inliers = inliers.size();
  return fence;
}

double label_free_threshold(std::span<const float> scores, double target_fpr, double fence_mads) {
  const RobustFence fence = robust_fence(scores, fence_mads);
  std::vector<float> inliers;
  for (const float s : scores)
    if (static_cast<double>(s) <= fence.fence) inliers.push_back(s);
  const std::vector<std::uint8_t> unlabelled(inliers.size(), 0);
  return fpr_threshold(unlabelled, inliers, target_fpr);
}

}  // namespace headroom::eval
