// The parts of the `headroom._headroom` extension module, each registered by one function.
#pragma once

#include <nanobind/nanobind.h>

namespace headroom::python {

void bind_store(nanobind::module_& module);     // _Store, StoreError
void bind_memory(nanobind::module_& module);    // the tensor meter, the peak fit, the packer
void bind_planning(nanobind::module_& module);  // `headroom plan` as JSON
void bind_writer(nanobind::module_& module);    // _GraphWriter: any graph dataset into a store

}  // namespace headroom::python
