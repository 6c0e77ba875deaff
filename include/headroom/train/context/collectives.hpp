// Operations across the processes of a data-parallel run, as the training code needs them. The
// run's processes (ranks) each call the same operations in the same order with tensors of the
// same shapes; an operation returns once every rank took part. In one process (the default) every
// operation is the identity, so the training code calls them unconditionally.
//
// The engine behind them (c10d's Gloo or NCCL process group) lives in headroom/distributed; this
// interface keeps the training core free of it. Which process writes files is a separate notion
// (util/process_role.hpp) that the distributed start-up sets together with these.
//
// Thread-safety: set_collectives is called once at start-up, before any training thread exists;
// the operations are called from the training thread only (one collective at a time).
#pragma once

#include <ATen/core/Tensor.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace headroom::train {

class Collectives {
 public:
  virtual ~Collectives() = default;

  virtual int rank() const = 0;        // this process, 0 .. world_size() - 1
  virtual int world_size() const = 0;  // the run's processes

  // Every tensor becomes the element-wise sum of its counterparts on all ranks, in place.
  virtual void all_reduce_sum(std::vector<at::Tensor>& tensors) = 0;
  // Every tensor becomes rank 0's, in place.
  virtual void broadcast_from_rank0(std::vector<at::Tensor>& tensors) = 0;
  // Every rank's 1-D `local` (lengths may differ between ranks; same dtype), concatenated in rank
  // order; the same tensor on every rank, on `local`'s device.
  virtual at::Tensor all_gather_concat(const at::Tensor& local) = 0;

  // Runs `work` on rank 0 alone while the other ranks wait for it, however long it takes (the
  // wait is not bounded by the collective timeout, but a lost rank 0 still ends it): how one
  // process builds a file that every rank then reads. Returns on every rank once `work` returned
  // on rank 0. When `work` throws there, rank 0 rethrows it and every other rank throws
  // std::runtime_error "rank 0 could not <step>: <what>", so no rank waits for a file that will
  // not come. `step` says what `work` does ("build the teacher output cache").
  virtual void run_on_rank0(const std::string& step, const std::function<void()>& work) = 0;
};

// The collectives of this process: set_collectives's, or those of a single process.
Collectives& collectives();
// Installs the run's collectives (nullptr: back to a single process).
void set_collectives(std::shared_ptr<Collectives> collectives);

// Rank 0's `value` on every rank: where ranks must take one decision (resume or start over).
bool agree_with_rank0(Collectives& collectives, bool value);

}  // namespace headroom::train
