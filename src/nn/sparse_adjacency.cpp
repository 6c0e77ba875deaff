#include "headroom/nn/sparse_adjacency.hpp"

#include <torch/torch.h>

#include <ATen/Parallel.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <algorithm>
#include <atomic>
#include <stdexcept>
#include <vector>

namespace headroom::nn {
namespace {

// Entries per parallel task: rows are cut so that each task has about this many to multiply.
constexpr std::int64_t kEntriesPerTask = 1 << 16;

// A product passed around autograd's input handling (a tensor in a struct is not an input).
struct KnownProduct {
  at::Tensor product;
};

// A · dense with a symmetric A, whose backward is Aᵀ · grad = A · grad. A's arrays are saved
// with the graph (handles, not copies), so backward never outlives them.
class SymmetricProduct : public torch::autograd::Function<SymmetricProduct> {
 public:
  // `known`: A · dense computed before (see attach_product), or undefined to compute it.
  static at::Tensor forward(torch::autograd::AutogradContext* context, const at::Tensor& dense,
                            const at::Tensor& row_offsets, const at::Tensor& columns,
                            const at::Tensor& weights, const KnownProduct& known) {
    context->saved_data["row_offsets"] = row_offsets;
    context->saved_data["columns"] = columns;
    context->saved_data["weights"] = weights;
    // A fresh alias, so the autograd history set on the output is not set on the caller's tensor.
    if (known.product.defined()) return known.product.detach();
    return product(row_offsets, columns, weights, dense);
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* context,
                                                 torch::autograd::variable_list gradients) {
    const auto& saved = context->saved_data;
    return {product(saved.at("row_offsets").toTensor(), saved.at("columns").toTensor(),
                    saved.at("weights").toTensor(), gradients[0].contiguous()),
            at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor()};
  }

 private:
  static at::Tensor product(const at::Tensor& row_offsets, const at::Tensor& columns,
                            const at::Tensor& weights, const at::Tensor& dense) {
    if (!dense.is_cuda()) return csr_product_cpu(row_offsets, columns, weights, dense);
    const auto n = row_offsets.numel() - 1;
    // cuSPARSE wants both index arrays of one dtype: the offsets as int32 (E < 2^31 here).
    const std::vector<std::int64_t> size = {n, n};
    return at::mm(torch::sparse_csr_tensor(row_offsets.to(torch::kInt32), columns, weights, size,
                                           weights.options().layout(torch::kSparseCsr)),
                  dense);
  }
};

}  // namespace

at::Tensor csr_product_cpu(const at::Tensor& row_offsets, const at::Tensor& columns,
                           const at::Tensor& weights, const at::Tensor& dense) {
  const auto rows = row_offsets.numel() - 1;
  const auto channels = dense.size(1);
  auto out = torch::zeros({rows, channels}, dense.options());
  const auto* offsets = row_offsets.data_ptr<std::int64_t>();
  const auto* cols = columns.data_ptr<std::int32_t>();
  const auto* values = weights.data_ptr<float>();
  const auto* in = dense.data_ptr<float>();
  auto* result = out.data_ptr<float>();
  const auto entries = weights.numel();
  // Tasks are cut by entries, not rows, and handed out as threads come free: a text graph's word
  // rows hold hundreds of entries and its document rows tens, and how fast a row goes depends on
  // where its neighbours lie in memory, so any fixed split left one thread with most of the work.
  const auto tasks =
      std::clamp<std::int64_t>(entries / kEntriesPerTask, 1, std::max<std::int64_t>(rows, 1));
  std::vector<std::int64_t> task_rows(static_cast<std::size_t>(tasks) + 1, rows);
  task_rows[0] = 0;
  for (std::int64_t t = 1; t < tasks; ++t) {
    const std::int64_t first_entry = entries * t / tasks;
    task_rows[static_cast<std::size_t>(t)] =
        std::upper_bound(offsets, offsets + rows + 1, first_entry) - offsets - 1;
  }
  const auto multiply_rows = [&](std::int64_t first_row, std::int64_t end_row) {
    for (auto row = first_row; row < end_row; ++row) {
      float* __restrict target = result + row * channels;
      for (std::int64_t e = offsets[row]; e < offsets[row + 1]; ++e) {
        const float weight = values[e];
        const float* __restrict source = in + static_cast<std::int64_t>(cols[e]) * channels;
        for (std::int64_t c = 0; c < channels; ++c) target[c] += weight * source[c];
      }
    }
  };
  std::atomic<std::int64_t> next_task{0};
  const auto workers = std::min<std::int64_t>(at::get_num_threads(), tasks);
  at::parallel_for(0, workers, 1, [&](std::int64_t, std::int64_t) {
    for (auto task = next_task.fetch_add(1); task < tasks; task = next_task.fetch_add(1)) {
      multiply_rows(task_rows[static_cast<std::size_t>(task)],
                    task_rows[static_cast<std::size_t>(task) + 1]);
    }
  });
  return out;
}

at::Tensor csr_product_rows_cpu(const at::Tensor& row_offsets, const at::Tensor& columns,
                                const at::Tensor& weights, const at::Tensor& rows,
                                const at::Tensor& dense) {
  const auto count = rows.numel();
  const auto channels = dense.size(1);
  auto out = torch::zeros({count, channels}, dense.options());
  const auto* offsets = row_offsets.data_ptr<std::int64_t>();
  const auto* cols = columns.data_ptr<std::int32_t>();
  const auto* values = weights.data_ptr<float>();
  const auto* listed = rows.data_ptr<std::int64_t>();
  const auto* in = dense.data_ptr<float>();
  auto* result = out.data_ptr<float>();
  at::parallel_for(0, count, 64, [&](std::int64_t begin, std::int64_t end) {
    for (auto k = begin; k < end; ++k) {
      const auto row = listed[k];
      float* __restrict target = result + k * channels;
      for (std::int64_t e = offsets[row]; e < offsets[row + 1]; ++e) {
        const float weight = values[e];
        const float* __restrict source = in + static_cast<std::int64_t>(cols[e]) * channels;
        for (std::int64_t c = 0; c < channels; ++c) target[c] += weight * source[c];
      }
    }
  });
  return out;
}

SparseAdjacency::SparseAdjacency(at::Tensor row_offsets, at::Tensor columns, at::Tensor weights,
                                 bool symmetric)
    : row_offsets_(std::move(row_offsets)),
      columns_(std::move(columns)),
      weights_(std::move(weights)) {
  if (!symmetric)
    throw std::invalid_argument("sparse adjacency: only a symmetric adjacency is supported");
  if (row_offsets_.dim() != 1 || row_offsets_.numel() < 1 ||
      row_offsets_.scalar_type() != torch::kInt64)
    throw std::invalid_argument("sparse adjacency: row offsets must be int64 [N + 1]");
  if (columns_.dim() != 1 || columns_.scalar_type() != torch::kInt32)
    throw std::invalid_argument("sparse adjacency: columns must be int32 [E]");
  if (weights_.dim() != 1 || weights_.scalar_type() != torch::kFloat32 ||
      weights_.numel() != columns_.numel())
    throw std::invalid_argument("sparse adjacency: weights must be float32 [E], like columns");
  num_nodes_ = row_offsets_.numel() - 1;
}

namespace {

// A · dense through autograd, computed or (`known`) attached.
at::Tensor product_through_autograd(const SparseAdjacency& a, const at::Tensor& dense,
                                    const KnownProduct& known) {
  if (dense.dim() != 2 || dense.size(0) != a.num_nodes())
    throw std::invalid_argument("sparse adjacency: the dense operand must be [N, C]");
  // Autocast would hand a half-precision operand; the kernel and cuSPARSE's CSR product here take
  // float32 (the product's sums over thousands of neighbours want it too).
  const c10::impl::ExcludeDispatchKeyGuard no_autocast(c10::autocast_dispatch_keyset);
  return SymmetricProduct::apply(dense.to(torch::kFloat32).contiguous(), a.row_offsets(),
                                 a.columns(), a.weights(), known);
}

}  // namespace

at::Tensor SparseAdjacency::multiply(const at::Tensor& dense) const {
  return product_through_autograd(*this, dense, KnownProduct{});
}

at::Tensor SparseAdjacency::attach_product(const at::Tensor& dense,
                                           const at::Tensor& product) const {
  if (product.sizes() != dense.sizes() || product.scalar_type() != torch::kFloat32)
    throw std::invalid_argument("sparse adjacency: a known product must be float32 [N, C]");
  return product_through_autograd(*this, dense, KnownProduct{product});
}

at::Tensor SparseAdjacency::multiply_rows(std::int64_t first, std::int64_t end,
                                          const at::Tensor& dense) const {
  if (first < 0 || end < first || end > num_nodes_)
    throw std::invalid_argument("sparse adjacency: rows outside the graph");
  if (dense.dim() != 2 || dense.size(0) != num_nodes_ || dense.scalar_type() != torch::kFloat32)
    throw std::invalid_argument("sparse adjacency: the dense operand must be float32 [N, C]");
  if (torch::GradMode::is_enabled() && dense.requires_grad())
    throw std::logic_error("sparse adjacency: multiply_rows has no backward; run it without grad");
  // The block's CSR: its offsets rebased to 0, views of its entries.
  const auto host_offsets = row_offsets_.slice(0, first, end + 1).cpu();
  const auto* offsets = host_offsets.data_ptr<std::int64_t>();
  const auto begin_entry = offsets[0];
  const auto end_entry = offsets[end - first];
  const auto device = dense.device();
  const auto block_offsets = (host_offsets - begin_entry).to(device);
  const auto columns = columns_.slice(0, begin_entry, end_entry).to(device);
  const auto weights = weights_.slice(0, begin_entry, end_entry).to(device);
  const auto operand = dense.contiguous();
  if (!operand.is_cuda()) return csr_product_cpu(block_offsets, columns, weights, operand);
  const std::vector<std::int64_t> size = {end - first, num_nodes_};
  return at::mm(torch::sparse_csr_tensor(block_offsets.to(torch::kInt32), columns, weights, size,
                                         weights.options().layout(torch::kSparseCsr)),
                operand);
}

at::Tensor SparseAdjacency::multiply_listed_rows(const at::Tensor& rows,
                                                 const at::Tensor& dense) const {
  if (rows.dim() != 1 || rows.scalar_type() != torch::kInt64 || rows.is_cuda())
    throw std::invalid_argument("sparse adjacency: the listed rows must be host int64 [K]");
  if (rows.numel() > 0 &&
      (rows.min().item<std::int64_t>() < 0 || rows.max().item<std::int64_t>() >= num_nodes_))
    throw std::invalid_argument("sparse adjacency: rows outside the graph");
  if (dense.dim() != 2 || dense.size(0) != num_nodes_ || dense.scalar_type() != torch::kFloat32)
    throw std::invalid_argument("sparse adjacency: the dense operand must be float32 [N, C]");
  if (torch::GradMode::is_enabled() && dense.requires_grad())
    throw std::logic_error(
        "sparse adjacency: multiply_listed_rows has no backward; run it without grad");
  const auto listed = rows.contiguous();
  const auto operand = dense.contiguous();
  if (!operand.is_cuda() && !row_offsets_.is_cuda())
    return csr_product_rows_cpu(row_offsets_, columns_, weights_, listed, operand);
  // Elsewhere: each block of listed rows as a CSR of its own entries, then torch's product.
  constexpr std::int64_t kRowsPerBlock = 4096;
  const auto offsets = row_offsets_.cpu();
  const auto* begin_of = offsets.data_ptr<std::int64_t>();
  const auto* ids = listed.data_ptr<std::int64_t>();
  std::vector<at::Tensor> blocks;
  for (std::int64_t first = 0; first < listed.numel(); first += kRowsPerBlock) {
    const auto end = std::min(listed.numel(), first + kRowsPerBlock);
    std::vector<std::int64_t> block_offsets = {0};
    std::vector<std::int64_t> entries;
    for (auto k = first; k < end; ++k) {
      for (auto e = begin_of[ids[k]]; e < begin_of[ids[k] + 1]; ++e) entries.push_back(e);
      block_offsets.push_back(static_cast<std::int64_t>(entries.size()));
    }
    const auto positions = torch::tensor(entries, torch::kInt64).to(columns_.device());
    const auto device = operand.device();
    const std::vector<std::int64_t> size = {end - first, num_nodes_};
    blocks.push_back(at::mm(
        torch::sparse_csr_tensor(torch::tensor(block_offsets, torch::kInt32).to(device),
                                 columns_.index_select(0, positions).to(device),
                                 weights_.index_select(0, positions).to(device), size,
                                 weights_.options().device(device).layout(torch::kSparseCsr)),
        operand));
  }
  if (blocks.empty()) return torch::zeros({0, operand.size(1)}, operand.options());
  return torch::cat(blocks);
}

SparseAdjacency SparseAdjacency::to(const c10::Device& device) const {
  if (row_offsets_.device() == device) return *this;
  return SparseAdjacency(row_offsets_.to(device), columns_.to(device), weights_.to(device),
                         /*symmetric=*/true);
}

std::int64_t SparseAdjacency::bytes() const {
  std::int64_t total = 0;
  for (const auto* t : {&row_offsets_, &columns_, &weights_})
    if (t->defined()) total += t->numel() * static_cast<std::int64_t>(t->element_size());
  return total;
}

}  // namespace headroom::nn
