#include "headroom/graph/window_config.hpp"

#include <stdexcept>
#include <string>

namespace headroom::graph {

void WindowConfig::validate() const {
  if (window < 2)
    throw std::invalid_argument("window must be at least 2 frames, got " + std::to_string(window));
  if (stride < 1) throw std::invalid_argument("stride must be at least 1 frame");
}

std::uint64_t WindowConfig::windows_for(std::uint64_t frames) const {
  if (frames == 0) return 0;
  if (frames < window) return 1;
  return (frames - window) / stride + 1;
}

}  // namespace headroom::graph
