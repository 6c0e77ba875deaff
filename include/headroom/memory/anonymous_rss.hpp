// The process's anonymous resident memory (RssAnon of /proc/self/status): the pages the kernel
// cannot reclaim by dropping them, so the part of the RSS a cgroup's OOM killer acts on. The
// RSS of tensor_memory_meter.hpp also counts the store's mapped pages, which are page cache.
#pragma once

#include <cstdint>

namespace headroom::memory {

// Bytes. Throws std::runtime_error naming /proc/self/status when it has no RssAnon line.
std::int64_t process_anonymous_rss_bytes();

}  // namespace headroom::memory
