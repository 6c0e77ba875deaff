// headroom._headroom._GraphWriter: graphs from Python (tensors or arrays) streamed into a graph
// store (store/graph_dataset_writer.hpp).
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>

#include <cstdint>
#include <string>

#include "bindings.hpp"
#include "headroom/store/graph_dataset_writer.hpp"

namespace nb = nanobind;

namespace headroom::python {
namespace {

template <typename T>
using Rows = nb::ndarray<const T, nb::ndim<2>, nb::c_contig, nb::device::cpu>;

template <typename T>
using Column = nb::ndarray<const T, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

template <typename T, typename Array>
std::span<const T> values(const Array& rows) {
  return {rows.data(), rows.size()};
}

class PythonGraphWriter {
 public:
  PythonGraphWriter(const std::string& path, std::uint32_t node_features,
                    std::uint32_t edge_features, std::uint32_t identity_classes,
                    double validation_fraction, std::uint64_t seed, bool overwrite,
                    const std::string& created_by, std::uint32_t position_dimensions,
                    bool has_parents)
      : writer_(path, {.node_features = node_features,
                       .edge_features = edge_features,
                       .identity_classes = identity_classes,
                       .validation_fraction = validation_fraction,
                       .seed = seed,
                       .overwrite = overwrite,
                       .created_by = created_by,
                       .position_dimensions = position_dimensions,
                       .has_parents = has_parents}) {}

  // x: [nodes, node_features] float32; edges: [edges, 2] int64 (source, target);
  // edge_features: [edges, edge_features] float32; split: "train" or "test"; positions:
  // [nodes, position_dimensions] float32 ([nodes, 0] without); parents: [nodes] int64 (-1: a
  // root; empty without).
  void append(const Rows<float>& x, const Rows<std::int64_t>& edges,
              const Rows<float>& edge_features, int label, const std::string& split,
              const Rows<float>& positions, const Column<std::int64_t>& parents) {
    if (split != "train" && split != "test")
      throw nb::value_error(("graph " + std::to_string(writer_.graphs()) + ": split '" + split +
                             "' is neither 'train' nor 'test'")
                                .c_str());
    if (label < 0 || label > 1)
      throw nb::value_error(("graph " + std::to_string(writer_.graphs()) + ": label " +
                             std::to_string(label) + ": labels are 0 or 1")
                                .c_str());
    writer_.append({values<float>(x), values<std::int64_t>(edges), values<float>(edge_features),
                    static_cast<std::uint8_t>(label),
                    split == "test" ? store::DatasetSplit::kTest : store::DatasetSplit::kTrain},
                   {values<float>(positions), values<std::int64_t>(parents), 0.0});
  }

  std::uint64_t graphs() const { return writer_.graphs(); }

  void commit() {
    nb::gil_scoped_release unlocked;
    writer_.commit();
  }

 private:
  store::GraphDatasetWriter writer_;
};

}  // namespace

void bind_writer(nb::module_& module) {
  nb::class_<PythonGraphWriter>(module, "_GraphWriter")
      .def(nb::init<const std::string&, std::uint32_t, std::uint32_t, std::uint32_t, double,
                    std::uint64_t, bool, const std::string&, std::uint32_t, bool>(),
           nb::arg("path"), nb::arg("node_features"), nb::arg("edge_features"),
           nb::arg("identity_classes"), nb::arg("validation_fraction"), nb::arg("seed"),
           nb::arg("overwrite"), nb::arg("created_by"), nb::arg("position_dimensions"),
           nb::arg("has_parents"))
      .def("append", &PythonGraphWriter::append, nb::arg("x"), nb::arg("edges"),
           nb::arg("edge_features"), nb::arg("label"), nb::arg("split"), nb::arg("positions"),
           nb::arg("parents"))
      .def_prop_ro("graphs", &PythonGraphWriter::graphs)
      .def("commit", &PythonGraphWriter::commit);
}

}  // namespace headroom::python
