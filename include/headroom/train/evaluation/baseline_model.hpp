// The classical baseline's row in every evaluation (baseline/store_baseline.hpp): its name in the
// tables, in evaluation.json and among the pipeline's results.
#pragma once

#include <string_view>

namespace headroom::train {

inline constexpr std::string_view kBaselineModel = "baseline";

}  // namespace headroom::train
