// Clipping without a host read (train/step/gradient_clipping.hpp): the same result as LibTorch's
// clip_grad_norm_, and on CUDA a whole training step that never blocks the host.
#include "headroom/train/step/gradient_clipping.hpp"

#include <c10/cuda/CUDAFunctions.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "gat_training_loss.hpp"
#include "headroom/loader/collate.hpp"
#include "headroom/models/gat_with_jk.hpp"
#include "headroom/store/graph_store.hpp"
#include "headroom/train/step/training_step.hpp"
#include "test_support.hpp"

namespace headroom::train {
namespace {

// Parameters of mixed shapes whose gradients have global L2 norm `norm`, and one without a
// gradient (a frozen or unused parameter), as a model's parameter list has.
std::vector<at::Tensor> parameters_with_gradients(double norm, const torch::Device& device) {
  torch::manual_seed(3);
  std::vector<at::Tensor> parameters;
  double squares = 0;
  for (const auto& shape : std::vector<std::vector<std::int64_t>>{{384, 34}, {1, 8, 48}, {7}, {}}) {
    auto p = torch::randn(shape, device).requires_grad_(true);
    p.mutable_grad() = torch::randn(shape, device);
    squares += p.grad().square().sum().item<double>();
    parameters.push_back(p);
  }
  for (auto& p : parameters) p.mutable_grad().mul_(norm / std::sqrt(squares));
  parameters.push_back(torch::randn({5, 5}, device).requires_grad_(true));  // no gradient
  return parameters;
}

std::vector<at::Tensor> gradients_of(const std::vector<at::Tensor>& parameters) {
  std::vector<at::Tensor> gradients;
  for (const auto& p : parameters)
    gradients.push_back(p.grad().defined() ? p.grad().clone() : at::Tensor());
  return gradients;
}

TEST(ClipGradientNorm, ScalesLikeLibTorchsClipGradNorm) {
  auto ours = parameters_with_gradients(30.0, torch::kCPU);
  auto reference = parameters_with_gradients(30.0, torch::kCPU);
  const double norm_before = gradient_norm(ours).item<double>();
  ASSERT_GT(norm_before, 1.0) << "the case must need clipping";
  EXPECT_NEAR(norm_before, torch::nn::utils::clip_grad_norm_(reference, 1.0), 1e-4 * norm_before);
  clip_gradient_norm(ours, 1.0);
  EXPECT_NEAR(gradient_norm(ours).item<double>(), 1.0, 1e-5);
  for (std::size_t i = 0; i < ours.size(); ++i) {
    ASSERT_EQ(ours[i].grad().defined(), reference[i].grad().defined()) << i;
    if (ours[i].grad().defined()) {
      EXPECT_TRUE(torch::allclose(ours[i].grad(), reference[i].grad(), 1e-6, 1e-8)) << i;
    }
  }
}

TEST(ClipGradientNorm, LeavesGradientsWithinTheBoundBitIdentical) {
  auto parameters = parameters_with_gradients(0.5, torch::kCPU);
  const auto before = gradients_of(parameters);
  ASSERT_LT(gradient_norm(parameters).item<double>(), 1.0);
  clip_gradient_norm(parameters, 1.0);
  for (std::size_t i = 0; i < parameters.size(); ++i)
    if (before[i].defined()) {
      EXPECT_TRUE(torch::equal(parameters[i].grad(), before[i])) << i;
    }
}

TEST(ClipGradientNorm, WithoutGradientsDoesNothingAndABadBoundIsRefused) {
  std::vector<at::Tensor> parameters = {torch::ones({3}).requires_grad_(true)};
  clip_gradient_norm(parameters, 1.0);
  EXPECT_FALSE(parameters[0].grad().defined());
  EXPECT_EQ(gradient_norm(parameters).item<double>(), 0.0);
  EXPECT_THROW(clip_gradient_norm(parameters, 0.0), std::invalid_argument);
  EXPECT_THROW(clip_gradient_norm(parameters, std::nan("")), std::invalid_argument);
}

// --- CUDA: runs wherever a device is present, skips cleanly elsewhere ------------------------

// Makes every host-device synchronisation LibTorch would do an error, for one scope.
class SynchronisationsAreErrors {
 public:
  SynchronisationsAreErrors() {
    c10::cuda::warning_state().set_sync_debug_mode(c10::cuda::SyncDebugMode::L_ERROR);
  }
  ~SynchronisationsAreErrors() {
    c10::cuda::warning_state().set_sync_debug_mode(c10::cuda::SyncDebugMode::L_DISABLED);
  }
  SynchronisationsAreErrors(const SynchronisationsAreErrors&) = delete;
  SynchronisationsAreErrors& operator=(const SynchronisationsAreErrors&) = delete;
};

TEST(ClipGradientNormOnCuda, NeverWaitsForTheDeviceWhereClipGradNormDoes) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  auto parameters = parameters_with_gradients(30.0, torch::kCUDA);
  auto reference = parameters_with_gradients(30.0, torch::kCUDA);
  {
    SynchronisationsAreErrors strict;
    EXPECT_NO_THROW(clip_gradient_norm(parameters, 1.0));
    // The check itself works: LibTorch's version reads its norm back to the host.
    EXPECT_THROW(torch::nn::utils::clip_grad_norm_(reference, 1.0), c10::Error);
  }
  torch::nn::utils::clip_grad_norm_(reference, 1.0);
  for (std::size_t i = 0; i < parameters.size(); ++i)
    if (parameters[i].grad().defined()) {
      EXPECT_TRUE(torch::allclose(parameters[i].grad(), reference[i].grad(), 1e-5, 1e-7)) << i;
    }
}

// The GAT teacher's whole training step on CUDA (copy of the collated batch, fused attention
// forward and backward, cross-entropy, clipping, Adam), after one warm-up step, with every host
// synchronisation an error: the step can be queued ahead of the device.
TEST(TrainingStepOnCuda, TheGatTeachersStepNeverBlocksTheHost) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  testing::TempDir dir;
  const auto store = store::GraphStore::open(testing::build_synthetic_store(dir.path(), 20000, 3));
  torch::manual_seed(5);
  const auto num_ids = static_cast<std::int64_t>(store.metadata().vocabulary.size()) + 1;
  models::GATWithJK model(models::gat_preset(models::ModelSize::kTeacher, num_ids));
  model->to(torch::kCUDA);
  model->train();
  torch::optim::Adam optimizer(model->parameters(), torch::optim::AdamOptions(1e-3));
  StepSettings settings;
  settings.device = torch::Device(torch::kCUDA, 0);
  settings.gradient_clip = 1.0;
  TrainingStep step(store, model->parameters(), optimizer, testing::gat_cross_entropy(model),
                    settings);
  loader::CollateOptions pinned;
  pinned.pin_memory = true;  // as the prefetcher collates for a CUDA run
  const auto batch = loader::collate(store, store.train_ids().first(64), pinned);
  step.run(batch);  // warm-up: cuBLAS handles, the caching allocator's first blocks
  torch::cuda::synchronize();
  StepOutcome outcome;
  {
    SynchronisationsAreErrors strict;
    EXPECT_NO_THROW(outcome = step.run(batch));
  }
  EXPECT_TRUE(std::isfinite(outcome.loss.item<double>()));
}

}  // namespace
}  // namespace headroom::train
