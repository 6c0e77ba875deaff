#include "headroom/store/store_source.hpp"

#include <fmt/format.h>

#include <system_error>

#include "headroom/store/manifest_seal.hpp"
#include "headroom/store/node_graph_metadata.hpp"
#include "headroom/store/store_error.hpp"
#include "headroom/store/store_metadata.hpp"
#include "headroom/util/file_reader.hpp"
#include "headroom/util/printable_text.hpp"

namespace headroom::store {

std::optional<StoreSource> store_source_at(const std::filesystem::path& path) {
  const auto manifest = path / kManifestFileName;
  std::error_code ec;
  if (!std::filesystem::exists(std::filesystem::symlink_status(manifest, ec))) return std::nullopt;
  const std::string where = util::printable_path(manifest);
  try {
    const std::string text = util::read_file(manifest);
    const auto json = unseal_manifest(text, where);
    if (manifest_kind(json) == kNodeGraphStoreKind) {
      const auto metadata = node_graph_metadata_from(json, where);
      return StoreSource{kNodeGraphStoreKind, metadata.source, metadata.created_by};
    }
    const auto metadata = parse_manifest(text, where);
    return StoreSource{kWindowsStoreKind, metadata.dataset_root, metadata.created_by};
  } catch (const StoreError&) {
    throw;
  } catch (const std::exception& e) {
    throw StoreError(
        fmt::format("{}: not a store manifest headroom can read: {}", where, e.what()));
  }
}

std::string describe_store_kind(const StoreSource& source) {
  if (source.kind == kNodeGraphStoreKind) return "a text corpus's node graph";
  return source.source.empty() ? "an imported graph store" : "a CAN windows store";
}

}  // namespace headroom::store
