#include "headroom/baseline/store_baseline.hpp"

#include <algorithm>
#include <exception>
#include <map>

#include <fmt/format.h>

#include "headroom/can/frame_reader.hpp"
#include "headroom/can/log_format.hpp"

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
TrafficProfile learn_profile(const store::GraphStore& store) {
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
  return builder.build();
}

}  // namespace

StoreBaseline score_store_windows(const store::GraphStore& store,
                                  std::span<const std::uint32_t> graph_ids) {
  const auto& metadata = store.metadata();
  const auto index = store.size_index();
  StoreBaseline result{learn_profile(store), std::vector<float>(graph_ids.size(), 0.0F)};
  std::map<std::uint32_t, std::vector<std::size_t>> positions_of_file;
  for (std::size_t i = 0; i < graph_ids.size(); ++i) {
    if (graph_ids[i] >= store.num_graphs())
      throw std::out_of_range(fmt::format("baseline: graph id {} is not in the store ({} graphs)",
                                          graph_ids[i], store.num_graphs()));
    positions_of_file[index.file[graph_ids[i]]].push_back(i);
  }
  for (const auto& [file, positions] : positions_of_file) {
    const auto frames = read_store_file(metadata, file);
    const auto surprise = frame_surprise(result.profile, frames);
    for (const auto i : positions) {
      const auto [begin, end] = window_frames(metadata, index.window[graph_ids[i]], frames.size());
      double sum = 0;
      for (std::size_t f = begin; f < end; ++f) sum += surprise[f];
      result.scores[i] =
          end > begin ? static_cast<float>(sum / static_cast<double>(end - begin)) : 0.0F;
    }
  }
  return result;
}

}  // namespace headroom::baseline
