// The base of every graph autoencoder (the VGAE is the first): a module that the training area's
// autoencoder families (train/families/model_family.hpp, AutoencoderFamily) drive. Its outputs
// differ from one model to the next, so the base has no forward(): the family that built a model
// runs it and says what the stages read of it (loss, latent, reconstruction, anomaly score).
#pragma once

#include <torch/nn/module.h>

#include <memory>

namespace headroom::models {

class GraphAutoencoderImpl : public torch::nn::Module {
 public:
  // Recompute layers in the backward pass (less memory, one more forward), for models that can;
  // the others ignore it. Changes no result, only the step's memory and time.
  virtual void set_gradient_checkpointing(bool /*on*/) {}
};

// Shared ownership, as LibTorch's module holders have.
using GraphAutoencoder = std::shared_ptr<GraphAutoencoderImpl>;

}  // namespace headroom::models
