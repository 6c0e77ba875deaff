#include "headroom/train_cli/data_parallel.hpp"

#include <chrono>

namespace headroom::cli {

std::shared_ptr<distributed::DataParallelJob> join_data_parallel_job(
    const TrainingFlags& flags, train::TrainingConfig& config) {
  distributed::ProcessGroupOptions options;
  options.timeout = std::chrono::milliseconds(
      static_cast<std::int64_t>(flags.distributed_timeout_seconds * 1000.0));
  auto job = distributed::DataParallelJob::join(
      distributed::parse_distributed_mode(flags.distributed), config.run.device, options);
  config.run.device = job->device();
  return job;
}

}  // namespace headroom::cli
