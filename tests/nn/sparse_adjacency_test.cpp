// The sparse-dense product of one big graph's message passing: the same numbers as a dense
// product, a gradient that is Aᵀ · grad, and inputs it refuses.
#include "headroom/nn/sparse_adjacency.hpp"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <stdexcept>

namespace headroom::nn {
namespace {

// A random symmetric N × N matrix with about `density` of its entries set, as dense and as CSR.
struct SymmetricGraph {
  at::Tensor dense;
  SparseAdjacency sparse;
};

SymmetricGraph random_symmetric(std::int64_t n, double density, std::uint64_t seed) {
  torch::manual_seed(seed);
  auto mask = torch::rand({n, n}) < density;
  mask = mask.logical_or(mask.t());
  auto values = torch::rand({n, n});
  values = (values + values.t()) * mask;
  const auto csr = values.to_sparse_csr();
  SparseAdjacency sparse(csr.crow_indices().to(torch::kInt64), csr.col_indices().to(torch::kInt32),
                         csr.values().contiguous(), /*symmetric=*/true);
  return {values, sparse};
}

TEST(SparseAdjacency, ProductEqualsTheDenseProduct) {
  const auto graph = random_symmetric(300, 0.05, 1);
  const auto h = torch::randn({300, 17});
  EXPECT_TRUE(torch::allclose(graph.sparse.multiply(h), torch::mm(graph.dense, h), 1e-5, 1e-5));
  EXPECT_EQ(graph.sparse.num_nodes(), 300);
  EXPECT_EQ(graph.sparse.num_entries(), (graph.dense != 0).sum().item<std::int64_t>());
}

// Enough entries for several parallel tasks (rows are cut by entries and handed out as threads
// come free): every thread count gives the same bits, each row being summed by one thread.
TEST(SparseAdjacency, ProductIsTheSameBitsOnOneAndTwoThreads) {
  const auto graph = random_symmetric(1500, 0.1, 5);
  ASSERT_GT(graph.sparse.num_entries(), 3 * (1 << 16));
  const auto h = torch::randn({1500, 33});
  const int threads_before = torch::get_num_threads();
  torch::set_num_threads(1);
  const auto one_thread = graph.sparse.multiply(h);
  torch::set_num_threads(2);
  const auto two_threads = graph.sparse.multiply(h);
  torch::set_num_threads(threads_before);
  EXPECT_TRUE(torch::equal(one_thread, two_threads));
  EXPECT_TRUE(torch::allclose(two_threads, torch::mm(graph.dense, h), 1e-4, 1e-4));
}

TEST(SparseAdjacency, GradientIsTheTransposedProduct) {
  const auto graph = random_symmetric(200, 0.08, 2);
  const auto weights = torch::randn({200, 9});
  const auto upstream = torch::randn({200, 9});

  auto sparse_input = weights.clone().requires_grad_(true);
  (graph.sparse.multiply(sparse_input) * upstream).sum().backward();
  auto dense_input = weights.clone().requires_grad_(true);
  (torch::mm(graph.dense, dense_input) * upstream).sum().backward();

  EXPECT_TRUE(torch::allclose(sparse_input.grad(), dense_input.grad(), 1e-5, 1e-5));
  EXPECT_TRUE(
      torch::allclose(sparse_input.grad(), torch::mm(graph.dense.t(), upstream), 1e-5, 1e-5));
}

TEST(SparseAdjacency, RowsWithoutEntriesGiveZeros) {
  // Node 1 has no neighbour at all: its output row is zero, not stale memory.
  SparseAdjacency a(torch::tensor({0, 1, 1, 2}, torch::kInt64),
                    torch::tensor({2, 0}, torch::kInt32), torch::tensor({0.5F, 0.5F}),
                    /*symmetric=*/true);
  const auto out = a.multiply(torch::ones({3, 4}));
  EXPECT_TRUE(torch::equal(out[1], torch::zeros({4})));
  EXPECT_TRUE(torch::allclose(out[0], torch::full({4}, 0.5F)));
}

TEST(SparseAdjacency, RefusesWhatItCannotMultiply) {
  const auto offsets = torch::tensor({0, 1, 2}, torch::kInt64);
  const auto columns = torch::tensor({1, 0}, torch::kInt32);
  const auto weights = torch::tensor({1.0F, 1.0F});
  EXPECT_THROW(SparseAdjacency(offsets, columns, weights, /*symmetric=*/false),
               std::invalid_argument);
  EXPECT_THROW(SparseAdjacency(offsets, columns.to(torch::kInt64), weights, true),
               std::invalid_argument);
  EXPECT_THROW(SparseAdjacency(offsets, columns, torch::tensor({1.0F}), true),
               std::invalid_argument);
  const SparseAdjacency a(offsets, columns, weights, true);
  EXPECT_THROW(a.multiply(torch::ones({3, 2})), std::invalid_argument);
}

}  // namespace
}  // namespace headroom::nn
