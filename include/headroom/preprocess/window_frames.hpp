// The frames of a test file as a store part keeps them: a shard reads test files before the
// vocabulary exists, and a test window holding an ID outside the vocabulary is a different graph
// (all such IDs share one node), so the assembly rebuilds those windows from these frames.
//
// File format: one 22-byte little-endian record per frame, in file order: timestamp (float64 s),
// CAN ID (u32), DLC (u8), label (u8), payload (8 bytes, zero past the DLC). Every field is kept, so
// a rebuilt window is built from exactly the frames the single-process build reads.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <vector>

#include "headroom/can/can_frame.hpp"
#include "headroom/graph/window_config.hpp"
#include "headroom/util/file_writer.hpp"
#include "headroom/util/mapped_file.hpp"

namespace headroom::preprocess {

inline constexpr std::uint64_t kStoredFrameBytes = 22;

// Appends frames to a new file. Not thread-safe: used by the thread reading the file.
class WindowFrameWriter {
 public:
  // Creates (truncates) `path`; throws std::system_error naming it on failure.
  explicit WindowFrameWriter(std::filesystem::path path);

  void append(std::span<const can::CanFrame> frames);
  // Flushes, fsyncs and closes.
  void finish();
  std::uint64_t frames() const { return frames_; }
  std::uint64_t checksum() const { return file_.checksum(); }  // XXH3-64 of the bytes written

 private:
  util::ChecksummedFileWriter file_;
  std::vector<std::byte> encoded_;
  std::uint64_t frames_ = 0;
};

// A frames file opened for random access by window (memory-mapped). Immutable; thread-safe.
class WindowFrames {
 public:
  // Throws std::runtime_error naming the file when it does not hold exactly `frames` records.
  WindowFrames(const std::filesystem::path& path, std::uint64_t frames);

  std::uint64_t size() const { return frames_; }
  // The frames of window `index` as build_file_graphs cuts them: W frames from index * S, or all
  // of them for a file shorter than W. Throws std::out_of_range past the last window.
  void window(std::uint32_t index, const graph::WindowConfig& config,
              std::vector<can::CanFrame>& out) const;

 private:
  std::shared_ptr<const util::MappedFile> file_;
  std::uint64_t frames_;
};

}  // namespace headroom::preprocess
