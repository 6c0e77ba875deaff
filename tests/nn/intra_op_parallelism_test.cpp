// The nn area's kernels run on torch's intra-op threads: at::parallel_for compiled without OpenMP
// would run them all on one thread and nothing else would say so.
#include "headroom/nn/intra_op_parallelism.hpp"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <thread>

namespace headroom::nn {
namespace {

TEST(IntraOpParallelism, TheAreasParallelLoopsReachEveryIntraOpThread) {
  if (std::thread::hardware_concurrency() < 2) GTEST_SKIP() << "one core: nothing to reach";
  const int threads_before = torch::get_num_threads();
  torch::set_num_threads(2);
  const int reached = intra_op_threads_reached();
  torch::set_num_threads(threads_before);
  EXPECT_EQ(reached, 2);
}

}  // namespace
}  // namespace headroom::nn
