#include "headroom/nn/checkpoint.hpp"

#include <ATen/autocast_mode.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "headroom/memory/tensor_memory_meter.hpp"
#include "headroom/models/gat_with_jk.hpp"
#include "headroom/models/vgae.hpp"

namespace headroom::nn {
namespace {

// --- the function on its own ---------------------------------------------------------------

struct Plain {
  at::Tensor x;
  at::Tensor w;
};

Plain leaves() {
  torch::manual_seed(1);
  return {torch::randn({8, 5}).requires_grad_(true), torch::randn({5, 5}).requires_grad_(true)};
}

CheckpointBlock dropout_block(const at::Tensor& w, int* calls) {
  return [w, calls](const std::vector<at::Tensor>& in) {
    ++*calls;
    return std::vector<at::Tensor>{torch::dropout(torch::tanh(in[0].mm(w)), 0.5, true)};
  };
}

TEST(CheckpointTest, GradientsAndRandomStreamMatchThePlainBlock) {
  auto plain = leaves();
  auto checkpointed = leaves();
  int plain_calls = 0;
  int checkpoint_calls = 0;

  torch::manual_seed(7);
  auto expected = dropout_block(plain.w, &plain_calls)({plain.x})[0];
  // Draws between forward and backward move the stream on: the recomputation must rewind it for
  // the block and then put it back where these draws left it.
  auto expected_between = torch::rand({4});
  (expected * expected).sum().backward();
  auto expected_next = torch::rand({4});

  torch::manual_seed(7);
  auto actual = checkpoint(dropout_block(checkpointed.w, &checkpoint_calls), {checkpointed.x},
                           {checkpointed.w})[0];
  auto actual_between = torch::rand({4});
  (actual * actual).sum().backward();
  auto actual_next = torch::rand({4});

  EXPECT_EQ(plain_calls, 1);
  EXPECT_EQ(checkpoint_calls, 2);  // forward + recomputation
  EXPECT_TRUE(torch::equal(actual, expected));
  EXPECT_TRUE(torch::allclose(checkpointed.x.grad(), plain.x.grad(), 1e-6, 1e-6));
  EXPECT_TRUE(torch::allclose(checkpointed.w.grad(), plain.w.grad(), 1e-6, 1e-6));
  // The recomputation replayed the block's random numbers without disturbing the program's.
  EXPECT_TRUE(torch::equal(actual_between, expected_between));
  EXPECT_TRUE(torch::equal(actual_next, expected_next));
}

TEST(CheckpointTest, IntegerInputsGetNoGradient) {
  auto p = leaves();
  auto index = torch::tensor({4, 0, 0, 7}, torch::kLong);
  CheckpointBlock block = [w = p.w](const std::vector<at::Tensor>& in) {
    return std::vector<at::Tensor>{in[0].index_select(0, in[1]).mm(w), in[1] * 2};
  };
  auto outputs = checkpoint(block, {p.x, index}, {p.w});
  ASSERT_EQ(outputs.size(), 2u);
  EXPECT_TRUE(outputs[0].requires_grad());
  EXPECT_FALSE(outputs[1].requires_grad());
  outputs[0].sum().backward();
  // Rows 0 (twice), 4 and 7 were used: each gets the row sums of w, row 0 twice.
  auto row = p.w.sum(1).detach();
  EXPECT_TRUE(torch::allclose(p.x.grad()[0], 2 * row));
  EXPECT_TRUE(torch::allclose(p.x.grad()[4], row));
  EXPECT_EQ(p.x.grad()[1].abs().sum().item<double>(), 0.0);
}

TEST(CheckpointTest, WithoutGradModeTheBlockRunsOnce) {
  auto p = leaves();
  int calls = 0;
  torch::NoGradGuard no_grad;
  auto out = checkpoint(dropout_block(p.w, &calls), {p.x}, {p.w})[0];
  EXPECT_EQ(calls, 1);
  EXPECT_FALSE(out.requires_grad());
}

TEST(CheckpointTest, OnlyParametersRequiringGradStillCheckpoint) {
  auto p = leaves();
  auto x = p.x.detach();
  int calls = 0;
  auto out = checkpoint(dropout_block(p.w, &calls), {x}, {p.w})[0];
  out.sum().backward();
  EXPECT_EQ(calls, 2);
  EXPECT_TRUE(p.w.grad().defined());
}

TEST(CheckpointTest, RecomputationUsesTheForwardAutocastState) {
  // Forward under bf16 autocast, backward after leaving it: the recomputed block must run in
  // bf16 again, or its gradients would differ from the plain block's.
  auto plain = leaves();
  auto checkpointed = leaves();
  CheckpointBlock block_plain = [w = plain.w](const std::vector<at::Tensor>& in) {
    return std::vector<at::Tensor>{torch::mm(in[0], w)};
  };
  CheckpointBlock block_checkpointed = [w = checkpointed.w](const std::vector<at::Tensor>& in) {
    return std::vector<at::Tensor>{torch::mm(in[0], w)};
  };
  at::Tensor expected;
  at::Tensor actual;
  at::autocast::set_autocast_dtype(at::kCPU, at::kBFloat16);
  at::autocast::set_autocast_enabled(at::kCPU, true);
  expected = block_plain({plain.x})[0];
  actual = checkpoint(block_checkpointed, {checkpointed.x}, {checkpointed.w})[0];
  at::autocast::set_autocast_enabled(at::kCPU, false);
  at::autocast::clear_cache();
  EXPECT_EQ(actual.scalar_type(), at::kBFloat16);
  auto weights = torch::randn({8, 5});
  (expected.to(torch::kFloat) * weights).sum().backward();
  (actual.to(torch::kFloat) * weights).sum().backward();
  EXPECT_TRUE(torch::equal(checkpointed.w.grad(), plain.w.grad()));
  EXPECT_TRUE(torch::equal(checkpointed.x.grad(), plain.x.grad()));
  // The plain block in float32 gives different gradients (bf16 rounding), so the comparison
  // above could tell the precisions apart.
  auto reference = leaves();
  (torch::mm(reference.x, reference.w) * weights).sum().backward();
  EXPECT_FALSE(torch::equal(reference.w.grad(), plain.w.grad()));
}

// --- the models: checkpointing must not change the gradients ----------------------------------

struct Graphs {
  at::Tensor x;
  at::Tensor edge_index;
  at::Tensor batch;
  std::int64_t num_graphs = 0;
};

// Graphs of the given sizes: a bidirectional chain per graph plus one chord, node features
// (ID index, then 10 values in [0, 1)), built by hand.
Graphs make_graphs(const std::vector<std::int64_t>& sizes, std::int64_t num_ids) {
  std::vector<std::int64_t> sources;
  std::vector<std::int64_t> targets;
  std::vector<std::int64_t> batch;
  std::int64_t offset = 0;
  for (std::size_t g = 0; g < sizes.size(); ++g) {
    const auto n = sizes[g];
    for (std::int64_t i = 0; i + 1 < n; ++i) {
      sources.insert(sources.end(), {offset + i, offset + i + 1});
      targets.insert(targets.end(), {offset + i + 1, offset + i});
    }
    if (n > 2) {
      sources.push_back(offset + n - 1);
      targets.push_back(offset);
    }
    for (std::int64_t i = 0; i < n; ++i) batch.push_back(static_cast<std::int64_t>(g));
    offset += n;
  }
  Graphs graphs;
  graphs.edge_index = torch::stack({torch::tensor(sources), torch::tensor(targets)});
  graphs.batch = torch::tensor(batch);
  graphs.num_graphs = static_cast<std::int64_t>(sizes.size());
  auto ids = torch::randint(0, num_ids, {offset, 1}).to(torch::kFloat);
  graphs.x = torch::cat({ids, torch::rand({offset, 10})}, 1);
  return graphs;
}

std::map<std::string, at::Tensor> gradients(const torch::nn::Module& module) {
  std::map<std::string, at::Tensor> grads;
  for (const auto& item : module.named_parameters()) grads[item.key()] = item.value().grad();
  return grads;
}

void expect_same_gradients(const torch::nn::Module& a, const torch::nn::Module& b,
                           double tolerance = 1e-5) {
  auto ga = gradients(a);
  auto gb = gradients(b);
  ASSERT_EQ(ga.size(), gb.size());
  std::size_t nonzero = 0;
  for (const auto& [name, grad] : ga) {
    ASSERT_TRUE(grad.defined()) << name;
    ASSERT_TRUE(gb.at(name).defined()) << name;
    EXPECT_TRUE(torch::allclose(grad, gb.at(name), tolerance, tolerance))
        << name << ": max difference " << (grad - gb.at(name)).abs().max().item<double>();
    if (grad.abs().sum().item<double>() > 0) ++nonzero;
  }
  // Most parameters must actually receive gradient, or the comparison proves little.
  EXPECT_GE(nonzero, ga.size() - 2);
}

models::GatConfig small_gat() {
  models::GatConfig config;
  config.num_ids = 12;
  config.embedding_dim = 4;
  config.hidden = 6;
  config.layers = 3;
  config.heads = 2;
  config.fc_layers = 2;
  config.dropout = 0.3;
  return config;
}

models::VgaeConfig small_vgae() {
  models::VgaeConfig config;
  config.num_ids = 12;
  config.embedding_dim = 4;
  config.hidden = {16, 8, 4};
  config.latent = 4;
  config.heads = 2;
  config.dropout = 0.3;
  return config;
}

TEST(CheckpointTest, GatWithJKGradientsEqualWithAndWithoutCheckpointing) {
  torch::manual_seed(21);
  auto graphs = make_graphs({5, 7, 4}, 12);
  auto config = small_gat();
  config.gradient_checkpointing = false;
  torch::manual_seed(3);
  models::GATWithJK plain(config);
  config.gradient_checkpointing = true;
  torch::manual_seed(3);
  models::GATWithJK checkpointed(config);

  torch::manual_seed(99);
  auto expected = plain->forward(graphs.x, graphs.edge_index, graphs.batch, graphs.num_graphs);
  (expected * expected).sum().backward();
  auto expected_next = torch::rand({3});
  torch::manual_seed(99);
  auto actual = checkpointed->forward(graphs.x, graphs.edge_index, graphs.batch, graphs.num_graphs);
  (actual * actual).sum().backward();
  auto actual_next = torch::rand({3});

  EXPECT_TRUE(torch::allclose(actual, expected, 1e-6, 1e-6));
  expect_same_gradients(*plain, *checkpointed);
  EXPECT_TRUE(torch::equal(actual_next, expected_next));
}

at::Tensor vgae_loss(const models::VgaeOutput& out, const Graphs& graphs) {
  return (out.reconstruction - graphs.x.slice(1, 1)).pow(2).sum() + out.id_logits.pow(2).mean() +
         out.neighbour_logits.pow(2).mean() + out.mu.pow(2).sum() + out.logvar.exp().sum();
}

TEST(CheckpointTest, VgaeGradientsAndBatchNormStatisticsEqualWithAndWithoutCheckpointing) {
  torch::manual_seed(22);
  auto graphs = make_graphs({6, 5, 8}, 12);
  auto config = small_vgae();
  config.gradient_checkpointing = false;
  torch::manual_seed(4);
  models::VGAE plain(config);
  config.gradient_checkpointing = true;
  torch::manual_seed(4);
  models::VGAE checkpointed(config);

  torch::manual_seed(98);
  auto expected = plain->forward(graphs.x, graphs.edge_index);
  vgae_loss(expected, graphs).backward();
  torch::manual_seed(98);
  auto actual = checkpointed->forward(graphs.x, graphs.edge_index);
  vgae_loss(actual, graphs).backward();

  EXPECT_TRUE(torch::allclose(actual.reconstruction, expected.reconstruction, 1e-6, 1e-6));
  EXPECT_TRUE(torch::allclose(actual.z, expected.z, 1e-6, 1e-6));
  expect_same_gradients(*plain, *checkpointed);

  // The recomputation must not fold the batch into the running statistics a second time.
  auto buffers = plain->named_buffers();
  auto other = checkpointed->named_buffers();
  ASSERT_EQ(buffers.size(), other.size());
  ASSERT_GT(buffers.size(), 0u);
  for (const auto& item : buffers) {
    EXPECT_TRUE(torch::allclose(item.value(), other[item.key()], 1e-6, 1e-6)) << item.key();
  }
  for (const auto& item : other) {
    if (item.key().find("num_batches_tracked") != std::string::npos) {
      EXPECT_EQ(item.value().item<std::int64_t>(), 1) << item.key();
    }
  }
}

// Mixed precision: the blocks run in bf16 under autocast in both passes and backward runs after
// autocast is left, as a training loop does.
class CpuAutocast {
 public:
  CpuAutocast() {
    at::autocast::set_autocast_dtype(at::kCPU, at::kBFloat16);
    at::autocast::set_autocast_enabled(at::kCPU, true);
  }
  ~CpuAutocast() {
    at::autocast::set_autocast_enabled(at::kCPU, false);
    at::autocast::clear_cache();
  }
  CpuAutocast(const CpuAutocast&) = delete;
  CpuAutocast& operator=(const CpuAutocast&) = delete;
};

TEST(CheckpointTest, ModelGradientsEqualUnderBFloat16Autocast) {
  torch::manual_seed(24);
  auto graphs = make_graphs({5, 7, 4}, 12);
  auto gat_config = small_gat();
  auto vgae_config = small_vgae();
  gat_config.gradient_checkpointing = vgae_config.gradient_checkpointing = false;
  torch::manual_seed(6);
  models::GATWithJK gat_plain(gat_config);
  models::VGAE vgae_plain(vgae_config);
  gat_config.gradient_checkpointing = vgae_config.gradient_checkpointing = true;
  torch::manual_seed(6);
  models::GATWithJK gat_checkpointed(gat_config);
  models::VGAE vgae_checkpointed(vgae_config);

  auto step = [&graphs](models::GATWithJK& gat, models::VGAE& vgae) {
    at::Tensor logits;
    models::VgaeOutput out;
    torch::manual_seed(97);
    {
      CpuAutocast autocast;
      logits = gat->forward(graphs.x, graphs.edge_index, graphs.batch, graphs.num_graphs);
      out = vgae->forward(graphs.x, graphs.edge_index);
    }
    EXPECT_EQ(logits.scalar_type(), at::kBFloat16);
    (logits.to(torch::kFloat).pow(2).sum() + vgae_loss(out, graphs).to(torch::kFloat)).backward();
  };
  step(gat_plain, vgae_plain);
  step(gat_checkpointed, vgae_checkpointed);
  // A GATConv input has three consumers in the plain graph (the projection, the folded attention
  // scores, the jumping-knowledge concatenation) and its bfloat16 gradients are summed in another
  // order than across the checkpoint boundary: rounding differences of ~1e-4. A different
  // dropout mask would differ by O(1).
  expect_same_gradients(*gat_plain, *gat_checkpointed, 1e-3);
  expect_same_gradients(*vgae_plain, *vgae_checkpointed, 1e-3);
}

// --- memory ----------------------------------------------------------------------------------

std::int64_t peak_training_step_bytes(models::GATWithJK& model, const Graphs& graphs) {
  model->zero_grad();
  memory::reset_peak();
  const auto before = memory::cpu_tensor_memory().current_bytes;
  auto out = model->forward(graphs.x, graphs.edge_index, graphs.batch, graphs.num_graphs);
  out.sum().backward();
  return memory::cpu_tensor_memory().peak_bytes - before;
}

TEST(CheckpointTest, CheckpointingLowersThePeakTensorMemory) {
  memory::install_counting_cpu_allocator();
  torch::manual_seed(23);
  auto graphs = make_graphs(std::vector<std::int64_t>(50, 100), 30);  // 5000 nodes
  auto config = small_gat();
  config.num_ids = 30;
  config.hidden = 48;  // the teacher's width: 8 heads of 48
  config.heads = 8;
  torch::manual_seed(5);
  models::GATWithJK model(config);

  model->set_gradient_checkpointing(false);
  const auto plain = peak_training_step_bytes(model, graphs);
  model->set_gradient_checkpointing(true);
  const auto checkpointed = peak_training_step_bytes(model, graphs);
  ASSERT_GT(plain, 0);
  std::cout << "peak tensor bytes of a training step: plain " << plain << ", checkpointed "
            << checkpointed << "\n";
  // The fused attention kernel and the fused ReLU-dropout already keep little per layer (the
  // projection and the block output, which is also the next block's input), so checkpointing
  // saves the projections only: ~24% of the GAT teacher's step peak at batch 1024
  // (docs/benchmarks.md). Here at least a tenth.
  EXPECT_LT(checkpointed, plain * 9 / 10)
      << "plain " << plain << " B, checkpointed " << checkpointed << " B";
}

}  // namespace
}  // namespace headroom::nn
