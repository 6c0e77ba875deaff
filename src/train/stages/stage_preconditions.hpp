// What a graph stage checks before it builds anything, so that a store or a configuration that
// cannot give a meaningful or a possible run is refused by name, up front: the held-out graphs
// that validation needs, and a model whose training state fits the memory budget. Private to the
// stages wing. Pure checks: thread-safe.
#pragma once

#include <cstddef>
#include <string_view>

#include <nlohmann/json.hpp>

#include "headroom/store/graph_store.hpp"
#include "headroom/train/context/run_context.hpp"
#include "headroom/train/families/model_family.hpp"

namespace headroom::train::detail {

// Early stopping, best.pt and the calibrated decision threshold are chosen on held-out graphs.
// Throws std::runtime_error naming `store`, `stage` and the flag that builds a validation split
// when `held_out` (the validation graphs the stage would validate on; `what` says which, e.g.
// "normal validation graphs") is 0. Validating on the training graphs instead, as stages once
// did, chose all three on graphs the model learned, without a word.
void require_validation_graphs(const store::GraphStore& store, std::size_t held_out,
                               std::string_view stage, std::string_view what);

// The bytes a model of `model_config` (of `family`) needs to train: float32 parameters, their
// gradients and Adam's two moments, 16 bytes per parameter (ModelFamily::parameter_count).
double training_state_bytes(const ModelFamily& family, const nlohmann::json& model_config);

// Refuses, before the model is built, a model whose training state (training_state_bytes) is
// larger than context.device_budget: throws std::runtime_error naming `stage`, the model, its
// parameter count and bytes, its identity embedding's share (identities × width) and the budget.
// Without it the model was allocated past the budget and the run failed on the next small
// allocation, blaming it.
void require_model_fits_budget(const ModelFamily& family, const nlohmann::json& model_config,
                               const RunContext& context, std::string_view stage);

}  // namespace headroom::train::detail
