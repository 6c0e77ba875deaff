#include "headroom/store/node_graph_builder.hpp"

#include <fmt/format.h>

#include <stdexcept>
#include <system_error>

#include "headroom/store/store_ownership.hpp"
#include "headroom/util/printable_text.hpp"
#include "store_build_path.hpp"

namespace headroom::store {
namespace {

constexpr std::string_view kScratchPrefix = "scratch-";

}  // namespace

bool is_scratch_file_name(std::string_view name) {
  if (name.size() <= kScratchPrefix.size() ||
      name.substr(0, kScratchPrefix.size()) != kScratchPrefix)
    return false;
  for (const char c : name.substr(kScratchPrefix.size())) {
    const bool allowed = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                         (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
    if (!allowed) return false;
  }
  return true;
}

NodeGraphStoreBuilder::NodeGraphStoreBuilder(std::filesystem::path store_path, bool overwrite,
                                             util::WhenLocked when_locked)
    : store_path_(prepare_store_path(store_path, overwrite)), overwrite_(overwrite) {
  lock_.emplace(build_lock_file(store_path_), "store " + store_path_.string() + " (being built)",
                when_locked);
  staged_ = std::make_unique<util::StagedDirectory>(store_path_, overwrite_, graph_store_kind());
}

NodeGraphStoreBuilder::~NodeGraphStoreBuilder() {
  writers_.clear();  // close the files before the staging directory is removed
}

util::ChecksummedFileWriter& NodeGraphStoreBuilder::array(std::string_view name) {
  const auto it = writers_.find(name);
  if (it != writers_.end()) return *it->second;
  const auto& spec = node_graph_arrays::spec_of(name);
  auto writer = std::make_unique<util::ChecksummedFileWriter>(
      staging_directory() / (std::string(spec.name) + std::string(spec.file_suffix)));
  return *writers_.emplace(std::string(name), std::move(writer)).first->second;
}

std::filesystem::path NodeGraphStoreBuilder::scratch_path(std::string_view name) const {
  const std::string file = std::string(kScratchPrefix) + std::string(name);
  if (!is_scratch_file_name(file))
    throw std::invalid_argument("scratch file name '" + util::printable(name) + "' is not allowed");
  return staging_directory() / file;
}

void NodeGraphStoreBuilder::commit(NodeGraphMetadata metadata) {
  metadata.arrays.clear();
  for (const auto& spec : node_graph_arrays::kSpecs) {
    const auto it = writers_.find(spec.name);
    if (it == writers_.end())
      throw std::logic_error(
          fmt::format("node-graph store: array '{}' was not written", spec.name));
    util::ChecksummedFileWriter& writer = *it->second;
    writer.close();
    ArrayRecord record;
    record.file = writer.path().filename().string();
    record.dtype = spec.dtype;
    record.shape = {writer.bytes_written() / spec.element_bytes};
    record.bytes = writer.bytes_written();
    record.xxh3 = util::checksum_hex(writer.checksum());
    metadata.arrays.emplace(std::string(spec.name), std::move(record));
  }
  for (const auto& entry : std::filesystem::directory_iterator(staging_directory())) {
    if (is_scratch_file_name(entry.path().filename().string()))
      std::filesystem::remove(entry.path());
  }
  util::write_file_atomically(staging_directory() / kManifestFileName,
                              render_node_graph_manifest(metadata));
  std::error_code ec;
  if (!overwrite_ && std::filesystem::exists(std::filesystem::symlink_status(store_path_, ec))) {
    throw std::runtime_error(fmt::format("store '{}' already exists (use --force to replace it)",
                                         util::printable_path(store_path_)));
  }
  staged_->commit();
}

}  // namespace headroom::store
