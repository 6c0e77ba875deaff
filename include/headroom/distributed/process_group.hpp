// The collectives of a data-parallel job on PyTorch's c10d: a TCPStore served by rank 0 for the
// rendezvous, and ProcessGroupGloo (CPU tensors) or ProcessGroupNCCL (CUDA tensors) for the
// collectives themselves. Every operation waits at most the job's collective timeout; a failed or
// timed-out operation throws CollectiveFailure naming the ranks that were lost (those whose
// heartbeat in the store stopped), so that a dead rank ends the job instead of hanging it.
// Thread-safety: the collectives are called from one thread (train/context/collectives.hpp); the
// heartbeat runs on its own thread with its own store connection.
#pragma once

#include <c10/core/Device.h>

#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>

#include "headroom/distributed/launch_environment.hpp"
#include "headroom/train/context/collectives.hpp"

namespace headroom::distributed {

// A collective operation that failed or timed out: which one, on which rank, and the lost ranks.
class CollectiveFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct ProcessGroupOptions {
  // The longest a rendezvous or a collective may wait for the other ranks. A killed rank is
  // usually noticed at once (its connections close); this bounds a rank that hangs.
  std::chrono::milliseconds timeout = std::chrono::minutes(5);
  // How often each rank proves it is alive in the store, and how long a silent rank is given
  // before it is named as lost.
  std::chrono::milliseconds heartbeat_interval = std::chrono::milliseconds(500);
  std::chrono::milliseconds heartbeat_grace = std::chrono::milliseconds(2500);
};

class ProcessGroup final : public train::Collectives {
 public:
  // Connects rank env.rank to the rendezvous store at env.master_addr:env.master_port (rank 0
  // serves it) and creates the backend: NCCL when `device` is CUDA (on that device), else Gloo.
  // Returns once every rank has joined. Throws CollectiveFailure when they do not within the
  // timeout.
  static std::shared_ptr<ProcessGroup> connect(const LaunchEnvironment& env,
                                               const c10::Device& device,
                                               const ProcessGroupOptions& options = {});
  ~ProcessGroup() override;
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;

  int rank() const override;
  int world_size() const override;
  std::string backend_name() const;  // "gloo" or "nccl"

  void all_reduce_sum(std::vector<at::Tensor>& tensors) override;
  void broadcast_from_rank0(std::vector<at::Tensor>& tensors) override;
  at::Tensor all_gather_concat(const at::Tensor& local) override;
  // Rank 0 publishes the outcome of `work` in the rendezvous store ("ok" or the failure) under a
  // key of its own per call, which the other ranks await (see train::Collectives).
  void run_on_rank0(const std::string& step, const std::function<void()>& work) override;

  // A value published in the rendezvous store, and the wait for it (up to `timeout`): how ranks
  // wait for work one rank does alone, which may take longer than any collective may.
  void publish(const std::string& key, const std::string& value);
  std::string await(const std::string& key, std::chrono::milliseconds timeout);

  struct State;

 private:
  explicit ProcessGroup(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace headroom::distributed
