// headroom._headroom._Store: a graph store opened copy-on-write, its graphs as zero-copy tensors.
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>

#include <cstdint>
#include <memory>
#include <string>

#include "bindings.hpp"
#include "headroom/store/graph_store.hpp"
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
}

}  // namespace headroom::python
