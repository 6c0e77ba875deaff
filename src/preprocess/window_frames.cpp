#include "headroom/preprocess/window_frames.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace headroom::preprocess {
namespace {

// Field offsets of a record (packed, no padding: the file's bytes are fully determined).
constexpr std::size_t kTimestampAt = 0;
constexpr std::size_t kIdAt = 8;
constexpr std::size_t kDlcAt = 12;
constexpr std::size_t kLabelAt = 13;
constexpr std::size_t kPayloadAt = 14;
static_assert(kPayloadAt + can::kMaxPayloadBytes == kStoredFrameBytes);

void encode(const can::CanFrame& frame, std::byte* out) {
  std::memcpy(out + kTimestampAt, &frame.timestamp_s, sizeof frame.timestamp_s);
  std::memcpy(out + kIdAt, &frame.id, sizeof frame.id);
  std::memcpy(out + kDlcAt, &frame.dlc, 1);
  std::memcpy(out + kLabelAt, &frame.label, 1);
  std::memcpy(out + kPayloadAt, frame.data.data(), can::kMaxPayloadBytes);
}

can::CanFrame decode(const std::byte* in) {
  can::CanFrame frame;
  std::memcpy(&frame.timestamp_s, in + kTimestampAt, sizeof frame.timestamp_s);
  std::memcpy(&frame.id, in + kIdAt, sizeof frame.id);
  std::memcpy(&frame.dlc, in + kDlcAt, 1);
  std::memcpy(&frame.label, in + kLabelAt, 1);
  std::memcpy(frame.data.data(), in + kPayloadAt, can::kMaxPayloadBytes);
  return frame;
}

}  // namespace

WindowFrameWriter::WindowFrameWriter(std::filesystem::path path)
    : file_(std::move(path), 256 << 10, /*compute_checksum=*/true) {}

void WindowFrameWriter::append(std::span<const can::CanFrame> frames) {
  encoded_.resize(frames.size() * kStoredFrameBytes);
  for (std::size_t i = 0; i < frames.size(); ++i)
    encode(frames[i], encoded_.data() + i * kStoredFrameBytes);
  file_.write(encoded_);
  frames_ += frames.size();
}

void WindowFrameWriter::finish() { file_.close(/*durable=*/true); }

WindowFrames::WindowFrames(const std::filesystem::path& path, std::uint64_t frames)
    : file_(util::MappedFile::open(path)), frames_(frames) {
  if (file_->size() != frames * kStoredFrameBytes)
    throw std::runtime_error(fmt::format("frames file '{}' has {} bytes, {} expected",
                                         path.string(), file_->size(), frames * kStoredFrameBytes));
}

void WindowFrames::window(std::uint32_t index, const graph::WindowConfig& config,
                          std::vector<can::CanFrame>& out) const {
  const std::uint64_t start = std::uint64_t{index} * config.stride;
  if (start >= frames_ || index >= config.windows_for(frames_))
    throw std::out_of_range(
        fmt::format("window {} of '{}' is past its last frame", index, file_->path().string()));
  const std::uint64_t length = std::min<std::uint64_t>(config.window, frames_ - start);
  out.resize(length);
  const std::byte* base = file_->bytes().data() + start * kStoredFrameBytes;
  for (std::uint64_t i = 0; i < length; ++i) out[i] = decode(base + i * kStoredFrameBytes);
}

}  // namespace headroom::preprocess
