#include "headroom/train/stages/stage_preparation.hpp"

#include <stdexcept>

#include "headroom/train/stages/autoencoder_stage.hpp"
#include "headroom/train/stages/classifier_stage.hpp"

namespace headroom::train {

std::unique_ptr<PreparedStageStep> prepare_stage_step(const TrainingConfig& config) {
  switch (config.stage) {
    case Stage::kAutoencoder:
      return prepare_autoencoder_step(config);
    case Stage::kNormal:
    case Stage::kCurriculum:
      return prepare_classifier_step(config);
    case Stage::kEvaluation:
    case Stage::kFusion:
    case Stage::kNode:  // its step is a whole graph's, planned by the node task
      break;
  }
  throw std::invalid_argument("stage " + to_string(config.stage) +
                              " has no graph training step to prepare");
}

}  // namespace headroom::train
