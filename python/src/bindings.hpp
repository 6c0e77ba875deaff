// The parts of the `headroom._headroom` extension module, each registered by one function.
#pragma once

#include <nanobind/nanobind.h>

namespace headroom::python {

void bind_store(nanobind::module_& module);     // _Store, StoreError
void bind_memory(nanobind::module_& module);    // the tensor meter, the peak fit, the packer
void bind_planning(nanobind::module_& module);  // `headroom plan` as JSON
void bind_writer(nanobind::module_& module);    // _GraphWriter: any graph dataset into a store
void bind_order(nanobind::module_& module);     // epoch_order: the loaders' seeded permutation
// The command line's definitions: argument checks, a command's flags, stage run directories, and
// headroom-train's main (what the stage functions run in a child process). After bind_planning
// (it registers OptionError).
void bind_commands(nanobind::module_& module);

}  // namespace headroom::python
