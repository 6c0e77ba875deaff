#include "python_tensor.hpp"

#include <ATen/DLConvertor.h>

#include "mapped_tensor.hpp"

namespace headroom::python {

nanobind::object dlpack_capsule(const at::Tensor& tensor) {
  return dltensor_capsule(at::toDLPack(tensor));
}

}  // namespace headroom::python
