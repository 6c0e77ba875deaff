#include "headroom/memory/anonymous_rss.hpp"

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

namespace headroom::memory {

std::int64_t process_anonymous_rss_bytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("RssAnon:", 0) != 0) continue;
    std::istringstream fields(line.substr(8));
    std::int64_t kib = 0;
    std::string unit;
    if (fields >> kib >> unit && unit == "kB") return kib * 1024;
    break;
  }
  throw std::runtime_error("/proc/self/status: no RssAnon line in kB");
}

}  // namespace headroom::memory
