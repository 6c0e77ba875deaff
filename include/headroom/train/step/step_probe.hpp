// The peak memory of the training step a stage will run, measured: a fresh copy of the stage's
// model, an Adam optimiser and the stage's own loss (for a distilled student: the distillation
// loss with its teacher inputs) run as a TrainingStep on a probe batch, and memory/ measures it
// (memory::measure_peak_bytes). The samples feed the peak fit that packs batches.
// Mutates process-wide state (peak counters; parameters are initialised from torch's global
// generator): not to be run concurrently with training in the same process.
#pragma once

#include <torch/nn/module.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "headroom/memory/peak_model.hpp"
#include "headroom/memory/peak_probe.hpp"
#include "headroom/store/graph_store.hpp"
#include "headroom/train/step/training_step.hpp"

namespace headroom::train {

struct PeakProbeOptions {
  c10::Device device = c10::Device(c10::kCPU);
  Precision precision = Precision::kFloat32;
  double learning_rate = 1e-3;
  double weight_decay = 1e-4;
  double gradient_clip = 1.0;  // 0: no clipping
};

// What one probe trains: freshly built modules (the model first, then any auxiliary trained
// module) and the stage's loss over them. Destroyed with the probe.
struct ProbeSubject {
  std::vector<std::shared_ptr<torch::nn::Module>> modules;
  BatchLoss loss;
  LossReduction loss_reduction = LossReduction::kPerGraph;
};
// Builds a fresh subject for each probe, so that the probes are independent.
using ProbeSubjectFactory = std::function<ProbeSubject()>;

// The steady-state peak of one TrainingStep of `make()`'s subject on the batch of `ids` (collated
// on the host, moved to the device inside the step): one warm-up step creates Adam's moment
// buffers, then the measured step. An OOM propagates (c10::OutOfMemoryError): a probe is never
// split. Installs the counting CPU allocator.
memory::PeakSample probe_step_peak(const store::GraphStore& store,
                                   std::span<const std::uint32_t> ids,
                                   const ProbeSubjectFactory& make,
                                   const PeakProbeOptions& options = {});

}  // namespace headroom::train
