// What a training stage reports: where its run directory is and how its training went.
#pragma once

#include <filesystem>

#include "headroom/train/loop/training_loop.hpp"

namespace headroom::train {

struct StageResult {
  std::filesystem::path run_dir;
  TrainingOutcome outcome;
};

}  // namespace headroom::train
