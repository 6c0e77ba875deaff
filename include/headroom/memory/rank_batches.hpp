// One epoch's batches dealt to the ranks of a data-parallel run. A pure function: every rank
// computes the same plan from the same packed epoch (memory/batch_packer.hpp) and takes its own
// share, so no plan is sent between ranks. Thread-safe.
#pragma once

#include <cstdint>
#include <vector>

namespace headroom::memory {

// Step k of rank r trains batches[k * world_size + r], so the batches of one step are world_size
// consecutive batches of the single-process plan, and averaging the ranks' gradients (weighted by
// their batches) gives the step of one process training on their union. When the count is not a
// multiple of world_size, the batch with the most graphs (the last of equals) is cut into two
// halves until it is: every rank takes the same number of steps, every graph is trained exactly
// once, and a half of a batch packed within its byte budget is within it (the cost model's
// coefficients being non-negative). world_size 1 returns `batches` unchanged.
// Throws std::invalid_argument when rank is outside 0 .. world_size - 1, or when the epoch has
// graphs but fewer than world_size (some rank would have none).
std::vector<std::vector<std::uint32_t>> batches_of_rank(
    std::vector<std::vector<std::uint32_t>> batches, int rank, int world_size);

}  // namespace headroom::memory
