#include "headroom/train/families/plain_probe.hpp"

#include <stdexcept>
#include <string>

#include "headroom/loader/epoch_order.hpp"
#include "headroom/train/families/model_family.hpp"

namespace headroom::train {

ProbeSubjectFactory plain_probe_subject(const ModelSpec& model) {
  return [model] { return model_family(model.family).plain_subject(model.config); };
}

memory::PeakSample probe_training_peak(const store::GraphStore& store, const ModelSpec& model,
                                       std::span<const std::uint32_t> ids,
                                       const PeakProbeOptions& options) {
  return probe_step_peak(store, ids, plain_probe_subject(model), options);
}

std::vector<memory::PeakSample> probe_training_peaks(const store::GraphStore& store,
                                                     const ModelSpec& model,
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
