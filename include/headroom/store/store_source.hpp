// What a store was built from, read from its manifest: the kind of store and the source directory.
// `headroom run` rebuilds its own store every run and must not replace one that something else
// built (another dataset, another corpus, another kind); this is what it compares.
// Stateless: thread-safe.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace headroom::store {

struct StoreSource {
  std::string kind;    // manifest_seal.hpp's kWindowsStoreKind or kNodeGraphStoreKind
  std::string source;  // the dataset or corpus directory; empty for imported graph tables
  std::string created_by;
};

// nullopt when nothing is at `path` or it holds no manifest.json. Throws StoreError naming the
// manifest when there is one that is not a valid store manifest (damaged, or not headroom's):
// such a directory is nobody's to replace without being asked.
std::optional<StoreSource> store_source_at(const std::filesystem::path& path);

// "a CAN windows store", "a text corpus's node graph", "an imported graph store": for messages.
std::string describe_store_kind(const StoreSource& source);

}  // namespace headroom::store
