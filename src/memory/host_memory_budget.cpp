#include "headroom/memory/host_memory_budget.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <vector>

#include "headroom/util/byte_size.hpp"

namespace headroom::memory {

bool limit_shared_by_the_node(const HostLimitSource& source) {
  return !source.name.starts_with("RLIMIT_");
}

HostMemoryBudget resolve_host_memory_budget(std::int64_t requested, const HostMemoryLimit& limit,
                                            int ranks_on_node) {
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
  // This rank's limit: the smallest of its share of each limit the node's ranks share and of its
  // own per-process limits (the first of equal ones, as the detector picks).
  const int ranks = std::max(1, ranks_on_node);
  HostLimitSource smallest{limit.source, limit.bytes};
  bool shared = false;
  if (ranks > 1) {
    const auto sources =
        limit.limits.empty() ? std::vector<HostLimitSource>{smallest} : limit.limits;
    smallest.bytes = std::numeric_limits<std::int64_t>::max();
    for (const auto& source : sources) {
      const bool divided = limit_shared_by_the_node(source);
      const auto bytes = divided ? source.bytes / ranks : source.bytes;
      if (bytes < smallest.bytes) {
        smallest = {source.name, bytes};
        shared = divided;
      }
    }
  }
  budget.bytes =
      static_cast<std::int64_t>(static_cast<double>(smallest.bytes) * (1.0 - kHostSafetyMargin));
  budget.source =
      fmt::format("{:.0f}% of the {} limit{}", 100.0 * (1.0 - kHostSafetyMargin), smallest.name,
                  shared ? fmt::format(", shared by {} ranks on this node", ranks) : "");
  return budget;
}

}  // namespace headroom::memory
