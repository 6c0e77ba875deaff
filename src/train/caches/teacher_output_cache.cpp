#include "headroom/train/caches/teacher_output_cache.hpp"

#include <torch/torch.h>
#include <unistd.h>

#include <fmt/format.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <system_error>

#include "headroom/train/batches/inference_batches.hpp"
#include "headroom/util/bounded_json.hpp"
#include "headroom/util/byte_size.hpp"
#include "headroom/util/file_reader.hpp"
#include "headroom/util/file_writer.hpp"
#include "headroom/util/process_role.hpp"
#include "headroom/util/stale_temporaries.hpp"

namespace headroom::train {
namespace {

constexpr const char* kFormatName = "headroom-teacher-outputs";
constexpr int kFormatVersion = 1;
constexpr std::uint64_t kDataAlignment = 64;

std::filesystem::path sidecar_of(const std::filesystem::path& file) {
  return std::filesystem::path(file).replace_extension(".json");
}

std::string precision_name(Precision precision) {
  switch (precision) {
    case Precision::kFloat32:
      return "32";
    case Precision::kBf16Mixed:
      return "bf16-mixed";
    case Precision::kFp16Mixed:
      return "16-mixed";
  }
  return "?";
}

std::int64_t spec_width(const TeacherOutputSpec& spec) {
  std::int64_t width = 0;
  for (const auto& [name, columns] : spec.outputs) {
    if (columns <= 0)
      throw std::invalid_argument(
          fmt::format("teacher output cache: output '{}' has width {}", name, columns));
    width += columns;
  }
  if (width == 0) throw std::invalid_argument("teacher output cache: no outputs");
  return width;
}

// Byte offset of the float rows: after row_begin[num_graphs + 1] and cached[num_graphs], aligned.
std::uint64_t data_offset_for(std::uint64_t num_graphs) {
  const std::uint64_t header = 8 * (num_graphs + 1) + num_graphs;
  return (header + kDataAlignment - 1) / kDataAlignment * kDataAlignment;
}

// Everything the outputs are a function of. Paths are recorded as given by the run; the teacher's
// bytes and the store's array checksums pin the content itself.
nlohmann::json cache_key(const TeacherCacheSettings& settings, const store::GraphStore& store) {
  const auto teacher = std::filesystem::weakly_canonical(settings.teacher_checkpoint);
  std::string arrays;
  for (const auto& [name, record] : store.metadata().arrays)
    arrays += name + ':' + record.xxh3 + ';';
  nlohmann::json outputs = nlohmann::json::array();
  for (const auto& [name, width] : settings.spec.outputs) outputs.push_back({name, width});
  return {{"format", kFormatName},
          {"version", kFormatVersion},
          {"teacher",
           {{"path", teacher.string()},
            {"bytes", std::filesystem::file_size(teacher)},
            {"xxh3", util::checksum_hex(util::checksum_file(teacher))}}},
          {"store",
           {{"path", std::filesystem::weakly_canonical(store.path()).string()},
            {"num_graphs", store.num_graphs()},
            {"fingerprint", util::checksum_hex(util::checksum_bytes(
                                std::as_bytes(std::span(arrays.data(), arrays.size()))))}}},
          {"rows", settings.spec.rows == TeacherRows::kPerGraph ? "graph" : "node"},
          {"outputs", outputs},
          {"precision", precision_name(settings.precision)},
          {"device", c10::DeviceTypeName(settings.device.type(), /*lower_case=*/true)}};
}

nlohmann::json read_json(const std::filesystem::path& file) {
  // Not blocking on a FIFO, nor reading a device without end: such a key is no key.
  const auto text = util::read_file_if_readable(file);
  if (!text) return nullptr;
  return util::parse_json_or_discarded(*text);
}

// Rows one graph contributes when cached.
std::int64_t rows_of(const TeacherOutputSpec& spec, const store::GraphSizeIndex& sizes,
                     std::uint32_t graph_id) {
  return spec.rows == TeacherRows::kPerGraph ? 1
                                             : static_cast<std::int64_t>(sizes.num_nodes[graph_id]);
}

}  // namespace

TeacherOutputCache TeacherOutputCache::map(const std::filesystem::path& file,
                                           const TeacherOutputSpec& spec, std::uint64_t num_graphs,
                                           std::int64_t num_rows, std::uint64_t data_offset,
                                           double seconds, bool reused) {
  TeacherOutputCache cache;
  cache.mapped_ = util::MappedFile::open(file);
  cache.spec_ = spec;
  cache.width_ = spec_width(spec);
  cache.num_rows_ = num_rows;
  cache.seconds_ = seconds;
  cache.reused_ = reused;
  const auto bytes = cache.mapped_->bytes();
  const std::uint64_t expected =
      data_offset + static_cast<std::uint64_t>(num_rows * cache.width_) * sizeof(float);
  if (bytes.size() != expected || data_offset < data_offset_for(num_graphs))
    throw std::runtime_error(
        fmt::format("{}: {} bytes, layout says {}", file.string(), bytes.size(), expected));
  // The mapping is page-aligned and the offsets are multiples of the element sizes.
  cache.row_begin_ = {reinterpret_cast<const std::int64_t*>(bytes.data()), num_graphs + 1};
  cache.cached_ = {reinterpret_cast<const std::uint8_t*>(bytes.data() + 8 * (num_graphs + 1)),
                   num_graphs};
  cache.rows_ = reinterpret_cast<const float*>(bytes.data() + data_offset);
  cache.cached_graphs_ = static_cast<std::size_t>(
      std::count_if(cache.cached_.begin(), cache.cached_.end(), [](auto c) { return c != 0; }));
  if (cache.row_begin_.front() != 0 || cache.row_begin_.back() != num_rows)
    throw std::runtime_error(
        fmt::format("{}: row index does not match {} rows", file.string(), num_rows));
  return cache;
}

std::optional<TeacherOutputCache> TeacherOutputCache::open(const TeacherCacheSettings& settings,
                                                           const store::GraphStore& store,
                                                           std::span<const std::uint32_t> graph_ids,
                                                           std::string* why_not) {
  auto refuse = [&](std::string reason) -> std::optional<TeacherOutputCache> {
    if (why_not != nullptr) *why_not = std::move(reason);
    return std::nullopt;
  };
  const auto sidecar = read_json(sidecar_of(settings.file));
  if (sidecar.is_null()) return refuse("no cache yet");
  if (sidecar.is_discarded() || !sidecar.is_object()) return refuse("unreadable .json");
  const auto key = cache_key(settings, store);
  if (!sidecar.contains("key") || sidecar["key"] != key) {
    std::string differing;
    for (const auto& [name, value] : key.items())
      if (!sidecar.contains("key") || !sidecar["key"].contains(name) ||
          sidecar["key"][name] != value)
        differing += (differing.empty() ? "" : ", ") + name;
    return refuse("key changed: " + differing);
  }
  std::error_code ec;
  const auto size = std::filesystem::file_size(settings.file, ec);
  try {
    if (ec) return refuse("no .bin");
    if (size != sidecar.at("file_bytes").get<std::uint64_t>())
      return refuse(fmt::format(".bin has {} bytes, expected {}", size,
                                sidecar.at("file_bytes").get<std::uint64_t>()));
    if (util::checksum_hex(util::checksum_file(settings.file)) !=
        sidecar.at("xxh3").get<std::string>())
      return refuse(".bin checksum mismatch");
    auto cache = map(settings.file, settings.spec, store.num_graphs(),
                     sidecar.at("num_rows").get<std::int64_t>(),
                     sidecar.at("data_offset").get<std::uint64_t>(),
                     sidecar.at("build_seconds").get<double>(), /*reused=*/true);
    for (const auto id : graph_ids)
      if (!cache.contains(id)) return refuse(fmt::format("graph {} not cached", id));
    return cache;
  } catch (const nlohmann::json::exception& e) {
    return refuse(fmt::format("malformed .json ({})", e.what()));
  } catch (const std::runtime_error& e) {
    return refuse(e.what());
  }
}

namespace {

// Which graphs the file holds and where each one's rows begin (row_begin has num_graphs + 1
// entries; an uncached graph has no rows).
struct RowLayout {
  std::vector<std::uint8_t> cached;
  std::vector<std::int64_t> row_begin;
};

RowLayout row_layout(const TeacherOutputSpec& spec, const store::GraphStore& store,
                     const std::vector<std::uint32_t>& ids) {
  const std::uint64_t num_graphs = store.num_graphs();
  const auto sizes = store.size_index();
  RowLayout layout;
  layout.cached.assign(num_graphs, 0);
  for (const auto id : ids) layout.cached[id] = 1;
  layout.row_begin.assign(num_graphs + 1, 0);
  for (std::uint64_t g = 0; g < num_graphs; ++g)
    layout.row_begin[g + 1] =
        layout.row_begin[g] +
        (layout.cached[g] != 0 ? rows_of(spec, sizes, static_cast<std::uint32_t>(g)) : 0);
  return layout;
}

// The teacher's outputs of `ids` (ascending), computed batch by batch and appended to `writer`
// in id order, as the row layout says.
void write_outputs(util::ChecksummedFileWriter& writer, const TeacherCacheSettings& settings,
                   const store::GraphStore& store, const std::vector<std::uint32_t>& ids,
                   const TeacherForward& forward) {
  const auto& spec = settings.spec;
  const std::int64_t width = spec_width(spec);
  torch::NoGradGuard no_grad;
  std::size_t next = 0;  // position in `ids` of the next graph the file expects
  for_each_batch(
      store, ids, settings.batch_size, settings.device, [&](const loader::GraphBatch& batch) {
        // The rows must arrive in ascending id order, as the row index says.
        const auto batch_ids = batch.graph_id_list();
        if (next + batch_ids.size() > ids.size() ||
            !std::equal(batch_ids.begin(), batch_ids.end(),
                        ids.begin() + static_cast<std::ptrdiff_t>(next)))
          throw std::logic_error("teacher output cache: batches out of order");
        std::vector<at::Tensor> outputs;
        {
          AutocastScope autocast(settings.precision, settings.device);
          outputs = forward(batch);
        }
        if (outputs.size() != spec.outputs.size())
          throw std::runtime_error(
              fmt::format("teacher output cache: forward gave {} outputs, expected {}",
                          outputs.size(), spec.outputs.size()));
        const std::int64_t rows =
            spec.rows == TeacherRows::kPerGraph ? batch.num_graphs : batch.num_nodes;
        for (std::size_t i = 0; i < outputs.size(); ++i)
          TORCH_CHECK(outputs[i].dim() == 2 && outputs[i].size(0) == rows &&
                          outputs[i].size(1) == spec.outputs[i].second,
                      "teacher output cache: output '", spec.outputs[i].first, "' is ",
                      outputs[i].sizes(), ", expected [", rows, ", ", spec.outputs[i].second, "]");
        for (auto& output : outputs) output = output.to(torch::kCPU, torch::kFloat);
        const auto block = torch::cat(outputs, 1).contiguous();
        // Committed only now: a batch that runs out of memory above is redone in halves.
        writer.write(std::as_bytes(
            std::span(block.data_ptr<float>(), static_cast<std::size_t>(rows * width))));
        next += batch_ids.size();
      });
  if (next != ids.size())
    throw std::logic_error("teacher output cache: not every graph was computed");
}

}  // namespace

TeacherOutputCache TeacherOutputCache::build(const TeacherCacheSettings& settings,
                                             const store::GraphStore& store,
                                             std::span<const std::uint32_t> graph_ids,
                                             const TeacherForward& forward) {
  const auto start = std::chrono::steady_clock::now();
  const auto& spec = settings.spec;
  const std::int64_t width = spec_width(spec);
  const std::uint64_t num_graphs = store.num_graphs();
  std::vector<std::uint32_t> ids(graph_ids.begin(), graph_ids.end());
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  if (!ids.empty() && ids.back() >= num_graphs)
    throw std::out_of_range(fmt::format(
        "teacher output cache: graph id {} out of range ({} graphs)", ids.back(), num_graphs));

  const auto layout = row_layout(spec, store, ids);
  const auto& cached = layout.cached;
  const auto& row_begin = layout.row_begin;
  const std::int64_t num_rows = row_begin.back();
  const std::uint64_t data_offset = data_offset_for(num_graphs);

  // The old key goes first: a build killed at any point leaves no .json that vouches for a .bin.
  const auto sidecar = sidecar_of(settings.file);
  std::filesystem::remove(sidecar);
  util::remove_stale_temporaries(settings.file);
  const auto temporary = util::temporary_path_for(settings.file);
  std::uint64_t checksum = 0;
  std::uint64_t file_bytes = 0;
  try {
    util::ChecksummedFileWriter writer(temporary);
    writer.write_values(std::span<const std::int64_t>(row_begin));
    writer.write_values(std::span<const std::uint8_t>(cached));
    const std::vector<std::byte> padding(data_offset - writer.bytes_written(), std::byte{0});
    writer.write(padding);

    write_outputs(writer, settings, store, ids, forward);
    file_bytes = writer.bytes_written();
    checksum = writer.checksum();
    writer.close();
    std::filesystem::rename(temporary, settings.file);
  } catch (...) {
    std::error_code ignored;
    std::filesystem::remove(temporary, ignored);
    throw;
  }
  util::fsync_directory(settings.file.has_parent_path() ? settings.file.parent_path()
                                                        : std::filesystem::path("."));
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const nlohmann::json json = {{"key", cache_key(settings, store)},
                               {"num_graphs", num_graphs},
                               {"cached_graphs", ids.size()},
                               {"num_rows", num_rows},
                               {"width", width},
                               {"data_offset", data_offset},
                               {"file_bytes", file_bytes},
                               {"xxh3", util::checksum_hex(checksum)},
                               {"build_seconds", seconds}};
  util::write_file_atomically(sidecar, json.dump(2) + "\n");
  return map(settings.file, spec, num_graphs, num_rows, data_offset, seconds, /*reused=*/false);
}

TeacherOutputCache TeacherOutputCache::open_or_build(
    const TeacherCacheSettings& settings, const store::GraphStore& store,
    std::span<const std::uint32_t> graph_ids, const std::function<TeacherForward()>& make_forward) {
  std::string why_not;
  if (auto cache = open(settings, store, graph_ids, &why_not)) return std::move(*cache);
  auto cache = build(settings, store, graph_ids, make_forward());
  cache.rebuild_reason_ = std::move(why_not);
  return cache;
}

bool TeacherOutputCache::contains(std::uint32_t graph_id) const {
  return graph_id < cached_.size() && cached_[graph_id] != 0;
}

std::uint64_t TeacherOutputCache::file_bytes() const { return mapped_ ? mapped_->size() : 0; }

std::vector<at::Tensor> TeacherOutputCache::lookup(const loader::GraphBatch& batch) const {
  // The host copy when the batch has one: reading device ids would synchronise every step.
  const auto& source = batch.host_graph_ids.defined() ? batch.host_graph_ids : batch.graph_ids;
  const auto ids = source.to(torch::kCPU, torch::kLong).contiguous();
  const auto* id = ids.data_ptr<std::int64_t>();
  const auto count = ids.numel();
  std::int64_t total = 0;
  for (std::int64_t i = 0; i < count; ++i) {
    if (id[i] < 0 || !contains(static_cast<std::uint32_t>(id[i])))
      throw std::out_of_range(fmt::format("teacher output cache {}: graph {} was not cached",
                                          mapped_->path().string(), id[i]));
    const auto g = static_cast<std::size_t>(id[i]);
    total += row_begin_[g + 1] - row_begin_[g];
  }
  if (spec_.rows == TeacherRows::kPerNode && total != batch.num_nodes)
    throw std::runtime_error(fmt::format(
        "teacher output cache {}: the batch has {} nodes, the cache {} rows for its graphs (was "
        "the store rebuilt?)",
        mapped_->path().string(), batch.num_nodes, total));

  const auto device = batch.x.device();
  auto options = at::TensorOptions().dtype(at::kFloat);
  // Pinned, so that the copy to the device below is asynchronous.
  if (device.is_cuda()) options = options.pinned_memory(true);
  auto host = at::empty({total, width_}, options);
  auto* out = host.data_ptr<float>();
  const auto row_floats = static_cast<std::size_t>(width_);
  for (std::int64_t i = 0; i < count; ++i) {
    const auto g = static_cast<std::size_t>(id[i]);
    const auto first = static_cast<std::size_t>(row_begin_[g]);
    const auto rows = static_cast<std::size_t>(row_begin_[g + 1] - row_begin_[g]);
    std::memcpy(out, rows_ + first * row_floats, rows * row_floats * sizeof(float));
    out += rows * row_floats;
  }
  const auto block = device.is_cpu() ? host : host.to(device, /*non_blocking=*/true);
  std::vector<at::Tensor> outputs;
  std::int64_t column = 0;
  for (const auto& [name, columns] : spec_.outputs) {
    outputs.push_back(block.narrow(1, column, columns));
    column += columns;
  }
  return outputs;
}

TeacherCacheSettings teacher_cache_settings(const TrainingConfig& config, const RunContext& context,
                                            const RunDirectory& run,
                                            const std::filesystem::path& teacher_checkpoint) {
  TeacherCacheSettings settings;
  settings.file = run.teacher_outputs_file();
  settings.teacher_checkpoint = teacher_checkpoint;
  settings.precision = context.precision;
  settings.device = context.device;
  settings.batch_size = config.optimisation.eval_batch_size;
  return settings;
}

TeacherOutputCache open_teacher_outputs_of_rank0(const TeacherCacheSettings& settings,
                                                 const store::GraphStore& store,
                                                 std::span<const std::uint32_t> graph_ids) {
  const auto& role = util::process_role();
  std::string why_not;
  auto cache = TeacherOutputCache::open(settings, store, graph_ids, &why_not);
  if (!cache)
    throw std::runtime_error(fmt::format(
        "rank {} of {}: cannot use the teacher output cache {} that rank 0 wrote ({}); every rank "
        "must see the same runs directory",
        role.rank, role.world_size, settings.file.string(), why_not));
  fmt::print("rank {} of {}: {}, written by rank 0\n", role.rank, role.world_size,
             cache->summary());
  std::fflush(stdout);
  return std::move(*cache);
}

std::string TeacherOutputCache::summary() const {
  const auto size = util::format_byte_size(static_cast<double>(file_bytes()));
  if (reused_)
    return fmt::format("teacher outputs reused: {} graphs, {} (built in {:.2f} s)", cached_graphs_,
                       size, seconds_);
  return fmt::format("teacher outputs cached: {} graphs, {}, built in {:.2f} s ({})",
                     cached_graphs_, size, seconds_,
                     rebuild_reason_.empty() ? "built" : rebuild_reason_);
}

}  // namespace headroom::train
