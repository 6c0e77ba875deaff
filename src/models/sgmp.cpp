#include "headroom/models/sgmp.hpp"

#include <torch/torch.h>

#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

#include "headroom/nn/checkpoint.hpp"
#include "headroom/nn/third_order_paths.hpp"

namespace headroom::models {
namespace {

void require(bool ok, const std::string& what) {
  if (!ok) throw std::invalid_argument("SGMP: " + what);
}

void check_batch(const GeometricBatch& batch, std::int64_t in_features) {
  TORCH_CHECK(batch.x.defined() && batch.x.dim() == 2 && batch.x.size(1) == in_features,
              "SGMP: x must be [N, ", in_features, "]");
  const auto n = batch.x.size(0);
  TORCH_CHECK(batch.pos.defined() && batch.pos.dim() == 2 && batch.pos.size(0) == n &&
                  (batch.pos.size(1) == 2 || batch.pos.size(1) == 3),
              "SGMP: pos must be [", n, ", 2] or [", n, ", 3] (a batch of a geometric store)");
  TORCH_CHECK(batch.batch.defined() && batch.batch.dim() == 1 && batch.batch.size(0) == n &&
                  batch.batch.scalar_type() == at::kLong,
              "SGMP: batch must be int64 [", n, "]");
  TORCH_CHECK(batch.num_graphs >= 0, "SGMP: num_graphs must be >= 0");
}

// Xavier-uniform weights and zero biases: every parameter here belongs to a Linear layer.
void initialise(torch::nn::Module& module) {
  torch::NoGradGuard no_grad;
  for (auto& parameter : module.parameters()) {
    if (parameter.dim() == 2) {
      torch::nn::init::xavier_uniform_(parameter);
    } else {
      torch::nn::init::zeros_(parameter);
    }
  }
}

// A batch's paths cut into chunks, each recreated from its start when it runs (and again when a
// checkpointed chunk is recomputed in backward), so no tensor of every path is ever held.
struct PathChunks {
  std::shared_ptr<const nn::ThirdOrderPaths> paths;
  std::vector<nn::PathCursor> starts;
  std::int64_t max_paths = 0;
  at::Tensor pos;  // detached: the geometry is input, not learned
};

// One chunk of one layer: its paths, their smeared geometry and their messages into [N, H].
// Holds everything by value (a checkpointed chunk runs again during backward).
struct ChunkWork {
  SgmpInteraction layer;
  std::shared_ptr<const nn::ThirdOrderPaths> paths;
  nn::PathCursor start;
  std::int64_t max_paths;
  at::Tensor pos;
  SgmpBases bases;

  at::Tensor operator()(const at::Tensor& h) {
    nn::PathCursor cursor = start;
    const auto chunk = paths->next(cursor, max_paths).to(h.device());
    return layer->forward(h, chunk, bases.smear(nn::path_geometry(pos, chunk)));
  }
};

// h plus every chunk's messages of interaction `layer`.
at::Tensor interact(SgmpInteraction& layer, const at::Tensor& h, const PathChunks& chunks,
                    const SgmpBases& bases, bool checkpointed) {
  auto update = torch::zeros_like(h);
  for (const auto& start : chunks.starts) {
    nn::CheckpointBlock block =
        [work = ChunkWork{layer, chunks.paths, start, chunks.max_paths, chunks.pos, bases}](
            const std::vector<at::Tensor>& in) mutable {
          return std::vector<at::Tensor>{work(in[0])};
        };
    const auto messages =
        checkpointed ? nn::checkpoint(block, {h}, layer->parameters())[0] : block({h})[0];
    update = update + messages;
  }
  return h + update;
}

}  // namespace

void SgmpOptions::validate() const {
  require(in_features >= 1, "in_features must be >= 1");
  require(hidden >= 2, "hidden must be >= 2 (the head's first layer has hidden / 2 units)");
  require(outputs >= 1, "outputs must be >= 1");
  require(interactions >= 1, "interactions must be >= 1");
  require(cutoff > 0.0, "cutoff must be > 0");
  require(distance_centres >= 2 && angle_centres >= 2 && dihedral_centres >= 2,
          "every smearing needs >= 2 centres");
  require(max_paths_per_chunk >= 0, "max_paths_per_chunk must be >= 0 (0: one chunk)");
}

SgmpBases SgmpBases::of(const SgmpOptions& options) {
  return {nn::distance_basis(options.cutoff, options.distance_centres),
          nn::angle_basis(options.angle_centres), nn::dihedral_basis(options.dihedral_centres)};
}

std::array<at::Tensor, 3> SgmpBases::smear(const nn::PathGeometry& geometry) const {
  return {distance.expand(geometry.d_ij),
          torch::cat({distance.expand(geometry.d_jk), angle.expand(geometry.theta_ijk)}, 1),
          torch::cat({distance.expand(geometry.d_jp), angle.expand(geometry.theta_ijp),
                      dihedral.expand(geometry.phi)},
                     1)};
}

SgmpMlpImpl::SgmpMlpImpl(std::int64_t in, std::int64_t hidden, std::int64_t out)
    : first_(register_module("first", torch::nn::Linear(in, hidden))),
      second_(register_module("second", torch::nn::Linear(hidden, out))) {}

at::Tensor SgmpMlpImpl::forward(const at::Tensor& input) {
  return second_->forward(torch::relu(first_->forward(input)));
}

SgmpInteractionImpl::SgmpInteractionImpl(std::int64_t hidden, const SgmpBases& bases) {
  const std::int64_t d = bases.distance.centres;
  const std::int64_t a = bases.angle.centres;
  const std::int64_t widths[3] = {d, d + a, d + a + bases.dihedral.centres};
  for (std::size_t order = 1; order <= 3; ++order) {
    encodings_.push_back(register_module("encoding" + std::to_string(order),
                                         SgmpMlp(widths[order - 1], hidden, hidden)));
  }
  const std::int64_t sizes[4] = {7 * hidden, 4 * hidden, 2 * hidden, hidden};
  for (std::size_t layer = 0; layer < 3; ++layer) {
    combine_.push_back(register_module("combine" + std::to_string(layer),
                                       torch::nn::Linear(sizes[layer], sizes[layer + 1])));
  }
}

at::Tensor SgmpInteractionImpl::forward(const at::Tensor& h, const at::Tensor& paths,
                                        const std::array<at::Tensor, 3>& smeared) {
  std::vector<at::Tensor> parts;
  parts.reserve(7);
  for (std::int64_t row = 0; row < 4; ++row) parts.push_back(h.index_select(0, paths[row]));
  for (std::size_t order = 0; order < 3; ++order)
    parts.push_back(encodings_[order]->forward(smeared[order]));
  auto message = combine_[0]->forward(torch::cat(parts, 1));
  message = combine_[1]->forward(torch::relu(message));
  message = combine_[2]->forward(torch::relu(message));
  return torch::zeros({h.size(0), message.size(1)}, message.options())
      .index_add_(0, paths[0], message);
}

SgmpImpl::SgmpImpl(const SgmpOptions& options)
    : options_((options.validate(), options)), bases_(SgmpBases::of(options)) {
  const std::int64_t hidden = options_.hidden;
  embedding_ = register_module("embedding", SgmpMlp(options_.in_features, hidden, hidden));
  for (std::int64_t layer = 0; layer < options_.interactions; ++layer) {
    interactions_.push_back(
        register_module("interaction" + std::to_string(layer), SgmpInteraction(hidden, bases_)));
  }
  head_ = register_module("head", SgmpMlp(hidden, hidden / 2, options_.outputs));
  initialise(*this);
}

SgmpEncoding SgmpImpl::encode(const GeometricBatch& batch) {
  check_batch(batch, options_.in_features);
  const std::int64_t n = batch.x.size(0);
  PathChunks chunks;
  chunks.paths = std::make_shared<const nn::ThirdOrderPaths>(batch.edge_index, n);
  chunks.max_paths = options_.max_paths_per_chunk > 0 ? options_.max_paths_per_chunk
                                                      : std::numeric_limits<std::int64_t>::max();
  chunks.starts = chunks.paths->chunk_starts(chunks.max_paths);
  chunks.pos = batch.pos.detach();
  auto h = embedding_->forward(batch.x);
  for (auto& layer : interactions_)
    h = interact(layer, h, chunks, bases_, options_.checkpoint_chunks);
  auto graphs =
      torch::zeros({batch.num_graphs, h.size(1)}, h.options()).index_add_(0, batch.batch, h);
  return {h, graphs};
}

at::Tensor SgmpImpl::forward(const GeometricBatch& batch) {
  return head_->forward(encode(batch).graphs);
}

}  // namespace headroom::models
