// headroom._headroom._Store: a graph store opened copy-on-write, its graphs as zero-copy tensors.
#include <nanobind/stl/map.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "bindings.hpp"
#include "headroom/store/graph_store.hpp"
#include "headroom/store/store_arrays.hpp"
#include "headroom/store/store_error.hpp"
#include "python_store.hpp"

namespace nb = nanobind;

namespace headroom::python {

void bind_store(nb::module_& module) {
  nb::exception<store::StoreError>(module, "StoreError", PyExc_ValueError);
  nb::class_<PythonStore>(module, "_Store")
      .def(nb::init<const std::string&, bool>(), nb::arg("path"), nb::arg("verify") = false,
           nb::call_guard<nb::gil_scoped_release>())
      .def("__len__", &PythonStore::size)
      .def_prop_ro("path", &PythonStore::path)
      .def_prop_ro("bytes_on_disk", &PythonStore::bytes_on_disk)
      .def_prop_ro("identity_classes", &PythonStore::identity_classes)
      .def("metadata_json", &PythonStore::metadata_json)
      .def("graph", &PythonStore::graph, nb::arg("graph_id"))
      .def("small_array", &PythonStore::small_array, nb::arg("name"));
  // The store's array names from store/store_arrays.hpp, so that Python never spells them itself.
  namespace arrays = store::arrays;
  module.def(
      "split_arrays",
      [] {
        return std::map<std::string, std::string>{
            {"train", std::string(arrays::kSplitTrain)},
            {"validation", std::string(arrays::kSplitValidation)},
            {"test", std::string(arrays::kSplitTest)}};
      },
      "The array of graph ids of each split, by split name.");
  module.def(
      "size_index_arrays",
      [] {
        constexpr std::string_view kPrefix = "graph_";  // the size index's arrays: graph_{key}
        std::map<std::string, std::string> named;
        for (const auto name : {arrays::kGraphNumNodes, arrays::kGraphNumEdges, arrays::kGraphLabel,
                                arrays::kGraphSplit, arrays::kGraphFile, arrays::kGraphAttackType,
                                arrays::kGraphWindow})
          named.emplace(std::string(name.substr(kPrefix.size())), std::string(name));
        return named;
      },
      "The size index's arrays (one value per graph) by key: num_nodes -> graph_num_nodes, ...");
  module.def(
      "geometry_arrays",
      [] {
        return std::map<std::string, std::string>{
            {"positions", std::string(arrays::kNodePositions)},
            {"parents", std::string(arrays::kNodeParent)},
            {"num_paths", std::string(arrays::kGraphNumPaths)},
            {"target", std::string(arrays::kGraphTarget)}};
      },
      "A geometric store's arrays (docs/store-format.md, \"Geometric stores\") by key.");
}

}  // namespace headroom::python
