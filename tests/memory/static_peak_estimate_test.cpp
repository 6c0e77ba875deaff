// The static estimate against the real models: its fixed part must follow from the real
// parameter count, and its prediction must bound a measured training step from above without
// being useless (within 2x), for the presets on a synthetic store.
#include "headroom/memory/static_peak_estimate.hpp"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <memory>
#include <optional>

#include "headroom/loader/epoch_order.hpp"
#include "headroom/models/gat_with_jk.hpp"
#include "headroom/models/vgae.hpp"
#include "headroom/train/families/plain_probe.hpp"
#include "test_support.hpp"

namespace headroom::memory {
using train::probe_training_peak;
using train::probe_training_peaks;
namespace {

std::int64_t parameter_count(const train::ModelSpec& model) {
  std::int64_t n = 0;
  for (const auto& p : train::model_family(model.family).build(model.config)->parameters())
    n += p.numel();
  return n;
}

PeakFit static_peak_estimate(const train::ModelSpec& model, bool reduced_precision) {
  return train::model_family(model.family).static_estimate(model.config, reduced_precision).value();
}

class StaticPeakEstimate : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = std::make_unique<testing::TempDir>();
    store_.emplace(store::GraphStore::open(testing::build_synthetic_store(dir_->path(), 20000)));
  }
  static void TearDownTestSuite() {
    store_.reset();
    dir_.reset();
  }
  static inline std::unique_ptr<testing::TempDir> dir_;
  static inline std::optional<store::GraphStore> store_;
};

TEST_F(StaticPeakEstimate, FixedPartIsParametersGradientsAndAdamState) {
  for (const std::string kind : {"gat", "vgae"})
    for (const auto size : {models::ModelSize::kTeacher, models::ModelSize::kStudent}) {
      const auto model = train::preset_model(*store_, kind, size);
      const auto fit = static_peak_estimate(model, false);
      EXPECT_DOUBLE_EQ(fit.fixed_bytes, 16.0 * static_cast<double>(parameter_count(model)))
          << models::to_string(size) << " " << kind;
      EXPECT_EQ(fit.samples, 0u);
    }
}

TEST_F(StaticPeakEstimate, BoundsAMeasuredStepFromAboveWithinTwice) {
  const auto order = loader::shuffled(store_->train_ids(), 3, 0);
  const auto batch = std::span(order).first(std::min<std::size_t>(order.size(), 64));
  for (const std::string kind : {"gat", "vgae"})
    for (const bool checkpointing : {true, false}) {
      auto model = train::preset_model(*store_, kind, models::ModelSize::kStudent);
      model.config["gradient_checkpointing"] = checkpointing;
      const auto measured = probe_training_peak(*store_, model, batch);
      const double estimate = static_peak_estimate(model, false)
                                  .predict(measured.nodes, measured.edges, measured.graphs);
      std::printf("    %s checkpointing %s: measured %.0f B, static %.0f B (%+.1f%%)\n",
                  kind.c_str(), checkpointing ? "on" : "off", measured.peak_bytes, estimate,
                  100.0 * (estimate - measured.peak_bytes) / measured.peak_bytes);
      EXPECT_GE(estimate, measured.peak_bytes);
      EXPECT_LE(estimate, 2.0 * measured.peak_bytes);
    }
}

TEST_F(StaticPeakEstimate, ReducedPrecisionShrinksNodeActivationsNotParametersOrAttention) {
  const auto model = train::preset_model(*store_, "gat", models::ModelSize::kTeacher);
  const auto full = static_peak_estimate(model, false);
  const auto reduced = static_peak_estimate(model, true);
  EXPECT_DOUBLE_EQ(reduced.fixed_bytes, full.fixed_bytes);
  // The fused attention keeps its per-edge values in float32 whatever the input precision.
  EXPECT_DOUBLE_EQ(reduced.bytes_per_edge, full.bytes_per_edge);
  EXPECT_LT(reduced.bytes_per_node, full.bytes_per_node);
}

}  // namespace
}  // namespace headroom::memory
