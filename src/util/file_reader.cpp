#include "headroom/util/file_reader.hpp"

#include <fmt/format.h>
#include <stdexcept>

#include "headroom/util/printable_text.hpp"

namespace headroom::util {
namespace {

// The file's text, or nullopt with `*why` (and `*missing`) set.
std::optional<std::string> try_read(const std::filesystem::path& path, std::uint64_t max_bytes,
                                    std::string* why, bool* missing) {
  const auto fd = try_open_regular_for_reading(path, why, missing);
  if (!fd) return std::nullopt;
  return read_whole(fd.get(), path, max_bytes);
}

}  // namespace

std::optional<std::string> read_file_if_readable(const std::filesystem::path& path,
                                                 std::uint64_t max_bytes) {
  std::string why;
  try {
    return try_read(path, max_bytes, &why, nullptr);
  } catch (const std::exception&) {
    return std::nullopt;  // too large, or a read that failed
  }
}

std::string read_file(const std::filesystem::path& path, std::uint64_t max_bytes) {
  std::string why;
  auto text = try_read(path, max_bytes, &why, nullptr);
  if (!text)
    throw std::runtime_error(fmt::format("{}: cannot read: {}", printable_path(path), why));
  return std::move(*text);
}

std::optional<std::string> read_file_if_present(const std::filesystem::path& path,
                                                std::uint64_t max_bytes) {
  std::string why;
  bool missing = false;
  auto text = try_read(path, max_bytes, &why, &missing);
  if (!text && !missing)
    throw std::runtime_error(fmt::format("{}: cannot read: {}", printable_path(path), why));
  return text;
}

}  // namespace headroom::util
