#include "stage_preconditions.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "headroom/util/byte_size.hpp"
#include "headroom/util/printable_text.hpp"

namespace headroom::train::detail {
namespace {

// float32 parameter, gradient, and Adam's first and second moments.
constexpr double kTrainingBytesPerParameter = 16;

}  // namespace

void require_validation_graphs(const store::GraphStore& store, std::size_t held_out,
                               std::string_view stage, std::string_view what) {
  if (held_out > 0) return;
  const auto& metadata = store.metadata();
  throw std::runtime_error(fmt::format(
      "{}: no {} ({} validation graphs; the store's validation fraction is {}): stage {} chooses "
      "its early stopping, best.pt and decision threshold on held-out graphs, and would choose "
      "them on the graphs it trains on. Build the store with a validation split: `headroom "
      "preprocess --val-fraction` above 0 (default 0.2), or `headroom import-graphs "
      "--validation-fraction`",
      util::printable_path(store.path()), what, store.validation_ids().size(),
      metadata.validation_fraction, stage));
}

double training_state_bytes(const ModelFamily& family, const nlohmann::json& model_config) {
  return kTrainingBytesPerParameter * family.parameter_count(model_config);
}

void require_model_fits_budget(const ModelFamily& family, const nlohmann::json& model_config,
                               const RunContext& context, std::string_view stage) {
  const double parameters = family.parameter_count(model_config);
  const double needed = kTrainingBytesPerParameter * parameters;
  const auto budget = static_cast<double>(context.device_budget);
  if (needed <= budget) return;
  std::string embedding;
  const auto ids = model_config.value("num_ids", std::int64_t{0});
  const auto width = model_config.value("embedding_dim", std::int64_t{0});
  if (ids > 0 && width > 0)
    embedding = fmt::format(
        "; its identity embedding alone ({} identities × {}) is {} to train", ids, width,
        util::format_byte_size(kTrainingBytesPerParameter * static_cast<double>(ids) *
                               static_cast<double>(width)));
  throw std::runtime_error(fmt::format(
      "stage {}: the {} model has {:.0f} parameters, {} to train (float32 weights, gradients and "
      "Adam's two moments), more than the memory budget {} on {}{}. Raise --memory-budget, or "
      "train a smaller model (--embedding-dim, --hidden, the student preset)",
      stage, family.name(), parameters, util::format_byte_size(needed),
      util::format_byte_size(budget), context.device.str(), embedding));
}

}  // namespace headroom::train::detail
