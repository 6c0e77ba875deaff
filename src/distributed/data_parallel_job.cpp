#include "headroom/distributed/data_parallel_job.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <stdexcept>

#include "headroom/distributed/gradient_averaging.hpp"
#include "headroom/util/process_role.hpp"

namespace headroom::distributed {

DistributedMode parse_distributed_mode(std::string_view text) {
  if (text == "auto") return DistributedMode::kAuto;
  if (text == "off") return DistributedMode::kOff;
  throw std::invalid_argument(fmt::format("--distributed must be auto or off, not '{}'", text));
}

std::string rank_device(const std::string& device, const LaunchEnvironment& env) {
  if (device == "cuda" && env.launched()) return fmt::format("cuda:{}", env.local_rank);
  return device;
}

std::shared_ptr<DataParallelJob> DataParallelJob::join(DistributedMode mode,
                                                       const std::string& device,
                                                       const ProcessGroupOptions& options) {
  std::shared_ptr<DataParallelJob> job(new DataParallelJob());
  job->device_ = device;
  if (mode == DistributedMode::kOff) return job;
  job->env_ = detect_launch_from_environment();
  if (!job->env_.launched()) return job;
  job->device_ = rank_device(device, job->env_);
  // Said before the rendezvous: variables left in a shell (RANK, WORLD_SIZE, MASTER_PORT) once
  // made a plain single-process command wait silently for peers that never come.
  fmt::print(stderr,
             "headroom: joining a {} job as rank {} of {} ({}); waiting up to {} s for the "
             "rendezvous at {}:{} (--distributed off trains alone)\n",
             to_string(job->env_.launcher), job->env_.rank, job->env_.world_size,
             job->env_.launcher == Launcher::kTorchrun ? "RANK and WORLD_SIZE are set"
                                                       : "SLURM_PROCID and SLURM_STEP_ID are set",
             std::chrono::duration_cast<std::chrono::seconds>(options.timeout).count(),
             job->env_.master_addr, job->env_.master_port);
  std::fflush(stderr);
  job->group_ = ProcessGroup::connect(job->env_, c10::Device(job->device_), options);
  util::set_process_role({job->env_.rank, job->env_.world_size, job->env_.local_world_size});
  train::set_collectives(job->group_);
  job->hooks_.after_backward = weighted_gradient_average(*job->group_);
  fmt::print(stderr, "headroom: rank {} of {} ({}, {} on {}; rendezvous {}:{})\n", job->env_.rank,
             job->env_.world_size, to_string(job->env_.launcher), job->group_->backend_name(),
             job->device_, job->env_.master_addr, job->env_.master_port);
  return job;
}

DataParallelJob::~DataParallelJob() {
  if (group_) train::set_collectives(nullptr);
}

void DataParallelJob::run_on_rank0(const std::string& step, const std::function<void()>& work) {
  if (!group_) {
    work();
    return;
  }
  group_->run_on_rank0(step, work);
}

}  // namespace headroom::distributed
