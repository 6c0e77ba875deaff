// Joining the data-parallel job this process was launched into (torchrun or srun; see
// launch_environment.hpp), once, at start-up: the c10d process group is connected, rank 0 becomes
// the only process that writes (util/process_role.hpp), the training code's collectives
// (train/context/collectives.hpp) become the group's, and the epoch loop gets the gradient average
// as its after-backward hook. Without a launcher, or with --distributed off, nothing changes: one
// process, no hooks.
// Not thread-safe: join from the main thread before training starts; the job lives until exit.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "headroom/distributed/launch_environment.hpp"
#include "headroom/distributed/process_group.hpp"
#include "headroom/train/loop/training_loop.hpp"

namespace headroom::distributed {

enum class DistributedMode { kAuto, kOff };
// "auto" or "off"; throws std::invalid_argument otherwise.
DistributedMode parse_distributed_mode(std::string_view text);

// The device a rank trains on: "cuda" becomes cuda:LOCAL_RANK (one GPU per rank on its node); an
// explicit index or "cpu" stays.
std::string rank_device(const std::string& device, const LaunchEnvironment& env);

class DataParallelJob {
 public:
  // Detects the launch from the environment. `device` is the configured training device; a
  // launched rank trains on rank_device(device) and its collectives run there.
  static std::shared_ptr<DataParallelJob> join(DistributedMode mode, const std::string& device,
                                               const ProcessGroupOptions& options = {});

  // Leaves the job: the training code's collectives are a single process's again.
  ~DataParallelJob();
  DataParallelJob(const DataParallelJob&) = delete;
  DataParallelJob& operator=(const DataParallelJob&) = delete;

  bool distributed() const { return group_ != nullptr; }
  const LaunchEnvironment& environment() const { return env_; }
  // The hooks every training stage of this process runs with.
  const train::LoopHooks& hooks() const { return hooks_; }
  // The device this rank trains on (see rank_device).
  const std::string& device() const { return device_; }

  // Runs `work` on rank 0 only (preprocessing a store the others will read) while the others
  // wait for it, however long it takes; throws on every rank when it fails on rank 0.
  void run_on_rank0(const std::string& step, const std::function<void()>& work);

 private:
  DataParallelJob() = default;

  LaunchEnvironment env_;
  std::string device_;
  std::shared_ptr<ProcessGroup> group_;
  train::LoopHooks hooks_;
};

}  // namespace headroom::distributed
