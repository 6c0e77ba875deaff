// What every store builder does with the path it is given before it takes the build lock.
#pragma once

#include <filesystem>

namespace headroom::store {

// `store_path` made absolute and normal (a trailing slash dropped), its parent directory created.
// Throws std::runtime_error when something exists there and `overwrite` (--force) is not set;
// what --force may replace is decided later, by the staged directory (util/staged_directory.hpp).
std::filesystem::path prepare_store_path(const std::filesystem::path& store_path, bool overwrite);

// The build lock's file beside the store: `<store>.headroom.lock`.
std::filesystem::path build_lock_file(const std::filesystem::path& store_path);

}  // namespace headroom::store
