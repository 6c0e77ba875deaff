// Whole small files (manifests, JSON records, reports' inputs) read into memory in one call.
// Large arrays are memory-mapped instead (mapped_file.hpp). Stateless and thread-safe.
//
// Only a regular file is read (links followed), and only up to a bound (regular_file.hpp): a FIFO
// at the path would block the read forever and a device such as /dev/zero would never end it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "headroom/util/regular_file.hpp"

namespace headroom::util {

// The file's bytes, unchanged (binary mode); nullopt when it cannot be read: nothing is there, it
// is a directory, a FIFO, a device or another file that is not a regular one, it is not readable,
// or it is larger than `max_bytes`.
std::optional<std::string> read_file_if_readable(const std::filesystem::path& path,
                                                 std::uint64_t max_bytes = kDefaultMaxReadBytes);

// The same, but a file that cannot be read is a std::runtime_error naming it (escaped:
// printable_text.hpp) and why ("a FIFO (named pipe), not a regular file", its size and the bound).
std::string read_file(const std::filesystem::path& path,
                      std::uint64_t max_bytes = kDefaultMaxReadBytes);

// The same, but nullopt when nothing is at the path (a broken link included); anything else that
// cannot be read throws as read_file does. For files a directory may or may not hold.
std::optional<std::string> read_file_if_present(const std::filesystem::path& path,
                                                std::uint64_t max_bytes = kDefaultMaxReadBytes);

}  // namespace headroom::util
