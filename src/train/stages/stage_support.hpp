// Internal helpers shared by the stage implementations.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <vector>

#include <torch/nn/module.h>

#include "headroom/store/graph_store.hpp"
#include "headroom/train/caches/teacher_output_cache.hpp"
#include "headroom/train/config/training_config.hpp"
#include "headroom/train/context/collectives.hpp"
#include "headroom/train/context/run_directory.hpp"
#include "headroom/train/loop/training_loop.hpp"
#include "headroom/train/stages/prepared_stage.hpp"
#include "headroom/util/printable_text.hpp"

namespace headroom::train::detail {

// The ids among `ids` whose graph label equals `label`.
inline std::vector<std::uint32_t> with_label(const store::GraphStore& store,
                                             std::span<const std::uint32_t> ids,
                                             std::uint8_t label) {
  const auto labels = store.size_index().label;
  std::vector<std::uint32_t> out;
  for (const auto id : ids)
    if (labels[id] == label) out.push_back(id);
  return out;
}

// A student's teacher (--teacher-path) may not be the student's own run directory: the student
// overwrites that best.pt while it trains, so a resumed run would distill from another teacher
// than the one it started with (and the teacher cache's key with it).
inline void require_teacher_outside(const std::filesystem::path& teacher_file,
                                    const RunDirectory& run) {
  std::error_code ec;
  if (std::filesystem::equivalent(teacher_file.parent_path(), run.path(), ec))
    throw std::invalid_argument(
        "--teacher-path " + util::printable_path(teacher_file) +
        " is this stage's own best.pt, which training overwrites: give the teacher's run "
        "directory (another stage's), not the student's");
}

// Bytes of a module's parameters and buffers.
inline double parameter_bytes(const torch::nn::Module& module) {
  double bytes = 0;
  for (const auto& p : module.parameters()) bytes += static_cast<double>(p.nbytes());
  for (const auto& b : module.buffers()) bytes += static_cast<double>(b.nbytes());
  return bytes;
}

// Opens or builds the distilled stage's teacher output cache over `ids`, then releases the
// teacher: no teacher parameter stays anywhere. The teacher moves to context.device only when the
// cache has to be built; `outputs(teacher, batch)` returns the spec's tensors for a batch. In a
// data-parallel run, rank 0 alone opens or builds the file while the other ranks wait; they then
// open the file rank 0 wrote (the runs directory is on a file system every rank sees).
template <typename Teacher, typename Outputs>
TeacherOutputCache cache_teacher_outputs(Teacher& teacher, TeacherOutputSpec spec,
                                         const std::vector<std::uint32_t>& ids,
                                         const TrainingConfig& config, RunDirectory& run,
                                         const std::filesystem::path& teacher_file,
                                         const RunContext& context, const store::GraphStore& store,
                                         Outputs outputs) {
  auto settings = teacher_cache_settings(config, context, run, teacher_file);
  settings.spec = std::move(spec);
  std::optional<TeacherOutputCache> cache;
  collectives().run_on_rank0("build the teacher output cache", [&] {
    cache = TeacherOutputCache::open_or_build(settings, store, ids, [&] {
      teacher->to(context.device);
      return TeacherForward([model = teacher, outputs](const loader::GraphBatch& batch) mutable {
        return outputs(model, batch);
      });
    });
  });
  if (!cache) cache = open_teacher_outputs_of_rank0(settings, store, ids);
  teacher = nullptr;
  run.log(cache->summary());
  return std::move(*cache);
}

// A stage behind PreparedStage, for any stage class with prepare_inputs(), model_spec(),
// probe_target() and training_ids(). Owns the configuration the stage refers to.
template <typename Stage>
class PreparedStepOf final : public PreparedStage {
 public:
  explicit PreparedStepOf(const TrainingConfig& config) : config_(config), stage_(config_) {
    stage_.prepare_inputs();
  }
  ModelSpec model() const override { return stage_.model_spec(); }
  ProbeTarget probe_target() override { return stage_.probe_target(); }
  std::vector<std::uint32_t> training_ids() const override { return stage_.training_ids(); }

 private:
  TrainingConfig config_;
  Stage stage_;
};

// Validates `config` and prepares `Stage`'s step.
template <typename Stage>
std::unique_ptr<PreparedStage> prepare(const TrainingConfig& config) {
  validate(config);
  return std::make_unique<PreparedStepOf<Stage>>(config);
}

}  // namespace headroom::train::detail
