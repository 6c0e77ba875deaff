#include "headroom/baseline/store_baseline.hpp"

#include <algorithm>
#include <exception>
#include <map>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>

#include "headroom/can/frame_reader.hpp"
#include "headroom/can/log_format.hpp"
#include "headroom/eval/evaluation_report.hpp"
#include "headroom/eval/label_free_threshold.hpp"

namespace headroom::baseline {
namespace {

// Every frame of store file `file`, read as preprocessing read it: with the store's --format and
// column mapping, bad rows skipped only where the store skipped some.
std::vector<can::CanFrame> read_store_file(const store::StoreMetadata& metadata,
                                           std::uint32_t file) {
  const auto& record = metadata.files.at(file);
  const auto path = std::filesystem::path(metadata.dataset_root) / record.path;
  std::vector<can::CanFrame> frames;
  try {
    can::ReaderOptions options;
    options.format = metadata.source_format;
    options.mapping = metadata.source_mapping;
    if (record.skipped_rows > 0) options.on_bad_row = can::BadRowPolicy::kSkip;
    const auto reader = can::open_frame_reader(path, options);
    std::vector<can::CanFrame> block(1 << 14);
    while (const auto n = reader->read(block))
      frames.insert(frames.end(), block.begin(), block.begin() + n);
  } catch (const std::exception& e) {
    throw BaselineUnavailable(fmt::format("{}: cannot be read back ({})", path.string(), e.what()));
  }
  if (frames.size() != record.rows)
    throw BaselineUnavailable(fmt::format(
        "{}: reads {} frames where the store read {}: the file changed since preprocessing",
        path.string(), frames.size(), record.rows));
  return frames;
}

// The frames of window `window` of a file of `frames` frames: [begin, end).
std::pair<std::size_t, std::size_t> window_frames(const store::StoreMetadata& metadata,
                                                  std::uint32_t window, std::size_t frames) {
  const std::size_t begin = std::min<std::size_t>(std::size_t{window} * metadata.stride, frames);
  return {begin, std::min<std::size_t>(begin + metadata.window, frames)};
}

// Learns from each training file's normal frames outside the validation windows; a validation
// window splits the file into separate runs (no inter-arrival or transition across it).
TrafficProfileBuilder learn_profile(const store::GraphStore& store) {
  const auto& metadata = store.metadata();
  const auto index = store.size_index();
  std::vector<std::uint32_t> validation(store.validation_ids().begin(),
                                        store.validation_ids().end());
  std::sort(validation.begin(), validation.end());
  TrafficProfileBuilder builder;
  for (std::uint32_t file = 0; file < metadata.files.size(); ++file) {
    const auto& record = metadata.files[file];
    if (metadata.splits.at(record.split).role != "train" || record.graphs == 0) continue;
    const auto frames = read_store_file(metadata, file);
    std::vector<bool> held_out(frames.size(), false);
    for (std::uint64_t g = record.first_graph; g < record.first_graph + record.graphs; ++g) {
      if (!std::binary_search(validation.begin(), validation.end(), g)) continue;
      const auto [begin, end] = window_frames(metadata, index.window[g], frames.size());
      std::fill(held_out.begin() + static_cast<std::ptrdiff_t>(begin),
                held_out.begin() + static_cast<std::ptrdiff_t>(end), true);
    }
    std::vector<can::CanFrame> run;
    for (std::size_t i = 0; i <= frames.size(); ++i) {
      if (i == frames.size() || held_out[i]) {
        builder.learn_run(run);
        run.clear();
      } else if (frames[i].label == 0) {
        run.push_back(frames[i]);
      }
    }
  }
  return builder;
}

// The score of every window of store file `file` (its `frames`) under `profile`, by window number.
std::vector<float> file_window_scores(const store::StoreMetadata& metadata, std::uint32_t file,
                                      std::span<const can::CanFrame> frames,
                                      const TrafficProfile& profile) {
  const auto surprise = frame_surprise(profile, frames);
  std::vector<float> scores(metadata.files.at(file).graphs);
  for (std::size_t w = 0; w < scores.size(); ++w) {
    const auto [begin, end] = window_frames(metadata, static_cast<std::uint32_t>(w), frames.size());
    scores[w] = static_cast<float>(window_score(profile, frames.subspan(begin, end - begin),
                                                std::span(surprise).subspan(begin, end - begin)));
  }
  return scores;
}

// The training profile extended with the vehicle's own windows `windows` (window numbers,
// ascending), labels unread, when the training profile does not know the vehicle (the median of
// those windows' `training_scores`, by window number, holds a frame of an unknown ID); nullopt
// when it does. Only the windows whose training score lies inside the robust fence of those scores
// are learnt, each run of consecutive such windows as one run of traffic. Minutes of a vehicle
// teach its IDs and their periods, not which ID follows which: the profile does not judge
// transitions.
std::optional<TrafficProfile> learn_vehicle(const store::StoreMetadata& metadata,
                                            std::span<const can::CanFrame> frames,
                                            std::span<const float> training_scores,
                                            std::span<const std::uint32_t> windows,
                                            const TrafficProfileBuilder& training,
                                            double fence_mads) {
  if (windows.empty()) return std::nullopt;
  std::vector<float> scores;
  for (const auto w : windows) scores.push_back(training_scores[w]);
  // A vehicle the training profile knows (most of its windows without an unknown ID: score < 1)
  // keeps the training profile: learning its first windows would only learn attacks among them.
  const auto fenced = eval::robust_fence(scores, fence_mads);
  if (fenced.median < 1.0) return std::nullopt;
  TrafficProfileBuilder builder = training;
  std::size_t run_begin = 0;  // first frame of the current run of accepted windows
  std::size_t run_end = 0;    // one past its last frame; run_end == run_begin: no run
  for (std::size_t i = 0; i <= windows.size(); ++i) {
    const bool accepted = i < windows.size() && static_cast<double>(scores[i]) <= fenced.fence;
    const bool continues = accepted && i > 0 && windows[i] == windows[i - 1] + 1;
    if (!continues && run_end > run_begin) {
      builder.learn_run(frames.subspan(run_begin, run_end - run_begin));
      run_begin = run_end = 0;
    }
    if (!accepted) continue;
    const auto [begin, end] = window_frames(metadata, windows[i], frames.size());
    if (run_end == run_begin) run_begin = begin;
    run_end = end;
  }
  return builder.build(/*judge_transitions=*/false);
}

// The window numbers of the first `learned` graphs of each file in `windows` (by file, as
// eval::label_free_adaptation_windows and eval::vehicle_calibration_windows give them).
std::map<std::uint32_t, std::vector<std::uint32_t>> learned_window_numbers(
    const std::map<std::uint32_t, std::vector<std::uint32_t>>& windows, std::size_t learned,
    const store::GraphSizeIndex& index) {
  std::map<std::uint32_t, std::vector<std::uint32_t>> numbers;
  for (const auto& [file, ids] : windows) {
    auto& file_numbers = numbers[file];
    for (std::size_t i = 0; i < std::min(learned, ids.size()); ++i)
      file_numbers.push_back(index.window[ids[i]]);
  }
  return numbers;
}

// `plain` (a file's window scores under the training profile) or, where the vehicle of `file` is
// learnt from its `learned` windows (learn_vehicle), its scores under that profile.
std::vector<float> adapted_file_scores(
    const store::StoreMetadata& metadata, std::uint32_t file, std::span<const can::CanFrame> frames,
    const std::vector<float>& plain,
    const std::map<std::uint32_t, std::vector<std::uint32_t>>& learned,
    const TrafficProfileBuilder& training, double fence_mads) {
  const auto it = learned.find(file);
  if (it == learned.end()) return plain;
  const auto vehicle = learn_vehicle(metadata, frames, plain, it->second, training, fence_mads);
  return vehicle ? file_window_scores(metadata, file, frames, *vehicle) : plain;
}

void require_learned_within(std::size_t learned, std::size_t windows, const char* what) {
  if (learned > windows)
    throw std::invalid_argument(
        fmt::format("baseline: learns from {} of {} {} windows", learned, windows, what));
}

}  // namespace

StoreBaseline score_store_windows(const store::GraphStore& store,
                                  std::span<const std::uint32_t> graph_ids,
                                  const BaselineAdaptation& adaptation) {
  require_learned_within(adaptation.learned_windows, adaptation.adaptation_windows, "adaptation");
  require_learned_within(adaptation.calibration_learned_windows, adaptation.calibration_windows,
                         "calibration");
  const auto& metadata = store.metadata();
  // A store of imported graph tables or a text corpus has no CAN windows to read back.
  if (metadata.window == 0 || metadata.dataset_root.empty())
    throw BaselineUnavailable(fmt::format(
        "{}: not built from CAN logs ({}): the baseline reads CAN traffic", store.path().string(),
        metadata.created_by.empty() ? "no source" : metadata.created_by));
  const auto index = store.size_index();
  const TrafficProfileBuilder training = learn_profile(store);
  StoreBaseline result{training.build(), std::vector<float>(graph_ids.size(), 0.0F), {}, {}};
  std::map<std::uint32_t, std::vector<std::size_t>> positions_of_file;
  for (std::size_t i = 0; i < graph_ids.size(); ++i) {
    if (graph_ids[i] >= store.num_graphs())
      throw std::out_of_range(fmt::format("baseline: graph id {} is not in the store ({} graphs)",
                                          graph_ids[i], store.num_graphs()));
    positions_of_file[index.file[graph_ids[i]]].push_back(i);
  }
  const auto label_free_learned = learned_window_numbers(
      eval::label_free_adaptation_windows(store, graph_ids, adaptation.adaptation_windows),
      adaptation.learned_windows, index);
  const auto calibration_learned = learned_window_numbers(
      eval::vehicle_calibration_windows(store, graph_ids, adaptation.calibration_windows),
      adaptation.calibration_learned_windows, index);
  if (adaptation.adaptation_windows > 0) result.label_free_scores.resize(graph_ids.size());
  if (adaptation.calibration_windows > 0) result.calibration_scores.resize(graph_ids.size());
  for (const auto& [file, positions] : positions_of_file) {
    const auto frames = read_store_file(metadata, file);
    const auto plain = file_window_scores(metadata, file, frames, result.profile);
    const auto window_of = [&](std::size_t i) { return index.window[graph_ids[i]]; };
    for (const auto i : positions) result.scores[i] = plain[window_of(i)];
    if (adaptation.adaptation_windows > 0) {
      const auto scores = adapted_file_scores(metadata, file, frames, plain, label_free_learned,
                                              training, adaptation.fence_mads);
      for (const auto i : positions) result.label_free_scores[i] = scores[window_of(i)];
    }
    if (adaptation.calibration_windows > 0) {
      const auto scores = adapted_file_scores(metadata, file, frames, plain, calibration_learned,
                                              training, adaptation.fence_mads);
      for (const auto i : positions) result.calibration_scores[i] = scores[window_of(i)];
    }
  }
  return result;
}

}  // namespace headroom::baseline
