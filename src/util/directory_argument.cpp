#include "headroom/util/directory_argument.hpp"

#include <sys/stat.h>

#include <fmt/format.h>
#include <stdexcept>

#include "headroom/util/printable_text.hpp"
#include "headroom/util/regular_file.hpp"

namespace headroom::util {

void require_directory_or_absent(const std::filesystem::path& directory, std::string_view what) {
  for (auto at = directory; !at.empty(); at = at.parent_path()) {
    struct stat info {};
    if (::stat(at.c_str(), &info) == 0) {
      if (S_ISDIR(info.st_mode)) return;  // the rest is below a directory: created as needed
      throw std::runtime_error(fmt::format("{}: '{}' is {}, not a directory", what,
                                           printable_path(at), file_type_name(info.st_mode)));
    }
    if (at == at.parent_path()) return;  // the root, unreadable: creating will say why
  }
}

}  // namespace headroom::util
