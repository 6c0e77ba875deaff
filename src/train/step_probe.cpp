#include "headroom/train/step_probe.hpp"

#include <torch/torch.h>

#include <stdexcept>
#include <string>

#include "headroom/loader/collate.hpp"
#include "headroom/loader/epoch_order.hpp"
#include "headroom/memory/tensor_memory_meter.hpp"
#include "headroom/train/model_family.hpp"
#include "headroom/util/allocation_site.hpp"

namespace headroom::train {

memory::PeakSample probe_step_peak(const store::GraphStore& store,
                                   std::span<const std::uint32_t> ids,
                                   const ProbeSubjectFactory& make,
                                   const PeakProbeOptions& options) {
  memory::install_counting_cpu_allocator();
  // Its own allocation site: a probe batch whose collation runs out of memory is probed smaller,
  // like one whose step does (train/batch_sizing.cpp), and the error can say which it was.
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
  torch::optim::Adam optimizer(
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

ProbeSubjectFactory plain_probe_subject(const memory::ProbeModelConfig& model) {
  return
      [spec = model_spec(model)] { return model_family(spec.family).plain_subject(spec.config); };
}

memory::PeakSample probe_training_peak(const store::GraphStore& store,
                                       const memory::ProbeModelConfig& model,
                                       std::span<const std::uint32_t> ids,
                                       const PeakProbeOptions& options) {
  return probe_step_peak(store, ids, plain_probe_subject(model), options);
}

std::vector<memory::PeakSample> probe_training_peaks(const store::GraphStore& store,
                                                     const memory::ProbeModelConfig& model,
                                                     std::span<const std::int64_t> batch_sizes,
                                                     const PeakProbeOptions& options) {
  const auto train_ids = store.train_ids();
  for (const auto size : batch_sizes)
    if (size < 1 || static_cast<std::uint64_t>(size) > train_ids.size())
      throw std::invalid_argument("probe_training_peaks: batch size " + std::to_string(size) +
                                  " is outside 1.." + std::to_string(train_ids.size()) +
                                  " (the store's training graphs)");
  const auto order = loader::shuffled(train_ids, 0, 0);
  const auto subject = plain_probe_subject(model);
  std::vector<memory::PeakSample> samples;
  samples.reserve(batch_sizes.size());
  for (const auto size : batch_sizes)
    samples.push_back(probe_step_peak(store, std::span(order).first(static_cast<std::size_t>(size)),
                                      subject, options));
  return samples;
}

}  // namespace headroom::train
