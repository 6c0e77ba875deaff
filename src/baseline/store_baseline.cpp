#include "headroom/baseline/store_baseline.hpp"

#include <algorithm>
#include <exception>
#include <map>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>

#include "headroom/can/frame_reader.hpp"
#include "headroom/can/log_format.hpp"
#include "headroom/eval/label_free_threshold.hpp"

namespace headroom::baseline {
namespace {

// Every frame of store file `file`, read as preprocessing read it (bad rows skipped only where
// the store skipped some).
std::vector<can::CanFrame> read_store_file(const store::StoreMetadata& metadata,
                                           std::uint32_t file) {
  const auto& record = metadata.files.at(file);
  const auto path = std::filesystem::path(metadata.dataset_root) / record.path;
  std::vector<can::CanFrame> frames;
  try {
    can::ReaderOptions options;
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

// The training profile extended with the vehicle's own first `learned_windows` windows, labels
// unread, when the training profile does not know the vehicle (the median of those windows'
// `training_scores` holds a frame of an unknown ID); nullopt when it does. Only the windows whose
// training score lies inside the robust fence of those scores are learnt, each run of consecutive
// such windows as one run of traffic. Minutes of a vehicle teach its IDs and their periods, not
// which ID follows which: the profile does not judge transitions.
std::optional<TrafficProfile> learn_vehicle(const store::StoreMetadata& metadata,
                                            std::span<const can::CanFrame> frames,
                                            std::span<const float> training_scores,
                                            const TrafficProfileBuilder& training,
                                            const BaselineAdaptation& adaptation) {
  const auto scores =
      training_scores.first(std::min(adaptation.learned_windows, training_scores.size()));
  if (scores.empty()) return std::nullopt;
  // A vehicle the training profile knows (most of its windows without an unknown ID: score < 1)
  // keeps the training profile: learning its first windows would only learn attacks among them.
  const auto fenced = eval::robust_fence(scores, adaptation.fence_mads);
  if (fenced.median < 1.0) return std::nullopt;
  TrafficProfileBuilder builder = training;
  std::size_t run_begin = 0;  // first frame of the current run of accepted windows
  std::size_t run_end = 0;    // one past its last frame; run_end == run_begin: no run
  for (std::size_t w = 0; w <= scores.size(); ++w) {
    if (w < scores.size() && static_cast<double>(scores[w]) <= fenced.fence) {
      const auto [begin, end] =
          window_frames(metadata, static_cast<std::uint32_t>(w), frames.size());
      if (run_end == run_begin) run_begin = begin;
      run_end = end;
      continue;
    }
    if (run_end > run_begin) builder.learn_run(frames.subspan(run_begin, run_end - run_begin));
    run_begin = run_end = 0;
  }
  return builder.build(/*judge_transitions=*/false);
}

// Whether test file `file` is adapted: more windows than the adaptation takes, as
// eval::label_free_adaptation_windows decides.
bool adapts(const store::StoreMetadata& metadata, std::uint32_t file,
            const BaselineAdaptation& adaptation) {
  const auto& record = metadata.files.at(file);
  return adaptation.adaptation_windows > 0 && metadata.splits.at(record.split).role == "test" &&
         record.graphs > adaptation.adaptation_windows;
}

}  // namespace

StoreBaseline score_store_windows(const store::GraphStore& store,
                                  std::span<const std::uint32_t> graph_ids,
                                  const BaselineAdaptation& adaptation) {
  if (adaptation.learned_windows > adaptation.adaptation_windows)
    throw std::invalid_argument(fmt::format("baseline: learns from {} of {} adaptation windows",
                                            adaptation.learned_windows,
                                            adaptation.adaptation_windows));
  const auto& metadata = store.metadata();
  // A store of imported graph tables or a text corpus has no CAN windows to read back.
  if (metadata.window == 0 || metadata.dataset_root.empty())
    throw BaselineUnavailable(fmt::format(
        "{}: not built from CAN logs ({}): the baseline reads CAN traffic", store.path().string(),
        metadata.created_by.empty() ? "no source" : metadata.created_by));
  const auto index = store.size_index();
  const TrafficProfileBuilder training = learn_profile(store);
  StoreBaseline result{training.build(), std::vector<float>(graph_ids.size(), 0.0F), {}};
  std::map<std::uint32_t, std::vector<std::size_t>> positions_of_file;
  for (std::size_t i = 0; i < graph_ids.size(); ++i) {
    if (graph_ids[i] >= store.num_graphs())
      throw std::out_of_range(fmt::format("baseline: graph id {} is not in the store ({} graphs)",
                                          graph_ids[i], store.num_graphs()));
    positions_of_file[index.file[graph_ids[i]]].push_back(i);
  }
  if (adaptation.adaptation_windows > 0) result.label_free_scores.resize(graph_ids.size());
  for (const auto& [file, positions] : positions_of_file) {
    const auto frames = read_store_file(metadata, file);
    const auto plain = file_window_scores(metadata, file, frames, result.profile);
    for (const auto i : positions) result.scores[i] = plain[index.window[graph_ids[i]]];
    if (adaptation.adaptation_windows == 0) continue;
    const auto vehicle = adapts(metadata, file, adaptation)
                             ? learn_vehicle(metadata, frames, plain, training, adaptation)
                             : std::nullopt;
    const auto adapted =
        vehicle ? file_window_scores(metadata, file, frames, *vehicle) : std::vector<float>{};
    const auto& label_free = vehicle ? adapted : plain;
    for (const auto i : positions)
      result.label_free_scores[i] = label_free[index.window[graph_ids[i]]];
  }
  return result;
}

}  // namespace headroom::baseline
