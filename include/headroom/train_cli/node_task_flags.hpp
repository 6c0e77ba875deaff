// Which of the node task's defaults (train/stages/node_classifier_stage.hpp) a command's flags
// set: `run CORPUS_DIR` and `plan --store NODE_STORE` resolve the same configuration from them.
#pragma once

#include "headroom/train/stages/node_classifier_stage.hpp"

namespace CLI {
class App;
}

namespace headroom::cli {

// The flags of `command` that were given on its command line, among those the node task's
// defaults would otherwise set.
train::NodeDefaultsGiven node_defaults_given(const CLI::App& command);

}  // namespace headroom::cli
