#include "headroom/util/thread_count.hpp"

#include <sched.h>

#include <algorithm>
#include <thread>

#include <fmt/format.h>

namespace headroom::util {

unsigned usable_cores() {
  cpu_set_t mask;
  CPU_ZERO(&mask);
  if (sched_getaffinity(0, sizeof(mask), &mask) == 0 && CPU_COUNT(&mask) > 0)
    return static_cast<unsigned>(CPU_COUNT(&mask));
  return std::max(1U, std::thread::hardware_concurrency());
}

unsigned capped_thread_count(unsigned requested, std::string_view flag, std::ostream& warnings) {
  const unsigned cores = usable_cores();
  if (requested <= cores) return requested;
  warnings << fmt::format(
      "warning: {} {} is more threads than the {} cores this process may run on: using {}\n", flag,
      requested, cores, cores);
  warnings.flush();
  return cores;
}

}  // namespace headroom::util
