// Which ranks of a job are still alive, told through the rendezvous store: each rank adds to its
// own counter there every interval from a thread of its own (on its own store connection); a rank
// whose counter stops moving is lost. A rank that fails a collective marks itself as failed
// before it looks, so that ranks ending because of the same loss are not named as lost.
// Private to the distributed area. Thread-safety: lost_ranks and mark_failed are called from one
// thread; the beating thread is internal.
#pragma once

#include <torch/csrc/distributed/c10d/Store.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace headroom::distributed::detail {

// Opens a new connection to the job's store (rank 0's TCPStore).
using StoreConnector = std::function<c10::intrusive_ptr<c10d::Store>()>;

class RankHeartbeat {
 public:
  RankHeartbeat(StoreConnector connect, int rank, int world_size,
                std::chrono::milliseconds interval);
  ~RankHeartbeat();
  RankHeartbeat(const RankHeartbeat&) = delete;
  RankHeartbeat& operator=(const RankHeartbeat&) = delete;

  // Marks this rank as failed, watches every counter for `grace`, and describes the ranks whose
  // counter did not move and that did not mark themselves failed, e.g. "rank 1 (no heartbeat for
  // 2.5 s)"; "rank 0 (its rendezvous store is unreachable)" when the store is gone.
  std::string lost_ranks(std::chrono::milliseconds grace);

 private:
  void beat();

  StoreConnector connect_;
  int rank_;
  int world_size_;
  std::chrono::milliseconds interval_;
  std::mutex mutex_;
  std::condition_variable stop_signal_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace headroom::distributed::detail
