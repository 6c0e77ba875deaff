// Which process of a run writes files. A run may be one process or several data-parallel ones
// (torchrun, SLURM); exactly one of them — rank 0 — writes run directories, checkpoints, metrics
// and logs, and every file write of a run goes through this one notion. In one process (the
// default) this process writes.
// Thread-safety: set once at start-up, before any training thread exists; read from anywhere.
#pragma once

namespace headroom::util {

struct ProcessRole {
  int rank = 0;           // this process's index among the run's processes
  int world_size = 1;     // the run's processes
  int ranks_on_node = 1;  // the run's processes on this machine, this one included
  bool writes() const { return rank == 0; }
};

// The role set by set_process_role, or the single-process default.
const ProcessRole& process_role();
// Throws std::invalid_argument unless 0 <= rank < world_size and 1 <= ranks_on_node <= world_size.
void set_process_role(ProcessRole role);

}  // namespace headroom::util
