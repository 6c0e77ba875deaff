#include "geometry_arrays.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <system_error>
#include <vector>

#include "headroom/store/store_arrays.hpp"
#include "headroom/util/printable_text.hpp"

namespace headroom::store::detail {
namespace {

// Copies `from` (a closed scratch file) to the end of `to` through a fixed buffer.
void append_file(const std::filesystem::path& from, util::ChecksummedFileWriter& to) {
  std::FILE* file = std::fopen(from.c_str(), "rb");
  if (file == nullptr)
    throw std::system_error(errno, std::generic_category(),
                            fmt::format("cannot open '{}'", util::printable_path(from)));
  std::vector<std::byte> buffer(1 << 20);
  std::size_t read = 0;
  while ((read = std::fread(buffer.data(), 1, buffer.size(), file)) > 0)
    to.write(std::span<const std::byte>(buffer.data(), read));
  const bool failed = std::ferror(file) != 0;
  std::fclose(file);
  if (failed)
    throw std::system_error(EIO, std::generic_category(),
                            fmt::format("cannot read '{}'", util::printable_path(from)));
}

std::vector<std::uint64_t> shape_of(std::string_view name, std::uint64_t num_graphs,
                                    std::uint64_t num_nodes, std::uint32_t dimensions) {
  if (name == arrays::kNodePositions) return {num_nodes, dimensions};
  if (name == arrays::kNodeParent) return {num_nodes};
  if (name == arrays::kGraphNumPaths) return {num_graphs, kPathOrders};
  return {num_graphs};  // kGraphTarget
}

}  // namespace

GeometryArrays::GeometryArrays(const std::filesystem::path& directory,
                               const StoreMetadata& metadata, std::size_t groups)
    : position_dimensions_(metadata.position_dimensions), groups_(groups) {
  if (metadata.position_dimensions > 0) {
    open(directory, arrays::kNodePositions);
    open(directory, arrays::kGraphNumPaths);
  }
  if (metadata.has_parents) open(directory, arrays::kNodeParent);
  if (!metadata.target_name.empty()) open(directory, arrays::kGraphTarget);
}

GeometryArrays::Array& GeometryArrays::open(const std::filesystem::path& directory,
                                            std::string_view name) {
  const arrays::ArraySpec& spec = arrays::spec_of(name);
  Array array{std::string(name), {}};
  array.groups.push_back(std::make_unique<util::ChecksummedFileWriter>(
      directory / (std::string(spec.name) + std::string(spec.file_suffix))));
  // Builders' scratch names (node_graph_builder.hpp), so that a killed run's staging directory is
  // still recognised as headroom's and removed.
  for (std::size_t group = 1; group < groups_; ++group)
    array.groups.push_back(std::make_unique<util::ChecksummedFileWriter>(
        directory / fmt::format("scratch-group{}-{}", group, name), 1 << 20, false));
  return arrays_.emplace(array.name, std::move(array)).first->second;
}

void GeometryArrays::append(std::size_t group, const GeometryRows& rows) {
  const auto writer = [&](std::string_view name) -> util::ChecksummedFileWriter* {
    const auto it = arrays_.find(name);
    return it == arrays_.end() ? nullptr : it->second.groups.at(group).get();
  };
  if (auto* positions = writer(arrays::kNodePositions)) positions->write_values(rows.positions);
  if (auto* paths = writer(arrays::kGraphNumPaths))
    paths->write_values(std::span<const std::uint32_t>(rows.paths));
  if (auto* parents = writer(arrays::kNodeParent)) parents->write_values(rows.parents);
  if (auto* target = writer(arrays::kGraphTarget))
    target->write_values(std::span<const double>(&rows.target, 1));
}

std::map<std::string, ArrayRecord> GeometryArrays::finish(std::uint64_t num_graphs,
                                                          std::uint64_t num_nodes) {
  std::map<std::string, ArrayRecord> records;
  for (auto& [name, array] : arrays_) {
    util::ChecksummedFileWriter& final_file = *array.groups.front();
    for (std::size_t group = 1; group < array.groups.size(); ++group) {
      array.groups[group]->close(false);
      append_file(array.groups[group]->path(), final_file);
      std::filesystem::remove(array.groups[group]->path());
    }
    final_file.close();
    const arrays::ArraySpec& spec = arrays::spec_of(name);
    ArrayRecord record;
    record.file = final_file.path().filename().string();
    record.dtype = spec.dtype;
    record.shape = shape_of(name, num_graphs, num_nodes, position_dimensions_);
    record.bytes = final_file.bytes_written();
    record.xxh3 = util::checksum_hex(final_file.checksum());
    records.emplace(name, std::move(record));
  }
  return records;
}

}  // namespace headroom::store::detail
