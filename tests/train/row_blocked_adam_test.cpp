// RowBlockedAdam: torch's Adam, the same bits, with one block of temporaries instead of two
// parameter-sized ones.
#include "headroom/train/step/row_blocked_adam.hpp"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <vector>

#include "headroom/memory/tensor_memory_meter.hpp"

namespace headroom::train {
namespace {

// Parameters of shapes that are blocked (more than kAdamBlockElements elements, rows not a
// power of two), and not (small, one-dimensional).
std::vector<at::Tensor> parameters(std::uint64_t seed) {
  torch::manual_seed(seed);
  std::vector<at::Tensor> params = {torch::randn({5000, 301}), torch::randn({7, 3}),
                                    torch::randn({10})};
  for (auto& p : params) p.requires_grad_(true);
  return params;
}

void set_gradients(std::vector<at::Tensor>& params, int step) {
  torch::manual_seed(100 + step);
  for (auto& p : params) p.mutable_grad() = torch::randn_like(p);
}

TEST(RowBlockedAdam, UpdatesTheSameBitsAsTorchsAdam) {
  ASSERT_GT(5000 * 301, kAdamBlockElements);
  for (const double weight_decay : {0.0, 0.01}) {
    auto reference_params = parameters(1);
    auto blocked_params = parameters(1);
    const auto options = torch::optim::AdamOptions(0.02).weight_decay(weight_decay);
    torch::optim::Adam reference(reference_params, options);
    RowBlockedAdam blocked(blocked_params, options);
    for (int step = 0; step < 3; ++step) {
      set_gradients(reference_params, step);
      set_gradients(blocked_params, step);
      reference.step();
      blocked.step();
    }
    for (std::size_t i = 0; i < reference_params.size(); ++i)
      EXPECT_TRUE(torch::equal(reference_params[i], blocked_params[i]))
          << "parameter " << i << ", weight decay " << weight_decay << ": largest difference "
          << (reference_params[i] - blocked_params[i]).abs().max().item<float>();
    // The state is Adam's: the same moments and steps, under the same keys.
    const auto& state = static_cast<const torch::optim::AdamParamState&>(
        *blocked.state().at(blocked_params[0].unsafeGetTensorImpl()));
    const auto& reference_state = static_cast<const torch::optim::AdamParamState&>(
        *reference.state().at(reference_params[0].unsafeGetTensorImpl()));
    EXPECT_EQ(state.step(), 3);
    EXPECT_TRUE(torch::equal(state.exp_avg_sq(), reference_state.exp_avg_sq()));
  }
}

// Bytes a second step allocates above what is live before it (the state exists by then).
template <typename Optimizer>
std::int64_t step_temporaries(Optimizer& optimizer, std::vector<at::Tensor>& params) {
  set_gradients(params, 0);
  optimizer.step();
  set_gradients(params, 1);
  memory::reset_peak();
  const auto before = memory::cpu_tensor_memory().current_bytes;
  optimizer.step();
  return memory::cpu_tensor_memory().peak_bytes - before;
}

TEST(RowBlockedAdam, HoldsOneBlockOfTemporariesWhereTorchsAdamHoldsTwoParameters) {
  memory::install_counting_cpu_allocator();
  const std::int64_t rows = 4096;
  const std::int64_t columns = 1024;  // 16 MiB of float32: four blocks
  const auto parameter_bytes = rows * columns * 4;
  std::vector<at::Tensor> torch_params = {torch::randn({rows, columns}).requires_grad_(true)};
  std::vector<at::Tensor> blocked_params = {torch::randn({rows, columns}).requires_grad_(true)};
  torch::optim::Adam reference(torch_params, torch::optim::AdamOptions(0.01));
  RowBlockedAdam blocked(blocked_params, torch::optim::AdamOptions(0.01));
  const auto torch_extra = step_temporaries(reference, torch_params);
  const auto blocked_extra = step_temporaries(blocked, blocked_params);
  EXPECT_GE(torch_extra, 2 * parameter_bytes * 9 / 10);
  EXPECT_LE(blocked_extra, 2 * kAdamBlockElements * 4 + (1 << 20));
}

}  // namespace
}  // namespace headroom::train
