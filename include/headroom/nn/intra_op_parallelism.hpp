// Whether this area's CPU kernels really run on several threads. at::parallel_for is a header
// template whose `#pragma omp parallel` is compiled in the calling file, so a file built without
// OpenMP runs every "parallel" loop on one thread, silently (the nn area is built with it; see
// src/CMakeLists.txt). This is the check that keeps it so.
#pragma once

namespace headroom::nn {

// Runs one at::parallel_for over as many items as torch's intra-op threads
// (torch::get_num_threads()) from a file built like the nn area's kernels, and returns how many
// distinct threads ran an item: that thread count when the build is right, 1 when OpenMP is
// missing. Call it outside a parallel region. Thread-safe.
int intra_op_threads_reached();

}  // namespace headroom::nn
