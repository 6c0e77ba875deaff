// A geometric store's own arrays (positions, parents, path counts, targets), written by
// GraphDatasetWriter beside the arrays StoreBuilder assembles. The store holds its graphs by group
// (training, then validation, then test graphs) while graphs arrive in any order: group 0's rows
// go straight into the final files, later groups' into scratch files appended in group order at
// finish(). Memory is one write buffer per file, whatever the dataset's size. Not thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "headroom/store/graph_paths.hpp"
#include "headroom/store/store_metadata.hpp"
#include "headroom/util/file_writer.hpp"

namespace headroom::store::detail {

struct GeometryRows {
  std::span<const float> positions;       // nodes x position dimensions
  std::span<const std::int32_t> parents;  // nodes, or empty for a store without parents
  std::array<std::uint32_t, kPathOrders> paths{};
  double target = 0.0;  // written only when the store has a target
};

class GeometryArrays {
 public:
  // Opens the files in `directory` (the staging directory) for the arrays `metadata`'s geometry
  // and target fields ask for, with `groups` groups of graphs.
  GeometryArrays(const std::filesystem::path& directory, const StoreMetadata& metadata,
                 std::size_t groups);

  void append(std::size_t group, const GeometryRows& rows);

  // Appends the later groups' rows, closes every file, deletes the scratch files and returns each
  // array's record for the manifest.
  std::map<std::string, ArrayRecord> finish(std::uint64_t num_graphs, std::uint64_t num_nodes);

 private:
  struct Array {
    std::string name;
    // [0]: the final file, group 0's rows; [g]: group g's scratch file, appended at finish.
    std::vector<std::unique_ptr<util::ChecksummedFileWriter>> groups;
  };
  Array& open(const std::filesystem::path& directory, std::string_view name);

  std::map<std::string, Array, std::less<>> arrays_;
  std::uint32_t position_dimensions_;
  std::size_t groups_;
};

}  // namespace headroom::store::detail
