// Where this process stands in a data-parallel job, read from the variables its launcher sets:
// torchrun (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT) or a SLURM
// job step started by srun (SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID, SLURM_STEP_TASKS_PER_NODE,
// SLURM_JOB_NODELIST, SLURM_JOB_ID; MASTER_ADDR and MASTER_PORT win when set). Without either, the
// process runs alone.
// Pure functions of the variables given; thread-safe.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace headroom::distributed {

enum class Launcher { kNone, kTorchrun, kSlurm };
const char* to_string(Launcher launcher);

struct LaunchEnvironment {
  Launcher launcher = Launcher::kNone;
  int rank = 0;              // this process among the job's, 0 .. world_size - 1
  int world_size = 1;        // processes of the job
  int local_rank = 0;        // this process among those on its node: its GPU is cuda:local_rank
  int local_world_size = 1;  // the job's processes on this node, which share its host memory
  std::string master_addr;   // host of rank 0, which serves the rendezvous store
  int master_port = 0;       // the store's TCP port

  bool launched() const { return launcher != Launcher::kNone; }
};

// Reads a variable: its value, or nullopt when it is not set.
using EnvironmentLookup = std::function<std::optional<std::string>(const char* name)>;

// torchrun when RANK and WORLD_SIZE are set; else SLURM when SLURM_PROCID and SLURM_STEP_ID are (a
// task of an srun step; a batch script alone is not a job step); else none.
// Throws std::invalid_argument naming the variable that is missing or not a valid number, or a
// rank outside 0 .. world_size - 1.
LaunchEnvironment detect_launch(const EnvironmentLookup& lookup);
// The same from this process's environment.
LaunchEnvironment detect_launch_from_environment();

// The first host of a SLURM node list ("gpu[03-05,09],cpu1" -> "gpu03"). Throws
// std::invalid_argument on an empty or malformed list.
std::string first_slurm_host(std::string_view node_list);
// The tasks on node `node_id` (SLURM_NODEID, from 0) of a SLURM tasks-per-node list, whose
// repeated counts are compressed: "2(x3),1" is 2 tasks on each of nodes 0-2 and 1 on node 3.
// Throws std::invalid_argument on a malformed list or a node the list does not reach.
int slurm_tasks_on_node(std::string_view tasks_per_node, int node_id);
// The rendezvous port of a SLURM job when MASTER_PORT is not set: 20000 + job id mod 20000, so
// that jobs sharing a node rarely collide (in 20000..39999, clear of the ephemeral range).
int slurm_rendezvous_port(long long job_id);

}  // namespace headroom::distributed
