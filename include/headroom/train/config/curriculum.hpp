// The curriculum of the GAT teacher: every epoch trains on all attack graphs plus a fresh random
// sample of "hard" normal graphs, the hard ones being those whose VGAE reconstruction score lies
// at or above a percentile that rises with training progress.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace headroom::train {

struct CurriculumSchedule {
  double start_ratio = 1.0;        // normals per attack graph at progress 0
  double ratio_growth = 9.0;       // added by progress 1
  double start_percentile = 75.0;  // hardness percentile at progress 0
  double percentile_growth = 20.0;
};

struct CurriculumEpoch {
  double ratio = 0;
  double percentile = 0;
  double threshold = 0;          // difficulty at that percentile (linear interpolation, as numpy)
  std::size_t hard_normals = 0;  // normals at or above the threshold
  std::vector<std::uint32_t> graph_ids;  // attacks + sampled hard normals, ascending
};

// progress p = epoch / max_epochs; ratio = start_ratio + ratio_growth*p; percentile =
// start_percentile + percentile_growth*p; sample min(floor(ratio*#attacks), #hard) hard normals
// without replacement, seeded by (seed, epoch). `normal_difficulty[i]` belongs to normal_ids[i].
CurriculumEpoch curriculum_epoch(std::span<const std::uint32_t> attack_ids,
                                 std::span<const std::uint32_t> normal_ids,
                                 std::span<const float> normal_difficulty, std::int64_t epoch,
                                 std::int64_t max_epochs, const CurriculumSchedule& schedule,
                                 std::uint64_t seed);

// numpy.percentile(values, q) with linear interpolation; q in [0, 100]. values must be non-empty.
double percentile(std::span<const float> values, double q);

}  // namespace headroom::train
