#include "headroom/baseline/store_baseline.hpp"

#include <algorithm>
#include <exception>
#include <map>
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

// The window scores of `positions` (indices into graph_ids, all of one file of `frames`) under
// `profile`, into `scores`.
void score_windows(const store::GraphStore& store, std::span<const std::uint32_t> graph_ids,
                   std::span<const std::size_t> positions, std::span<const can::CanFrame> frames,
                   const TrafficProfile& profile, std::vector<float>& scores) {
  const auto surprise = frame_surprise(profile, frames);
  const auto index = store.size_index();
  for (const auto i : positions) {
    const auto [begin, end] =
        window_frames(store.metadata(), index.window[graph_ids[i]], frames.size());
    scores[i] = static_cast<float>(window_score(profile, frames.subspan(begin, end - begin),
                                                std::span(surprise).subspan(begin, end - begin)));
  }
}

// The vehicle's own first `learned_windows` windows, labels unread, into `builder`, when the
// training profile does not know the vehicle (the median window holds a frame of an unknown ID):
// those windows whose score under the training profile lies inside the robust fence of those
// scores, each run of consecutive such windows learnt as one run of traffic. Returns whether it
// learnt.
bool learn_vehicle(const store::StoreMetadata& metadata, std::span<const can::CanFrame> frames,
                   const TrafficProfile& training, const BaselineAdaptation& adaptation,
                   TrafficProfileBuilder& builder) {
  const std::size_t file_windows = frames.size() <= metadata.window
                                       ? 1
                                       : (frames.size() - metadata.window) / metadata.stride + 1;
  const std::size_t windows = std::min(adaptation.learned_windows, file_windows);
  if (windows == 0) return false;
  const auto surprise = frame_surprise(training, frames);
  std::vector<float> scores(windows);
  for (std::size_t w = 0; w < windows; ++w) {
    const auto [begin, end] = window_frames(metadata, static_cast<std::uint32_t>(w), frames.size());
    scores[w] = static_cast<float>(window_score(training, frames.subspan(begin, end - begin),
                                                std::span(surprise).subspan(begin, end - begin)));
  }
  // A vehicle the training profile knows (most of its windows without an unknown ID: score < 1)
  // keeps the training profile: learning its first windows would only learn attacks among them.
  const auto fenced = eval::robust_fence(scores, adaptation.fence_mads);
  if (fenced.median < 1.0) return false;
  const double fence = fenced.fence;
  std::size_t run_begin = 0;  // first frame of the current run of accepted windows
  std::size_t run_end = 0;    // one past its last frame; run_end == run_begin: no run
  for (std::size_t w = 0; w <= windows; ++w) {
    if (w < windows && static_cast<double>(scores[w]) <= fence) {
      const auto [begin, end] =
          window_frames(metadata, static_cast<std::uint32_t>(w), frames.size());
      if (run_end == run_begin) run_begin = begin;
      run_end = end;
      continue;
    }
    if (run_end > run_begin) builder.learn_run(frames.subspan(run_begin, run_end - run_begin));
    run_begin = run_end = 0;
  }
  return true;
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
    score_windows(store, graph_ids, positions, frames, result.profile, result.scores);
    if (adaptation.adaptation_windows == 0) continue;
    if (!adapts(metadata, file, adaptation)) {
      for (const auto i : positions) result.label_free_scores[i] = result.scores[i];
      continue;
    }
    TrafficProfileBuilder extended = training;
    const bool learnt = learn_vehicle(metadata, frames, result.profile, adaptation, extended);
    // Minutes of a vehicle teach its IDs and their periods, not its transitions.
    score_windows(store, graph_ids, positions, frames,
                  extended.build(/*judge_transitions=*/!learnt), result.label_free_scores);
  }
  return result;
}

}  // namespace headroom::baseline
