// The GPU suite's training half (issue: fused GAT, item 5): training on CUDA equals training on the
// CPU for a few steps, 16-mixed loss scaling skips an overflowed step and rescales, and the
// offloaded teacher holds no device memory between its forwards. Each test runs wherever a CUDA
// device is present and skips cleanly elsewhere; the kernels' own CUDA tests are in
// tests/nn/fused_gat_test.cpp, the budget and the OOM guard's on CUDA in oom_guard_test.cpp, the
// host-synchronisation check in gradient_clipping_test.cpp.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <limits>

#include "gat_training_loss.hpp"
#include "headroom/loader/collate.hpp"
#include "headroom/memory/tensor_memory_meter.hpp"
#include "headroom/models/gat_with_jk.hpp"
#include "headroom/store/graph_store.hpp"
#include "headroom/train/caches/offloaded_teacher.hpp"
#include "headroom/train/step/training_step.hpp"
#include "test_support.hpp"

namespace headroom::train {
namespace {

class CudaTraining : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::TempDir();
    store_path_ = new std::filesystem::path(testing::build_synthetic_store(dir_->path(), 20000, 3));
  }
  static void TearDownTestSuite() {
    delete store_path_;
    delete dir_;
  }
  void SetUp() override {
    if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  }

  // A fresh GAT (same seed every call, dropout 0 so that both devices compute the same function)
  // on `device`.
  static models::GATWithJK fresh_model(const store::GraphStore& store, models::ModelSize size,
                                       const torch::Device& device) {
    torch::manual_seed(11);
    const auto num_ids = static_cast<std::int64_t>(store.metadata().vocabulary.size()) + 1;
    auto config = models::gat_preset(size, num_ids);
    config.dropout = 0;
    models::GATWithJK model(config);
    model->to(device);
    model->train();
    return model;
  }

  // SGD steps (momentum 0.9) of the student on the 32-graph training batches numbered `batches`,
  // on `device` in `precision`; the parameters afterwards, on the CPU. SGD rather than Adam: Adam's
  // first updates are about lr * sign(gradient), so a gradient that rounds to either side of 0 on
  // the two devices would move a parameter by 2 lr either way; SGD's update is proportional to the
  // gradient. `hook` (optional) sees each step's gradients before unscaling, with the step's
  // position in `batches`.
  static std::vector<at::Tensor> train_steps(
      const torch::Device& device, Precision precision, const std::vector<std::size_t>& batches,
      const std::function<void(std::size_t, const std::vector<at::Tensor>&)>& hook = nullptr,
      DynamicLossScaler* scaler_after = nullptr) {
    const auto store = store::GraphStore::open(*store_path_);
    auto model = fresh_model(store, models::ModelSize::kStudent, device);
    torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.1).momentum(0.9));
    StepSettings settings;
    settings.device = device;
    settings.precision = precision;
    TrainingStep step(store, model->parameters(), optimizer, testing::gat_cross_entropy(model),
                      settings);
    std::size_t position = 0;
    if (hook)
      step.set_gradient_hook(
          [&](const std::vector<at::Tensor>& parameters, double) { hook(position, parameters); });
    const auto ids = store.train_ids();
    for (position = 0; position < batches.size(); ++position)
      step.run(loader::collate(store, ids.subspan(batches[position] * 32, 32), {}));
    if (scaler_after) *scaler_after = step.loss_scaler();
    std::vector<at::Tensor> parameters;
    for (const auto& p : model->parameters()) parameters.push_back(p.detach().cpu());
    return parameters;
  }

  static inline testing::TempDir* dir_ = nullptr;
  static inline std::filesystem::path* store_path_ = nullptr;
};

// The largest absolute difference between two lists of parameters.
double max_difference(const std::vector<at::Tensor>& a, const std::vector<at::Tensor>& b) {
  double largest = 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    largest = std::max(largest, (a[i] - b[i]).abs().max().item<double>());
  return largest;
}

void expect_close(const std::vector<at::Tensor>& a, const std::vector<at::Tensor>& b, double rtol,
                  double atol) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i)
    EXPECT_TRUE(torch::allclose(a[i], b[i], rtol, atol))
        << "parameter " << i << ": max difference " << (a[i] - b[i]).abs().max().item<double>();
}

TEST_F(CudaTraining, ThreeStepsEqualTheCpuSteps) {
  const auto cpu = train_steps(torch::kCPU, Precision::kFloat32, {0, 1, 2});
  const auto cuda = train_steps(torch::Device(torch::kCUDA, 0), Precision::kFloat32, {0, 1, 2});
  // The devices differ only in summation order.
  expect_close(cuda, cpu, 1e-4, 1e-5);
}

TEST_F(CudaTraining, Fp16LossScalingSkipsAnOverflowedStepAndHalvesTheScale) {
  const torch::Device cuda(torch::kCUDA, 0);
  // The second of three steps gets an infinite gradient: it must be skipped, leaving the result
  // of the first and third batches alone (the scale is a power of two, so scaled gradients
  // unscale exactly), with one more skipped step and half the scale.
  DynamicLossScaler overflowed(false);
  const auto with_overflow = train_steps(
      cuda, Precision::kFp16Mixed, {0, 1, 2},
      [](std::size_t position, const std::vector<at::Tensor>& parameters) {
        if (position == 1)
          parameters.front().mutable_grad().fill_(std::numeric_limits<float>::infinity());
      },
      &overflowed);
  DynamicLossScaler clean(false);
  const auto without_it = train_steps(cuda, Precision::kFp16Mixed, {0, 2}, nullptr, &clean);
  EXPECT_EQ(overflowed.skipped_steps(), clean.skipped_steps() + 1);
  EXPECT_DOUBLE_EQ(overflowed.current_scale(), clean.current_scale() / 2);
  // CUDA's pooling and scatter sums use atomics, so two runs of the same batches differ in their
  // last bits (measured on an H200: up to 4e-4 after three fp16 steps), and a fixed tolerance
  // says little. What the skip must give: the result of batches 0 and 2, far closer to it than a
  // run that trained on batch 1 is.
  const auto trained_all = train_steps(cuda, Precision::kFp16Mixed, {0, 1, 2});
  const auto skip_error = max_difference(with_overflow, without_it);
  EXPECT_LT(skip_error, max_difference(trained_all, without_it) / 10)
      << "skipping the overflowed step leaves the result of the other batches";
  EXPECT_LT(skip_error, 1e-3);

  // Without overflow, 16-mixed tracks fp32 on the same device to fp16's precision (its epsilon is
  // 2^-10, about 1e-3; measured on an H200: 4.1e-4 at most after two steps).
  const auto fp32 = train_steps(cuda, Precision::kFloat32, {0, 2});
  expect_close(without_it, fp32, 1e-2, 1e-3);
}

TEST_F(CudaTraining, OffloadedTeacherHoldsNoDeviceMemoryBetweenForwards) {
  const auto store = store::GraphStore::open(*store_path_);
  const torch::Device cuda(torch::kCUDA, 0);
  auto resident = fresh_model(store, models::ModelSize::kTeacher, cuda);
  auto offloaded = fresh_model(store, models::ModelSize::kTeacher, cuda);
  resident->eval();
  offloaded->eval();
  const auto batch = loader::collate(store, store.train_ids().first(64), {}).to(cuda);
  torch::NoGradGuard no_grad;
  // The resident forward first: it also creates what the device keeps after a first forward
  // (cuBLAS's workspace in the caching allocator), so that the counts below see only the teacher.
  const auto reference =
      resident->forward(batch.x, batch.edge_index, batch.batch, batch.num_graphs);
  torch::cuda::synchronize();
  const auto before = memory::cuda_tensor_memory(0).allocated_bytes;
  OffloadedTeacher teacher(offloaded.ptr(), cuda);
  for (const auto& p : offloaded->parameters()) {
    EXPECT_TRUE(p.is_cpu());
    EXPECT_TRUE(p.is_pinned());
  }
  EXPECT_LT(memory::cuda_tensor_memory(0).allocated_bytes, before)
      << "moving the teacher to pinned host memory frees its device copy";
  const auto between = memory::cuda_tensor_memory(0).allocated_bytes;
  at::Tensor logits;
  {
    const auto scope = teacher.on_device();
    for (const auto& p : offloaded->parameters()) EXPECT_TRUE(p.is_cuda());
    logits = offloaded->forward(batch.x, batch.edge_index, batch.batch, batch.num_graphs);
  }
  for (const auto& p : offloaded->parameters()) EXPECT_TRUE(p.is_cpu());
  // The same weights give the same logits, up to the order of the pooling's atomic sums.
  EXPECT_TRUE(torch::allclose(logits, reference, 1e-5, 1e-6))
      << "max difference " << (logits - reference).abs().max().item<double>();
  torch::cuda::synchronize();
  // The caching allocator rounds a block up to 512 bytes; the logits are 64 x 2 floats.
  EXPECT_EQ(memory::cuda_tensor_memory(0).allocated_bytes, between + 512)
      << "after the forward only its output is left on the device";
}

// Runs everywhere: offloading means moving weights off a CUDA device, so any other device is
// refused with its name.
TEST(OffloadedTeacherDevice, ACpuDeviceIsRefused) {
  auto module = std::make_shared<torch::nn::LinearImpl>(4, 2);
  try {
    OffloadedTeacher teacher(module, torch::kCPU);
    FAIL() << "a CPU device was accepted";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("cpu"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace headroom::train
