// Whole small files (manifests, JSON records, reports' inputs) read into memory in one call.
// Large arrays are memory-mapped instead (mapped_file.hpp). Stateless and thread-safe.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace headroom::util {

// The file's bytes, unchanged (binary mode); nullopt when it cannot be opened (it does not exist,
// is a directory, or is not readable).
std::optional<std::string> read_file_if_readable(const std::filesystem::path& path);

// The same, but a file that cannot be read is a std::runtime_error naming it (escaped:
// printable_text.hpp).
std::string read_file(const std::filesystem::path& path);

}  // namespace headroom::util
