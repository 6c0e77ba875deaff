#include "headroom/models/vgae_layout.hpp"

#include <stdexcept>
#include <string>

namespace headroom::models {
namespace {

void require(bool ok, const std::string& what) {
  if (!ok) throw std::invalid_argument("VGAE: " + what);
}

GatLayerShape split(std::int64_t in, std::int64_t width, std::int64_t heads) {
  require(width > 0 && width % heads == 0, "width " + std::to_string(width) +
                                               " must be a positive multiple of its heads (" +
                                               std::to_string(heads) + ")");
  return {in, width / heads, heads};
}

}  // namespace

VgaeLayerPlan vgae_layer_plan(const VgaeConfig& c) {
  require(c.num_ids > 0, "num_ids must be positive");
  require(c.in_features >= 2, "in_features must be at least 2 (the ID column and features)");
  require(c.embedding_dim > 0, "embedding_dim must be positive");
  require(!c.hidden.empty(), "hidden must name at least one layer");
  require(c.latent > 0 && c.heads > 0 && c.decoder_heads > 0,
          "latent, heads and decoder_heads must be positive");
  VgaeLayerPlan plan;
  plan.input = c.embedding_dim + c.in_features - 1;
  const bool kd_gat = c.layout == VgaeLayout::kKdGat;
  auto in = plan.input;
  for (std::size_t i = 0; i < c.hidden.size(); ++i) {
    const auto heads = kd_gat && i > 0 ? 1 : c.heads;
    plan.encoder.push_back(split(in, c.hidden[i], heads));
    in = c.hidden[i];
  }
  plan.encoded = in;
  in = c.latent;
  if (kd_gat) {
    plan.decoder.push_back(split(in, c.hidden.back(), c.decoder_heads));
    in = c.hidden.back();
  } else {
    for (auto i = static_cast<std::int64_t>(c.hidden.size()) - 2; i >= 0; --i) {
      const auto width = c.hidden[static_cast<std::size_t>(i)];
      plan.decoder.push_back(split(in, width, c.heads));
      in = width;
    }
  }
  plan.reconstruction = {in, c.in_features - 1, 1};
  plan.neighbour = kd_gat ? std::vector<std::int64_t>{c.latent, c.latent}
                          : std::vector<std::int64_t>{c.hidden.back()};
  plan.neighbour_dropout = kd_gat;
  plan.kl_mean_over_elements = kd_gat;
  return plan;
}

}  // namespace headroom::models
