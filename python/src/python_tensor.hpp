// Tensors handed to Python without a copy: a DLPack capsule that torch.from_dlpack turns into a
// torch.Tensor sharing the memory (and keeping the C++ owner alive until Python frees it).
#pragma once

#include <ATen/core/Tensor.h>
#include <nanobind/nanobind.h>

namespace headroom::python {

// A "dltensor" capsule over `tensor`'s storage (no copy). Call with the GIL held. If Python never
// consumes the capsule, its destructor releases the tensor.
nanobind::object dlpack_capsule(const at::Tensor& tensor);

}  // namespace headroom::python
