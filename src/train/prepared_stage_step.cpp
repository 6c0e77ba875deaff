#include "headroom/train/prepared_stage_step.hpp"

#include <stdexcept>

#include "headroom/train/autoencoder_stage.hpp"
#include "headroom/train/classifier_stage.hpp"

namespace headroom::train {

std::unique_ptr<PreparedStageStep> prepare_stage_step(const TrainingConfig& config) {
  switch (config.stage) {
    case Stage::kAutoencoder:
      return prepare_autoencoder_step(config);
    case Stage::kNormal:
    case Stage::kCurriculum:
      return prepare_classifier_step(config);
    case Stage::kEvaluation:
      break;
  }
  throw std::invalid_argument("stage evaluation has no training step to prepare");
}

}  // namespace headroom::train
