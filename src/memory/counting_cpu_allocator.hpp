// Internal to src/memory: the part of the counting CPU allocator that tensor_memory_meter.cpp
// needs but the public header does not expose.
#pragma once

namespace headroom::memory::detail {

// CPU half of reset_peak(): peak_bytes := current_bytes.
void reset_cpu_tensor_peak();

}  // namespace headroom::memory::detail
