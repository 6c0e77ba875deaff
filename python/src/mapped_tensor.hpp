// A DLPack capsule over part of a memory-mapped store array, built without an at::Tensor: reading
// a graph costs a few small allocations, not four tensor objects that torch.from_dlpack would
// then wrap again.
#pragma once

#include <ATen/dlpack.h>
#include <nanobind/nanobind.h>

#include <array>
#include <cstdint>
#include <memory>

#include "headroom/util/mapped_file.hpp"

namespace headroom::python {

struct MappedArrayView {
  std::shared_ptr<const util::MappedFile> mapping;  // kept alive until the consumer frees it
  const void* data = nullptr;                       // inside `mapping`
  DLDataType dtype{};
  int ndim = 1;                           // 1 or 2
  std::array<std::int64_t, 2> shape{};    // elements
  std::array<std::int64_t, 2> strides{};  // elements, not bytes (DLPack's convention)
};

// A "dltensor" capsule over `view` (no copy). Call with the GIL held.
nanobind::object mapped_array_capsule(MappedArrayView view);

// A "dltensor" capsule owning `managed` (its deleter runs when no consumer took it). Call with the
// GIL held; on failure the tensor is released and the Python error raised.
nanobind::object dltensor_capsule(DLManagedTensor* managed);

// DLPack's names for the store's element types.
inline constexpr DLDataType kDlFloat32{kDLFloat, 32, 1};
inline constexpr DLDataType kDlInt32{kDLInt, 32, 1};
inline constexpr DLDataType kDlUInt32{kDLUInt, 32, 1};

}  // namespace headroom::python
