// A decision threshold for a recording of a vehicle never seen in training, set on its own first
// windows without reading a label: a deployment on a new car has its traffic, not its labels, and
// attacks may already be among those windows. Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <span>

namespace headroom::eval {

// Robust centre and spread after outliers are fenced off: from every score, the median and 1.4826
// MAD (the standard deviation for normal data) are taken, scores above median + fence_mads x spread
// dropped, and that repeats on what is left until nothing more is dropped (at most 32 rounds; a
// spread of 0 stops it). A later round's fence can lie above an earlier one: what it dropped stays.
struct RobustFence {
  double median = 0;  // of the inliers (the last round)
  double spread = 0;  // 1.4826 x MAD of the inliers
  double fence = 0;   // lowest of the rounds' fences; the inliers are the scores at or below it
  std::size_t inliers = 0;
};

// Throws std::invalid_argument for an empty sample, a NaN score or fence_mads <= 0.
RobustFence robust_fence(std::span<const float> scores, double fence_mads);

// The label-free threshold: the lowest one that flags at most `target_fpr` of robust_fence's
// inliers (fpr_threshold on them, as if every inlier were normal). Attack windows above the
// fence, however many (fewer than half), do not move it; attacks inside the fence look like normal
// traffic to this score and move it no more than normal windows would. Throws
// std::invalid_argument like robust_fence, or for target_fpr outside [0, 1).
double label_free_threshold(std::span<const float> scores, double target_fpr, double fence_mads);

// The default fence: 3 spreads, the best of 3-5 spreads and one or repeated rounds on three
// measured cases (docs/detection.md, "Label-free adaptation"): hcrl_sa as recorded (no attack in
// the first 200 windows), hcrl_sa with 15% of them attacks (moved in on purpose), and the
// synthetic default (28-41% attacks there). Where the plain 99th percentile fell to F1 0.05-0.30
// under contamination, the distilled student kept 0.86-0.99.
inline constexpr double kDefaultFenceMads = 3.0;

}  // namespace headroom::eval
