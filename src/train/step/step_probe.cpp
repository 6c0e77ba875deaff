#include "headroom/train/step/step_probe.hpp"

#include <torch/torch.h>

#include <stdexcept>
#include <string>

#include "headroom/loader/collate.hpp"
#include "headroom/memory/tensor_memory_meter.hpp"
#include "headroom/train/step/row_blocked_adam.hpp"
#include "headroom/util/allocation_site.hpp"

namespace headroom::train {

memory::PeakSample probe_step_peak(const store::GraphStore& store,
                                   std::span<const std::uint32_t> ids,
                                   const ProbeSubjectFactory& make,
                                   const PeakProbeOptions& options) {
  memory::install_counting_cpu_allocator();
  // Its own allocation site: a probe batch whose collation runs out of memory is probed smaller,
  // like one whose step does (train/batches/batch_sizing.cpp), and the error can say which it was.
  const auto batch = [&] {
    const util::AllocationSite site("probe-collate");
    return loader::collate(store, ids, loader::CollateOptions{});
  }();

  ProbeSubject subject = make();
  std::vector<at::Tensor> parameters;
  for (const auto& module : subject.modules) {
    module->to(options.device);
    module->train();
    for (auto& p : module->parameters()) parameters.push_back(p);
  }
  RowBlockedAdam optimizer(
      parameters,
      torch::optim::AdamOptions(options.learning_rate).weight_decay(options.weight_decay));
  StepSettings settings;
  settings.device = options.device;
  settings.precision = options.precision;
  settings.gradient_clip = options.gradient_clip;
  settings.loss_reduction = subject.loss_reduction;
  settings.split_on_oom = false;
  TrainingStep step(store, parameters, optimizer, subject.loss, settings);

  const auto peak = memory::measure_peak_bytes(
      options.device,
      [&] {
        step.run(batch);
        // The previous step's gradients are freed at the start of the next one in training, so
        // they are not part of the steady-state baseline.
        optimizer.zero_grad(/*set_to_none=*/true);
      },
      [&] { step.run(batch); });

  memory::PeakSample sample;
  sample.nodes = static_cast<std::uint64_t>(batch.num_nodes);
  sample.edges = static_cast<std::uint64_t>(batch.num_edges);
  sample.graphs = static_cast<std::uint64_t>(batch.num_graphs);
  sample.peak_bytes = static_cast<double>(peak);
  return sample;
}

}  // namespace headroom::train
