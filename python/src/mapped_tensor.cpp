#include "mapped_tensor.hpp"

#include <utility>

namespace headroom::python {
namespace {

constexpr const char* kUnconsumed = "dltensor";

// The capsule's payload: DLPack's struct first, then what it points to.
struct MappedTensor {
  DLManagedTensor managed{};
  MappedArrayView view;
};

void delete_mapped_tensor(DLManagedTensor* managed) {
  delete static_cast<MappedTensor*>(managed->manager_ctx);
}

// A consumer renames the capsule ("used_dltensor") and calls the deleter itself later.
void release_unconsumed(PyObject* capsule) {
  if (!PyCapsule_IsValid(capsule, kUnconsumed)) return;
  auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, kUnconsumed));
  if (managed != nullptr && managed->deleter != nullptr) managed->deleter(managed);
}

}  // namespace

nanobind::object mapped_array_capsule(MappedArrayView view) {
  auto* tensor = new MappedTensor{{}, std::move(view)};
  DLTensor& dl = tensor->managed.dl_tensor;
  // DLPack takes a mutable pointer; the mapping is copy-on-write (store/graph_store.hpp), so a
  // write changes this process's pages only.
  dl.data = const_cast<void*>(tensor->view.data);
  dl.device = {kDLCPU, 0};
  dl.ndim = tensor->view.ndim;
  dl.dtype = tensor->view.dtype;
  dl.shape = tensor->view.shape.data();
  dl.strides = tensor->view.strides.data();
  dl.byte_offset = 0;
  tensor->managed.manager_ctx = tensor;
  tensor->managed.deleter = delete_mapped_tensor;
  return dltensor_capsule(&tensor->managed);
}

nanobind::object dltensor_capsule(DLManagedTensor* managed) {
  PyObject* capsule = PyCapsule_New(managed, kUnconsumed, release_unconsumed);
  if (capsule == nullptr) {
    managed->deleter(managed);
    throw nanobind::python_error();
  }
  return nanobind::steal(capsule);
}

}  // namespace headroom::python
