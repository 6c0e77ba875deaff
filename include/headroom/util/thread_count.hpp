// How many threads a --threads value starts. More threads than cores add nothing but memory and
// switching; far more (--threads 100000) spend minutes and gigabytes starting them before any
// work is done. So a request above the cores this process may run on is capped, and said so.
// Thread-safe (the affinity is read on each call; the note is one write).
#pragma once

#include <ostream>
#include <string_view>

namespace headroom::util {

// The CPUs this process may run on (its affinity mask, which taskset, cgroups' cpusets and SLURM
// narrow), at least 1; std::thread::hardware_concurrency() where the mask cannot be read.
unsigned usable_cores();

// `requested` threads (0: "every core", kept as 0) capped at usable_cores(). When capped, a
// warning naming `flag`, the request and the cap goes to `warnings`.
unsigned capped_thread_count(unsigned requested, std::string_view flag, std::ostream& warnings);

}  // namespace headroom::util
