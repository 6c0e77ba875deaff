// Internal helpers shared by the stage implementations.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <stdexcept>
#include <vector>

#include <torch/nn/module.h>

#include "headroom/store/graph_store.hpp"
#include "headroom/train/caches/teacher_output_cache.hpp"
#include "headroom/train/config/training_config.hpp"
#include "headroom/train/context/collectives.hpp"
#include "headroom/train/context/run_context.hpp"
#include "headroom/train/context/run_directory.hpp"
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

}  // namespace headroom::train::detail
