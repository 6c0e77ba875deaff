// ProcessGroupGloo's header includes Gloo's headers, which the torch wheel does not ship (its Gloo
// is compiled into libtorch_cpu); Debian's libgloo-dev provides them. Only declarations are used
// from them: the Gloo objects are created inside libtorch_cpu (Options::create_default, the
// constructor), and ProcessGroupGloo holds them behind pointers, so the header's Gloo version
// does not change any layout this file relies on.
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>

#include "c10d_backends.hpp"

namespace headroom::distributed::detail {

c10::intrusive_ptr<c10d::Backend> make_gloo_backend(const c10::intrusive_ptr<c10d::Store>& store,
                                                    int rank, int world_size,
                                                    std::chrono::milliseconds timeout) {
  auto options = c10d::ProcessGroupGloo::Options::create_default(timeout);
  // One thread: headroom runs one collective at a time.
  options->threads = 1;
  return c10::make_intrusive<c10d::ProcessGroupGloo>(store, rank, world_size, options);
}

}  // namespace headroom::distributed::detail
