// The teacher output cache for distillation: a frozen teacher's outputs computed once per graph
// into one memory-mapped file, so that student training holds no teacher at all. Rows are per
// graph (GAT logits) or per node (VGAE latent and reconstruction, in the store's node order).
//
// On disk (in the student's run directory, next to each other):
//   teacher_outputs.bin   int64 row_begin[num_graphs + 1]  rows of graph g: row_begin[g] ..
//                                                          row_begin[g + 1] (empty if not cached)
//                         uint8 cached[num_graphs]         1 = computed
//                         (zero padding to a multiple of 64 bytes)
//                         float32 rows[num_rows][width]    the outputs side by side in each row,
//                                                          in spec order
//   teacher_outputs.json  the key (teacher checkpoint path, size and XXH3; store path, graph count
//                         and content fingerprint; row kind, outputs and widths; precision;
//                         device type), the layout, and the size and XXH3 of the .bin.
// Both are written atomically (temporary file, fsync, rename), the .json last: a cache whose
// .json is missing, whose key differs, or whose .bin does not match the recorded size and checksum
// is rebuilt, never used.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "headroom/loader/graph_batch.hpp"
#include "headroom/store/graph_store.hpp"
#include "headroom/train/config/training_config.hpp"
#include "headroom/train/context/run_context.hpp"
#include "headroom/train/context/run_directory.hpp"
#include "headroom/train/step/precision.hpp"
#include "headroom/util/mapped_file.hpp"

namespace headroom::train {

enum class TeacherRows { kPerGraph, kPerNode };

// What one row holds: named float32 blocks, e.g. {"logits", 2} per graph, or {"z", latent} and
// {"reconstruction", in_features - 1} per node.
struct TeacherOutputSpec {
  TeacherRows rows = TeacherRows::kPerGraph;
  std::vector<std::pair<std::string, std::int64_t>> outputs;  // name, width (columns)
};

// The teacher's outputs for one batch, one tensor per spec output, [rows of the batch, width], rows
// in batch order (any dtype and device). Called under NoGradGuard and the settings' autocast; the
// teacher must already be in eval mode (load_*_checkpoint returns it so).
using TeacherForward = std::function<std::vector<at::Tensor>(const loader::GraphBatch&)>;

struct TeacherCacheSettings {
  std::filesystem::path file;                // the .bin; the .json is file with extension .json
  std::filesystem::path teacher_checkpoint;  // the teacher's best.pt (its bytes are keyed)
  TeacherOutputSpec spec;
  Precision precision = Precision::kFloat32;  // autocast of the teacher forward (keyed)
  c10::Device device = c10::kCPU;             // where the teacher runs (its type is keyed)
  std::int64_t batch_size = 4096;             // graphs per teacher forward while building
};

// Immutable once made; lookup() is thread-safe. Keeps its mapping alive itself; the store it was
// made for is only read while opening or building.
class TeacherOutputCache {
 public:
  // The cache at settings.file when its key matches, its .bin is intact and it covers every id in
  // `graph_ids`; otherwise std::nullopt with the reason in *why_not (when given). Reads the whole
  // .bin once to verify its checksum (and the teacher checkpoint, to key it).
  static std::optional<TeacherOutputCache> open(const TeacherCacheSettings& settings,
                                                const store::GraphStore& store,
                                                std::span<const std::uint32_t> graph_ids,
                                                std::string* why_not = nullptr);
  // Runs `forward` over `graph_ids` (batched by settings.batch_size with for_each_batch, so a batch
  // that runs out of memory is redone in halves) and writes the cache. Memory: one batch of
  // outputs at a time (they are streamed to the file).
  static TeacherOutputCache build(const TeacherCacheSettings& settings,
                                  const store::GraphStore& store,
                                  std::span<const std::uint32_t> graph_ids,
                                  const TeacherForward& forward);
  // open(), else build() with the forward that `make_forward` returns (called only then: it may
  // move the teacher to the device). The returned forward is destroyed before this returns.
  static TeacherOutputCache open_or_build(const TeacherCacheSettings& settings,
                                          const store::GraphStore& store,
                                          std::span<const std::uint32_t> graph_ids,
                                          const std::function<TeacherForward()>& make_forward);

  // The cached outputs of `batch`'s graphs, one float32 tensor [rows, width] per spec output, on
  // batch.x's device, rows in batch order (per node: each graph's nodes in store order, graphs in
  // batch order, as loader::collate lays them out). The ids are read from the batch's host copy
  // (host_graph_ids), so a lookup does not wait for the device; the rows go over in one
  // asynchronous copy from pinned memory. Throws std::out_of_range naming the graph when one was
  // not cached, and std::runtime_error when the batch's node count does not match the cached rows.
  std::vector<at::Tensor> lookup(const loader::GraphBatch& batch) const;

  bool contains(std::uint32_t graph_id) const;
  std::size_t cached_graphs() const { return cached_graphs_; }
  std::int64_t num_rows() const { return num_rows_; }
  std::int64_t width() const { return width_; }
  const TeacherOutputSpec& spec() const { return spec_; }
  std::uint64_t file_bytes() const;
  bool reused() const { return reused_; }  // opened, not built by this process
  // Why open() did not take the file this process then rebuilt (empty when reused).
  const std::string& rebuild_reason() const { return rebuild_reason_; }
  // One line for the run log: "teacher outputs cached: N graphs, SIZE, built in S s (reason)" or
  // "teacher outputs reused: N graphs, SIZE (built in S s)".
  std::string summary() const;

 private:
  TeacherOutputCache() = default;
  static TeacherOutputCache map(const std::filesystem::path& file, const TeacherOutputSpec& spec,
                                std::uint64_t num_graphs, std::int64_t num_rows,
                                std::uint64_t data_offset, double seconds, bool reused);

  std::shared_ptr<const util::MappedFile> mapped_;
  TeacherOutputSpec spec_;
  std::span<const std::int64_t> row_begin_;
  std::span<const std::uint8_t> cached_;
  const float* rows_ = nullptr;
  std::size_t cached_graphs_ = 0;
  std::int64_t num_rows_ = 0;
  std::int64_t width_ = 0;
  double seconds_ = 0;
  bool reused_ = false;
  std::string rebuild_reason_;
};

// A stage's settings: run.teacher_outputs_file(), the eval batch size, and `context`'s device and
// precision; the stage fills in the spec.
TeacherCacheSettings teacher_cache_settings(const TrainingConfig& config, const RunContext& context,
                                            const RunDirectory& run,
                                            const std::filesystem::path& teacher_checkpoint);

// The cache that rank 0 of a data-parallel run has just opened or built at settings.file
// (Collectives::run_on_rank0), opened by another rank, which says so on its console (the run log
// is rank 0's). Throws std::runtime_error naming this rank, the file and why it cannot be used
// here (most likely a runs directory that is not on a file system every rank sees).
TeacherOutputCache open_teacher_outputs_of_rank0(const TeacherCacheSettings& settings,
                                                 const store::GraphStore& store,
                                                 std::span<const std::uint32_t> graph_ids);

}  // namespace headroom::train
