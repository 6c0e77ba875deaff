// The training subcommands' entry into a data-parallel job (distributed/data_parallel_job.hpp):
// joins it as the flags say and points the configuration at this rank's device.
#pragma once

#include <memory>

#include "headroom/distributed/data_parallel_job.hpp"
#include "headroom/train/config/training_config.hpp"
#include "headroom/train_cli/training_flags.hpp"

namespace headroom::cli {

// Joins the job this process was launched into (--distributed auto) or none (off; no launcher),
// and sets config.run.device to this rank's device. Throws std::invalid_argument on a bad flag,
// distributed::CollectiveFailure when the ranks do not meet within --distributed-timeout.
std::shared_ptr<distributed::DataParallelJob> join_data_parallel_job(const TrainingFlags& flags,
                                                                     train::TrainingConfig& config);

}  // namespace headroom::cli
