#include "store_build_path.hpp"

#include <fmt/format.h>

#include <stdexcept>
#include <system_error>

#include "headroom/util/printable_text.hpp"
#include "headroom/util/staged_directory.hpp"

namespace headroom::store {

std::filesystem::path prepare_store_path(const std::filesystem::path& store_path, bool overwrite) {
  auto path = std::filesystem::absolute(store_path).lexically_normal();
  if (path.filename().empty()) path = path.parent_path();
  std::error_code ec;
  if (std::filesystem::exists(std::filesystem::symlink_status(path, ec)) && !overwrite)
    throw std::runtime_error(fmt::format("store '{}' already exists (use --force to replace it)",
                                         util::printable_path(path)));
  util::create_parent_directories(path.parent_path(), store_path.string());
  return path;
}

std::filesystem::path build_lock_file(const std::filesystem::path& store_path) {
  return store_path.parent_path() / (store_path.filename().string() + ".headroom.lock");
}

}  // namespace headroom::store
