// The trained autoencoder a distilled autoencoder learns from (--teacher-path), and where its
// latents and reconstructions come from while the student trains: the teacher output cache built
// before training (no teacher held then), or the teacher itself, in device memory or offloaded to
// pinned host memory (caches/offloaded_teacher.hpp). Private to the stages wing. Not thread-safe.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <vector>

#include <ATen/Tensor.h>
#include <nlohmann/json.hpp>

#include "headroom/loader/graph_batch.hpp"
#include "headroom/models/graph_autoencoder.hpp"
#include "headroom/store/graph_store.hpp"
#include "headroom/train/caches/offloaded_teacher.hpp"
#include "headroom/train/caches/teacher_output_cache.hpp"
#include "headroom/train/config/training_config.hpp"
#include "headroom/train/context/run_context.hpp"
#include "headroom/train/context/run_directory.hpp"
#include "headroom/train/families/model_family.hpp"

namespace headroom::train::detail {

class AutoencoderTeacher {
 public:
  // The teacher's outputs for one batch, on the batch's device, without gradients.
  struct Outputs {
    at::Tensor latent;          // per node, [nodes, latent_width()]
    at::Tensor reconstruction;  // per node, the family's reconstruction width
  };

  // Loads config.distillation.teacher_path, frozen: on the CPU when it is to be cached or
  // offloaded, else on the context's device. Refuses this stage's own best.pt and a teacher
  // trained on another store than the one of `data_identity` (loop/run_resume.hpp:
  // require_trained_on). Building it draws from the generator, in every mode alike. `config`,
  // `context` and `run` must outlive it.
  AutoencoderTeacher(const TrainingConfig& config, const RunContext& context, RunDirectory& run,
                     const nlohmann::json& data_identity);

  // Width of the teacher's latent space: what a student's projection maps onto.
  std::int64_t latent_width() const;

  // With --teacher-cache: the teacher's outputs for `graph_ids` computed once, or read from the
  // cache a run before built (caches/teacher_output_cache.hpp); the teacher is released then.
  void build_cache(std::vector<std::uint32_t> graph_ids, const store::GraphStore& store);

  // Bytes of the teacher's parameters held on the training device while the student trains (0
  // once cached or when offloaded): memory outside the step's fit.
  double device_bytes() const;

  Outputs outputs(const loader::GraphBatch& batch);

 private:
  const TrainingConfig& config_;
  const RunContext& context_;
  RunDirectory& run_;
  std::filesystem::path file_;
  models::GraphAutoencoder model_;  // released once the cache is built
  const AutoencoderFamily* family_ = nullptr;
  nlohmann::json model_config_;
  std::optional<TeacherOutputCache> cache_;
  std::optional<OffloadedTeacher> offloaded_;
};

}  // namespace headroom::train::detail
