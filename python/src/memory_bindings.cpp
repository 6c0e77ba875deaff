// The memory machinery from Python: the counting CPU allocator (peak tensor bytes of whatever runs
// in this process, PyTorch code included), the linear peak fit, and the byte-budget packer over a
// store's size index.
#include <torch/torch.h>

#include <fmt/format.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "bindings.hpp"
#include "headroom/memory/batch_packer.hpp"
#include "headroom/memory/peak_model.hpp"
#include "headroom/memory/tensor_memory_meter.hpp"
#include "headroom/util/byte_size.hpp"
#include "python_store.hpp"

namespace nb = nanobind;

namespace headroom::python {
namespace {

using CostTuple = std::tuple<double, double, double, double>;  // fixed, per node, edge, graph
using SampleTuple = std::tuple<std::uint64_t, std::uint64_t, std::uint64_t, double>;
using GraphIds = nb::ndarray<const std::int64_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

nb::dict cpu_tensor_memory() {
  const auto memory = memory::cpu_tensor_memory();
  nb::dict out;
  out["current_bytes"] = memory.current_bytes;
  out["peak_bytes"] = memory.peak_bytes;
  out["allocations"] = memory.allocations;
  out["refusals"] = memory.refusals;
  out["cached_bytes"] = memory.cached_bytes;
  out["installed"] = memory::counting_cpu_allocator_installed();
  return out;
}

nb::dict fit_peak(const std::vector<SampleTuple>& samples) {
  std::vector<memory::PeakSample> peaks;
  peaks.reserve(samples.size());
  for (const auto& [nodes, edges, graphs, peak] : samples)
    peaks.push_back({nodes, edges, graphs, peak});
  const auto fit = memory::fit_peak(peaks);
  nb::dict out;
  out["fixed_bytes"] = fit.fixed_bytes;
  out["bytes_per_node"] = fit.bytes_per_node;
  out["bytes_per_edge"] = fit.bytes_per_edge;
  out["bytes_per_graph"] = fit.bytes_per_graph;
  out["max_relative_error"] = fit.max_relative_error;
  out["samples"] = fit.samples;
  return out;
}

// The batches of one epoch: `ordered_ids` (the caller's shuffled order) packed under `budget`
// bytes by `cost`, over the store's size index.
std::vector<std::vector<std::uint32_t>> pack_by_bytes(const PythonStore& store,
                                                      const GraphIds& ordered_ids,
                                                      const CostTuple& cost, double budget,
                                                      std::size_t max_graphs) {
  const auto graphs = store.size();
  std::vector<std::uint32_t> ids(ordered_ids.shape(0));
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const auto id = ordered_ids(i);
    if (id < 0 || static_cast<std::size_t>(id) >= graphs)
      throw nb::index_error(
          fmt::format("graph id {} (position {}) is outside the store ({} graphs)", id, i, graphs)
              .c_str());
    ids[i] = static_cast<std::uint32_t>(id);
  }
  const auto& [fixed, per_node, per_edge, per_graph] = cost;
  const auto index = store.store().size_index();
  nb::gil_scoped_release unlocked;
  return memory::pack_by_bytes(ids, index.num_nodes, index.num_edges,
                               {fixed, per_node, per_edge, per_graph}, budget, max_graphs)
      .batches;
}

}  // namespace

void bind_memory(nb::module_& module) {
  nb::exception<memory::OversizeGraphError>(module, "OversizeGraphError", PyExc_ValueError);
  module.def("install_counting_allocator", &memory::install_counting_cpu_allocator);
  module.def("cpu_tensor_memory", &cpu_tensor_memory);
  module.def("reset_peak", [] { memory::reset_peak(); });
  module.def("set_cpu_tensor_budget", &memory::set_cpu_tensor_budget, nb::arg("bytes"));
  module.def(
      "cpu_tensor_budget", &memory::cpu_tensor_budget,
      "The CPU tensor budget in bytes this process's counting allocator enforces (0: none).");
  module.def("process_rss_bytes", &memory::process_rss_bytes);
  module.def("process_peak_rss_bytes", &memory::process_peak_rss_bytes);
  module.def(
      "parse_byte_size", [](const std::string& text) { return util::parse_byte_size(text); },
      nb::arg("text"));
  module.def("format_byte_size", &util::format_byte_size, nb::arg("bytes"));
  module.def("fit_peak", &fit_peak, nb::arg("samples"));
  module.def("pack_by_bytes", &pack_by_bytes, nb::arg("store"), nb::arg("ordered_ids"),
             nb::arg("cost"), nb::arg("budget"), nb::arg("max_graphs") = 0);
}

}  // namespace headroom::python
