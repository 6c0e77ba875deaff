#include "headroom/distributed/gradient_averaging.hpp"

#include <torch/torch.h>

namespace headroom::distributed {
namespace {

// Consecutive parameters of one dtype and device, up to `bucket_bytes` each (a larger parameter
// gets a bucket of its own).
std::vector<std::vector<at::Tensor>> buckets_of(const std::vector<at::Tensor>& gradients,
                                                std::int64_t bucket_bytes) {
  std::vector<std::vector<at::Tensor>> buckets;
  std::int64_t filled = 0;
  for (const auto& gradient : gradients) {
    const auto bytes = gradient.numel() * static_cast<std::int64_t>(gradient.element_size());
    const bool fits = !buckets.empty() && filled + bytes <= bucket_bytes &&
                      buckets.back().front().scalar_type() == gradient.scalar_type() &&
                      buckets.back().front().device() == gradient.device();
    if (!fits) {
      buckets.emplace_back();
      filled = 0;
    }
    buckets.back().push_back(gradient);
    filled += bytes;
  }
  return buckets;
}

}  // namespace

train::GradientHook weighted_gradient_average(train::Collectives& collectives,
                                              std::int64_t bucket_bytes) {
  return
      [&collectives, bucket_bytes](const std::vector<at::Tensor>& parameters, double batch_weight) {
        std::vector<at::Tensor> total_weight = {torch::tensor({batch_weight}, torch::kDouble)};
        collectives.all_reduce_sum(total_weight);
        const double share = batch_weight / total_weight[0].item<double>();
        std::vector<at::Tensor> gradients;
        for (const auto& p : parameters) {
          if (!p.grad().defined()) p.mutable_grad() = torch::zeros_like(p);
          gradients.push_back(p.mutable_grad());
        }
        for (auto& bucket : buckets_of(gradients, bucket_bytes)) {
          std::vector<at::Tensor> flat;
          for (const auto& gradient : bucket) flat.push_back(gradient.reshape({-1}));
          std::vector<at::Tensor> buffer = {torch::cat(flat).mul_(share)};
          collectives.all_reduce_sum(buffer);
          std::int64_t offset = 0;
          for (auto& gradient : bucket) {
            const auto n = gradient.numel();
            gradient.copy_(buffer[0].slice(0, offset, offset + n).view_as(gradient));
            offset += n;
          }
        }
      };
}

}  // namespace headroom::distributed
