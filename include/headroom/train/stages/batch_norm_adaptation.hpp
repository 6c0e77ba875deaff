// Label-free adaptation of an autoencoder's normalisation layers to a new vehicle (AdaBN): every
// BatchNorm's running mean and variance, learnt on the training vehicles' traffic, are replaced by
// those of a test file's first windows, whatever their labels, so that the layers normalise the
// new vehicle's activations against its own traffic. The weights stay as trained. Not
// thread-safe: it changes the model's buffers in place; BatchNormStatistics puts them back.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include <ATen/Tensor.h>
#include <c10/core/Device.h>

#include "headroom/store/graph_store.hpp"
#include "headroom/train/families/model_checkpoint.hpp"
#include "headroom/train/step/precision.hpp"

namespace headroom::train {

// A copy of the running statistics of every BatchNorm in a model, to restore after adapting.
class BatchNormStatistics {
 public:
  explicit BatchNormStatistics(torch::nn::Module& model);
  // The number of BatchNorm layers found (0: nothing to adapt).
  std::size_t layers() const { return saved_.size(); }
  // Writes the copies back into `model`, which must be the model they were taken from.
  void restore(torch::nn::Module& model) const;

 private:
  struct Saved {
    at::Tensor mean, variance, batches;
  };
  std::vector<Saved> saved_;
};

// Replaces the running statistics of every BatchNorm in `autoencoder` by the cumulative average of
// its batch statistics over the nodes of `graph_ids`, run without gradients, batch by batch; every
// other layer runs as in evaluation (no dropout). Leaves the model in eval mode. Returns the number
// of BatchNorm layers adapted.
std::size_t adapt_batch_norm(const LoadedAutoencoder& autoencoder, const store::GraphStore& store,
                             std::span<const std::uint32_t> graph_ids, std::int64_t batch_size,
                             const c10::Device& device, Precision precision = Precision::kFloat32);

}  // namespace headroom::train
