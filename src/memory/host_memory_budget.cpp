#include "headroom/memory/host_memory_budget.hpp"

#include <fmt/format.h>

#include <stdexcept>

#include "headroom/util/byte_size.hpp"

namespace headroom::memory {

HostMemoryBudget resolve_host_memory_budget(std::int64_t requested, const HostMemoryLimit& limit) {
  HostMemoryBudget budget;
  budget.limit = limit;
  if (requested > limit.bytes)
    throw std::invalid_argument(fmt::format(
        "--host-memory-budget {} exceeds the host memory limit {} set by {}: the kernel would "
        "kill the run before it reached the budget; ask for at most {}",
        util::format_byte_size(static_cast<double>(requested)),
        util::format_byte_size(static_cast<double>(limit.bytes)), limit.source,
        util::format_byte_size(static_cast<double>(limit.bytes))));
  if (requested > 0) {
    budget.bytes = requested;
    budget.source = "--host-memory-budget";
    return budget;
  }
  budget.bytes =
      static_cast<std::int64_t>(static_cast<double>(limit.bytes) * (1.0 - kHostSafetyMargin));
  budget.source =
      fmt::format("{:.0f}% of the {} limit", 100.0 * (1.0 - kHostSafetyMargin), limit.source);
  return budget;
}

}  // namespace headroom::memory
