#include "python_tensor.hpp"

#include <ATen/DLConvertor.h>

namespace headroom::python {
namespace {

constexpr const char* kUnconsumed = "dltensor";

// A consumer renames the capsule ("used_dltensor") and takes over the deleter; only a capsule
// nobody consumed still owns its tensor.
void release_unconsumed(PyObject* capsule) {
  if (!PyCapsule_IsValid(capsule, kUnconsumed)) return;
  auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, kUnconsumed));
  if (managed != nullptr && managed->deleter != nullptr) managed->deleter(managed);
}

}  // namespace

nanobind::object dlpack_capsule(const at::Tensor& tensor) {
  DLManagedTensor* managed = at::toDLPack(tensor);
  PyObject* capsule = PyCapsule_New(managed, kUnconsumed, release_unconsumed);
  if (capsule == nullptr) {
    managed->deleter(managed);
    throw nanobind::python_error();
  }
  return nanobind::steal(capsule);
}

}  // namespace headroom::python
