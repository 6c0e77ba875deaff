#include "fuzz_support.hpp"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "headroom/preprocess/preprocessor.hpp"
#include "headroom/store/graph_store.hpp"
#include "headroom/store/graph_values.hpp"
#include "headroom/store/store_summary.hpp"
#include "headroom/synthetic/synthetic_traffic.hpp"
#include "headroom/util/input_error.hpp"

namespace headroom::fuzz {
namespace {

void remove_scratch_directory() {
  std::error_code ignored;
  std::filesystem::remove_all(scratch_directory(), ignored);
}

void read_with(const std::filesystem::path& file, const can::ReaderOptions& options) {
  try {
    auto reader = can::open_frame_reader(file, options);
    std::vector<can::CanFrame> frames(7);
    while (reader->read(frames) != 0) {
    }
  } catch (const util::InputError& e) {
    // A reader's error must say which file it is about; anything else would be a finding.
    if (e.file() != file) std::abort();
  }
}

}  // namespace

const std::filesystem::path& scratch_directory() {
  static const std::filesystem::path directory = [] {
    auto path =
        std::filesystem::temp_directory_path() / ("headroom-fuzz-" + std::to_string(::getpid()));
    std::filesystem::create_directories(path);
    std::atexit(remove_scratch_directory);
    return path;
  }();
  return directory;
}

std::filesystem::path write_scratch_file(std::string_view name,
                                         std::span<const std::uint8_t> bytes) {
  const auto path = scratch_directory() / name;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) std::abort();  // the harness itself failed, not the code under test
  return path;
}

void read_every_frame(const std::filesystem::path& file, can::LogFormat format) {
  for (const auto policy : {can::BadRowPolicy::kError, can::BadRowPolicy::kSkip}) {
    for (const std::size_t block_bytes : {std::size_t{16}, std::size_t{4096}}) {
      can::ReaderOptions options;
      options.format = format;
      options.on_bad_row = policy;
      options.block_bytes = block_bytes;
      options.parquet_batch_rows = 5;
      read_with(file, options);
    }
  }
}

const std::filesystem::path& pristine_store() {
  static const std::filesystem::path path = [] {
    const auto root = scratch_directory() / "pristine";
    synthetic::SyntheticDatasetOptions data;
    data.total_frames = synthetic::kMinSyntheticFrames;
    synthetic::generate_synthetic_dataset(root / "data", data, /*overwrite=*/true);
    preprocess::PreprocessOptions options;
    options.threads = 1;
    options.progress = 0;
    preprocess::preprocess_dataset(root / "data", root / "store", options);
    return root / "store";
  }();
  return path;
}

void read_every_graph(const store::GraphStore& graphs) {
  (void)store::render_summary(store::summarize_store(graphs));
  double sum = 0;
  for (std::size_t id = 0; id < graphs.num_graphs(); ++id) {
    const store::GraphView graph = graphs.graph(id);
    store::check_graph_values(graphs, id, graph);
    for (float value : graph.node_features) sum += value;
    for (std::uint32_t value : graph.node_can_ids) sum += value;
    for (std::int32_t value : graph.edge_index) sum += value;
    for (float value : graph.edge_features) sum += value;
  }
  volatile double sink = sum;
  (void)sink;
}

}  // namespace headroom::fuzz
