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

namespace headroom::store {
class GraphStore;
}

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

// A real store, built once per process from the smallest synthetic dataset (one thread) under
// scratch_directory()/pristine; returns the store's path. The store targets copy it and change
// the copy.
const std::filesystem::path& pristine_store();

// What a consumer does with an open store: the summary `inspect` prints, every graph's arrays and
// the value checks that collation runs on them before tensors are made.
void read_every_graph(const store::GraphStore& graphs);

}  // namespace headroom::fuzz
