// headroom's default for LibTorch's CUDA caching allocator: expandable segments, which let a
// segment grow in place instead of leaving a fragmented trail of fixed-size blocks when batch
// sizes vary (packed batches do). The allocator reads its settings from the environment when CUDA
// first allocates, so this must run before any CUDA work, first thing in main. A user's own
// PYTORCH_CUDA_ALLOC_CONF (or its newer name PYTORCH_ALLOC_CONF) wins and is left untouched.
//
// Not thread-safe (it writes the process environment): call it before starting threads.
#pragma once

#include <string>

namespace headroom::memory {

// Sets PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True unless either variable is set; returns
// whether it did.
bool default_to_expandable_segments();

// The settings in effect, for the run log: "PYTORCH_CUDA_ALLOC_CONF=..." (or PYTORCH_ALLOC_CONF),
// or "" when neither is set.
std::string cuda_allocator_settings();

}  // namespace headroom::memory
