// headroom._headroom: the extension module behind the `headroom` Python package. The package
// (python/headroom/) imports torch first, so that this module binds to the LibTorch already
// loaded (the same files: it is linked against the torch wheel's libraries).
#include <nanobind/nanobind.h>

#include "bindings.hpp"

NB_MODULE(_headroom, module) {
  module.attr("__version__") = HEADROOM_VERSION;
  headroom::python::bind_store(module);
  headroom::python::bind_memory(module);
  headroom::python::bind_planning(module);
  headroom::python::bind_writer(module);
  headroom::python::bind_order(module);
  headroom::python::bind_commands(module);
}
