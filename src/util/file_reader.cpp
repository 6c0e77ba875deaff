#include "headroom/util/file_reader.hpp"

#include <fstream>
#include <sstream>
#include <stdexcept>

#include "headroom/util/printable_text.hpp"

namespace headroom::util {

std::optional<std::string> read_file_if_readable(const std::filesystem::path& path) {
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return std::nullopt;
  return std::move(text).str();
}

std::string read_file(const std::filesystem::path& path) {
  auto text = read_file_if_readable(path);
  if (!text) throw std::runtime_error(printable_path(path) + ": cannot read");
  return std::move(*text);
}

}  // namespace headroom::util
