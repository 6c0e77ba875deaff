// The trained classifier a distilled classifier learns from (--teacher-path), and where its logits
// come from while the student trains: the teacher output cache built before training (no teacher
// held then), or the teacher itself, in device memory or offloaded to pinned host memory
// (caches/offloaded_teacher.hpp). Private to the stages wing. Not thread-safe.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <vector>

#include <ATen/Tensor.h>
#include <nlohmann/json.hpp>

#include "headroom/loader/graph_batch.hpp"
#include "headroom/models/graph_classifier.hpp"
#include "headroom/store/graph_store.hpp"
#include "headroom/train/caches/offloaded_teacher.hpp"
#include "headroom/train/caches/teacher_output_cache.hpp"
#include "headroom/train/config/training_config.hpp"
#include "headroom/train/context/run_context.hpp"
#include "headroom/train/context/run_directory.hpp"

namespace headroom::train::detail {

class ClassifierTeacher {
 public:
  // Loads config.distillation.teacher_path, frozen: on the CPU when it is to be cached or
  // offloaded, else on the context's device. Refuses a teacher trained on another store than the
  // one of `data_identity` (loop/run_resume.hpp: require_trained_on). `config`, `context` and
  // `run` must outlive it.
  ClassifierTeacher(const TrainingConfig& config, const RunContext& context, RunDirectory& run,
                    const nlohmann::json& data_identity);

  // With --teacher-cache: the teacher's logits of `graph_ids` computed once, or read from the
  // cache a run before built (caches/teacher_output_cache.hpp); the teacher is released then.
  void build_cache(std::vector<std::uint32_t> graph_ids, const store::GraphStore& store);

  // Bytes of the teacher's parameters held on the training device while the student trains (0
  // once cached or when offloaded): memory outside the step's fit.
  double device_bytes() const;

  // The teacher's logits for `batch`, without gradients, on the batch's device.
  at::Tensor logits(const loader::GraphBatch& batch);

 private:
  const TrainingConfig& config_;
  const RunContext& context_;
  RunDirectory& run_;
  std::filesystem::path file_;
  std::int64_t classes_ = 0;
  models::GraphClassifier model_;  // released once the cache is built
  std::optional<TeacherOutputCache> cache_;
  std::optional<OffloadedTeacher> offloaded_;
};

}  // namespace headroom::train::detail
