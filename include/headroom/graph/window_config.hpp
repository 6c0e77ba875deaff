// How a file's frame sequence is cut into windows.
#pragma once

#include <cstdint>

namespace headroom::graph {

struct WindowConfig {
  std::uint32_t window = 100;  // frames per window (W), >= 2
  std::uint32_t stride = 100;  // frames between window starts (S), >= 1

  // Throws std::invalid_argument when window < 2 or stride < 1.
  void validate() const;

  // Windows cut from a file of `frames` frames: max(1, (L - W) // S + 1) with floor division, as
  // upstream; 0 for an empty file. A file shorter than W gives one window of all its frames.
  std::uint64_t windows_for(std::uint64_t frames) const;
};

}  // namespace headroom::graph
