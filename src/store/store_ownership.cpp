#include "headroom/store/store_ownership.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <system_error>

#include "headroom/store/graph_segment_writer.hpp"
#include "headroom/store/manifest_seal.hpp"
#include "headroom/store/node_graph_builder.hpp"
#include "headroom/store/node_graph_metadata.hpp"
#include "headroom/store/store_arrays.hpp"
#include "headroom/store/store_metadata.hpp"
#include "headroom/util/file_reader.hpp"

namespace headroom::store {
namespace {

namespace fs = std::filesystem;

template <typename Specs>
bool is_file_of(const Specs& specs, const std::string& name) {
  return std::any_of(specs.begin(), specs.end(), [&](const auto& s) {
    return name == std::string(s.name) + std::string(s.file_suffix);
  });
}

bool is_store_file(const fs::path& relative, bool is_directory) {
  return !is_directory &&
         (relative == kManifestFileName || is_file_of(arrays::kArraySpecs, relative.string()));
}

bool is_node_graph_store_file(const fs::path& relative, bool is_directory) {
  return !is_directory && (relative == kManifestFileName ||
                           is_file_of(node_graph_arrays::kSpecs, relative.string()));
}

bool starts_with(const std::string& text, std::string_view prefix) {
  return text.compare(0, prefix.size(), prefix) == 0;
}

// `segment-<6 or more digits><segment suffix>`: the builder's scratch segments.
bool is_segment_file(const std::string& name) {
  constexpr std::string_view prefix = "segment-";
  if (!starts_with(name, prefix)) return false;
  const auto digits_end = name.find_first_not_of("0123456789", prefix.size());
  if (digits_end == std::string::npos || digits_end < prefix.size() + 6) return false;
  const std::string suffix = name.substr(digits_end);
  return std::find(kSegmentFileSuffixes.begin(), kSegmentFileSuffixes.end(), suffix) !=
         kSegmentFileSuffixes.end();
}

bool is_staged_store_entry(const fs::path& relative, bool is_directory) {
  if (is_store_file(relative, is_directory)) return true;
  const std::string name = relative.string();
  // The manifest goes in through write_file_atomically's temporary.
  if (is_node_graph_store_file(relative, is_directory)) return true;
  return !is_directory && relative.parent_path().empty() &&
         (is_segment_file(name) || is_scratch_file_name(name) ||
          starts_with(name, std::string(kManifestFileName) + ".tmp-headroom-"));
}

std::string why_not_a_store(const fs::path& directory) {
  const fs::path manifest = directory / kManifestFileName;
  std::error_code ec;
  if (!fs::is_regular_file(fs::symlink_status(manifest, ec)))
    return fmt::format("it has no {} file", kManifestFileName);
  bool node_graph = false;
  try {
    const std::string text = util::read_file(manifest);
    node_graph = manifest_kind(unseal_manifest(text, kManifestFileName)) == kNodeGraphStoreKind;
    if (node_graph)
      node_graph_metadata_from(unseal_manifest(text, kManifestFileName), kManifestFileName);
    else
      parse_manifest(text, kManifestFileName);
  } catch (const std::exception& e) {
    return e.what();  // "manifest.json: not a headroom graph store manifest", ...
  }
  return util::describe_foreign_entries(
      util::foreign_entries(directory, node_graph ? is_node_graph_store_file : is_store_file));
}

}  // namespace

util::DirectoryKind graph_store_kind() {
  return {"graph store", why_not_a_store, is_staged_store_entry};
}

}  // namespace headroom::store
