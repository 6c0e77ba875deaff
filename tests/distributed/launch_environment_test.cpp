// Reading a data-parallel launch from torchrun's or SLURM's variables.
#include "headroom/distributed/launch_environment.hpp"

#include <gtest/gtest.h>

#include <map>
#include <stdexcept>
#include <string>

#include "headroom/distributed/data_parallel_job.hpp"

namespace headroom::distributed {
namespace {

EnvironmentLookup variables(std::map<std::string, std::string> values) {
  return [values = std::move(values)](const char* name) -> std::optional<std::string> {
    const auto found = values.find(name);
    if (found == values.end()) return std::nullopt;
    return found->second;
  };
}

TEST(LaunchEnvironment, WithoutLauncherVariablesTheProcessRunsAlone) {
  const auto env = detect_launch(variables({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "4"}}));
  EXPECT_FALSE(env.launched()) << "a batch script is not a job step: no srun, no job";
  EXPECT_EQ(env.world_size, 1);
}

TEST(LaunchEnvironment, TorchrunVariables) {
  const auto env = detect_launch(variables({{"RANK", "3"},
                                            {"WORLD_SIZE", "8"},
                                            {"LOCAL_RANK", "1"},
                                            {"MASTER_ADDR", "node7"},
                                            {"MASTER_PORT", "29400"}}));
  EXPECT_EQ(env.launcher, Launcher::kTorchrun);
  EXPECT_EQ(env.rank, 3);
  EXPECT_EQ(env.world_size, 8);
  EXPECT_EQ(env.local_rank, 1);
  EXPECT_EQ(env.master_addr, "node7");
  EXPECT_EQ(env.master_port, 29400);
  EXPECT_EQ(rank_device("cuda", env), "cuda:1");
  EXPECT_EQ(rank_device("cpu", env), "cpu");
  EXPECT_EQ(rank_device("cuda:0", env), "cuda:0");
}

TEST(LaunchEnvironment, SlurmStepDerivesAddressAndPortUnlessSet) {
  const std::map<std::string, std::string> step = {{"SLURM_PROCID", "5"},
                                                   {"SLURM_STEP_ID", "0"},
                                                   {"SLURM_NTASKS", "8"},
                                                   {"SLURM_LOCALID", "1"},
                                                   {"SLURM_JOB_NODELIST", "gpu[03-05,09],cpu1"},
                                                   {"SLURM_JOB_ID", "123456"}};
  auto env = detect_launch(variables(step));
  EXPECT_EQ(env.launcher, Launcher::kSlurm);
  EXPECT_EQ(env.rank, 5);
  EXPECT_EQ(env.world_size, 8);
  EXPECT_EQ(env.local_rank, 1);
  EXPECT_EQ(env.master_addr, "gpu03");
  EXPECT_EQ(env.master_port, 20000 + 123456 % 20000);

  auto given = step;
  given["MASTER_ADDR"] = "10.0.0.2";
  given["MASTER_PORT"] = "29500";
  env = detect_launch(variables(given));
  EXPECT_EQ(env.master_addr, "10.0.0.2");
  EXPECT_EQ(env.master_port, 29500);
}

TEST(LaunchEnvironment, RanksOnThisNodeFromTorchrun) {
  std::map<std::string, std::string> torchrun = {
      {"RANK", "3"}, {"WORLD_SIZE", "8"}, {"LOCAL_RANK", "1"}, {"MASTER_PORT", "29400"}};
  EXPECT_EQ(detect_launch(variables(torchrun)).local_world_size, 1)
      << "without LOCAL_WORLD_SIZE a rank counts itself alone on its node, as before";
  torchrun["LOCAL_WORLD_SIZE"] = "4";
  EXPECT_EQ(detect_launch(variables(torchrun)).local_world_size, 4);
  torchrun["LOCAL_WORLD_SIZE"] = "16";
  EXPECT_THROW(detect_launch(variables(torchrun)), std::invalid_argument)
      << "more ranks on the node than in the job";
}

TEST(LaunchEnvironment, RanksOnThisNodeFromSlurm) {
  const std::map<std::string, std::string> step = {{"SLURM_PROCID", "5"}, {"SLURM_STEP_ID", "0"},
                                                   {"SLURM_NTASKS", "8"}, {"SLURM_LOCALID", "1"},
                                                   {"SLURM_JOB_ID", "7"}, {"MASTER_ADDR", "gpu03"},
                                                   {"SLURM_NODEID", "2"}};
  EXPECT_EQ(detect_launch(variables(step)).local_world_size, 1) << "nothing says more";

  auto requested = step;
  requested["SLURM_NTASKS_PER_NODE"] = "2";
  EXPECT_EQ(detect_launch(variables(requested)).local_world_size, 2);

  // The job's distribution wins over the request, at this node's index (node 2 of 2(x2),3,1).
  auto job = requested;
  job["SLURM_TASKS_PER_NODE"] = "2(x2),3,1";
  EXPECT_EQ(detect_launch(variables(job)).local_world_size, 3);
  // The step's distribution (what srun started) wins over the job's.
  auto srun = job;
  srun["SLURM_STEP_TASKS_PER_NODE"] = "4(x3)";
  EXPECT_EQ(detect_launch(variables(srun)).local_world_size, 4);
  // Without SLURM_NODEID: the first node's count.
  srun.erase("SLURM_NODEID");
  srun["SLURM_STEP_TASKS_PER_NODE"] = "2,4";
  EXPECT_EQ(detect_launch(variables(srun)).local_world_size, 2);

  auto malformed = step;
  malformed["SLURM_STEP_TASKS_PER_NODE"] = "2(3)";
  try {
    detect_launch(variables(malformed));
    FAIL() << "a malformed tasks-per-node list was accepted";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("SLURM_STEP_TASKS_PER_NODE"), std::string::npos)
        << error.what();
  }
}

TEST(LaunchEnvironment, SlurmTasksPerNodeLists) {
  EXPECT_EQ(slurm_tasks_on_node("4", 0), 4);
  EXPECT_EQ(slurm_tasks_on_node("2(x3),1", 0), 2);
  EXPECT_EQ(slurm_tasks_on_node("2(x3),1", 2), 2);
  EXPECT_EQ(slurm_tasks_on_node("2(x3),1", 3), 1);
  EXPECT_EQ(slurm_tasks_on_node("1,8(x2)", 2), 8);
  EXPECT_THROW(slurm_tasks_on_node("2(x3),1", 4), std::invalid_argument) << "past the last node";
  for (const char* bad : {"", "x", "2,", "0", "2(x0)", "2(x3", "2(3)", "-1"})
    EXPECT_THROW(slurm_tasks_on_node(bad, 0), std::invalid_argument) << "'" << bad << "'";
}

TEST(LaunchEnvironment, FirstHostOfSlurmNodeLists) {
  EXPECT_EQ(first_slurm_host("node17"), "node17");
  EXPECT_EQ(first_slurm_host("a1,b2"), "a1");
  EXPECT_EQ(first_slurm_host("gpu[003-007]"), "gpu003");
  EXPECT_EQ(first_slurm_host("rack[1,4]-n,x"), "rack1-n");
  EXPECT_THROW(first_slurm_host(""), std::invalid_argument);
  EXPECT_THROW(first_slurm_host("gpu[03"), std::invalid_argument);
}

TEST(LaunchEnvironment, BadValuesAreNamed) {
  try {
    detect_launch(variables({{"RANK", "x"}, {"WORLD_SIZE", "2"}, {"MASTER_PORT", "1"}}));
    FAIL() << "a rank that is not a number was accepted";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("RANK='x'"), std::string::npos) << error.what();
  }
  EXPECT_THROW(detect_launch(variables({{"RANK", "2"}, {"WORLD_SIZE", "2"}, {"MASTER_PORT", "1"}})),
               std::invalid_argument);
  EXPECT_THROW(detect_launch(variables({{"RANK", "0"}, {"WORLD_SIZE", "2"}})),
               std::invalid_argument)
      << "torchrun always sets MASTER_PORT";
  EXPECT_THROW(parse_distributed_mode("on"), std::invalid_argument);
}

}  // namespace
}  // namespace headroom::distributed
