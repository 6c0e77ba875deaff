// The epoch order from Python (loader/epoch_order.hpp): the permutation headroom's own loaders use,
// so that Python's samplers visit graphs in the order the C++ stages do for the same seed.
#include <torch/torch.h>

#include <fmt/format.h>
#include <nanobind/stl/string.h>

#include <cstdint>
#include <string>

#include "bindings.hpp"
#include "headroom/loader/epoch_order.hpp"
#include "python_tensor.hpp"

namespace nb = nanobind;

namespace headroom::python {
namespace {

loader::OrderStream stream_named(const std::string& name) {
  if (const auto stream = loader::order_stream_named(name)) return *stream;
  throw nb::value_error(fmt::format("unknown epoch-order stream '{}' (graph-batches, node-parts, "
                                    "fusion-split or fusion-epochs)",
                                    name)
                            .c_str());
}

// The permutation of [0, count) for (seed, epoch, stream), as an int64 capsule for
// torch.from_dlpack (int64: what torch indexes with).
nb::object epoch_order(std::uint64_t count, std::uint64_t seed, std::uint64_t epoch,
                       const std::string& stream) {
  const auto which = stream_named(stream);
  at::Tensor order = torch::empty({static_cast<std::int64_t>(count)}, torch::kInt64);
  {
    nb::gil_scoped_release unlocked;
    const auto permutation = loader::epoch_permutation(count, seed, epoch, which);
    auto* out = order.data_ptr<std::int64_t>();
    for (std::size_t i = 0; i < permutation.size(); ++i) out[i] = permutation[i];
  }
  return dlpack_capsule(order);
}

}  // namespace

void bind_order(nb::module_& module) {
  module.def("epoch_order", &epoch_order, nb::arg("count"), nb::arg("seed"), nb::arg("epoch"),
             nb::arg("stream") = "graph-batches");
}

}  // namespace headroom::python
