// Shared by the libFuzzer targets: each input is written to a file (the readers and the store
// open paths, not buffers), and the exceptions that a target's contract allows on bad input are
// the only ones caught: any other exception, crash or sanitizer report is a finding.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string_view>

#include "headroom/can/log_format.hpp"

namespace headroom::fuzz {

// A directory of this process's own under the system temp directory, created on first use and
// removed at exit. Not thread-safe (libFuzzer runs one input at a time per process).
const std::filesystem::path& scratch_directory();

// Writes `bytes` to scratch_directory()/`name` (replacing it) and returns the path.
std::filesystem::path write_scratch_file(std::string_view name,
                                         std::span<const std::uint8_t> bytes);

// Opens `file` as `format` and reads every frame, once under each bad-row policy and with a tiny
// block size (so rows straddle buffer refills) as well as a page-sized one. InputError, the
// readers' documented error for bad input, is expected and swallowed; it must name the file.
void read_every_frame(const std::filesystem::path& file, can::LogFormat format);

}  // namespace headroom::fuzz
