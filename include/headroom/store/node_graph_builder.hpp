// Creates a node-graph store atomically, with the windows store's machinery: a lock beside the
// store, a staging directory renamed into place only when complete (util/staged_directory.hpp),
// checksummed array files, the manifest written last. A killed run never leaves something that
// opens; --force replaces only a store (of either kind).
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "headroom/store/node_graph_metadata.hpp"
#include "headroom/util/exclusive_lock.hpp"
#include "headroom/util/file_writer.hpp"
#include "headroom/util/staged_directory.hpp"

namespace headroom::store {

// Not thread-safe: one thread writes the arrays and commits.
class NodeGraphStoreBuilder {
 public:
  // Fails early (std::runtime_error) when `store_path` exists and `overwrite` is false, and even
  // with `overwrite` when it is anything but a graph store or an empty directory. Holds
  // `<store>.headroom.lock` for its lifetime (kFail: throw naming the holder; kWait: wait).
  NodeGraphStoreBuilder(std::filesystem::path store_path, bool overwrite,
                        util::WhenLocked when_locked = util::WhenLocked::kFail);
  ~NodeGraphStoreBuilder();  // removes the staging directory unless committed
  NodeGraphStoreBuilder(const NodeGraphStoreBuilder&) = delete;
  NodeGraphStoreBuilder& operator=(const NodeGraphStoreBuilder&) = delete;

  // The writer of one array (node_graph_arrays names), created on first use; append values of
  // the array's dtype in order.
  util::ChecksummedFileWriter& array(std::string_view name);

  // A scratch file inside the staging directory (`scratch-<name>`), for a builder's spills: on
  // the store's file system rather than a RAM-backed /tmp, and removed with the staging directory
  // if the run fails. Names: letters, digits, '-', '_' and '.'.
  std::filesystem::path scratch_path(std::string_view name) const;

  // Closes every array (each of node_graph_arrays::kSpecs must have been opened), records them
  // in `metadata` (shapes from their sizes), removes the scratch files, writes the manifest last
  // and renames the directory into place.
  void commit(NodeGraphMetadata metadata);

  const std::filesystem::path& staging_directory() const { return staged_->staging(); }

 private:
  std::filesystem::path store_path_;
  std::optional<util::ExclusiveLock> lock_;  // released after the staging directory is gone
  std::unique_ptr<util::StagedDirectory> staged_;
  std::map<std::string, std::unique_ptr<util::ChecksummedFileWriter>, std::less<>> writers_;
  bool overwrite_;
};

// Whether `name` (a file directly in a staging directory) is a builder's scratch file.
bool is_scratch_file_name(std::string_view name);

}  // namespace headroom::store
