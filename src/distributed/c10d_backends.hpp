// The c10d backends headroom runs on, each created in its own source file: their headers need the
// engines' own headers (Gloo's from Debian's libgloo-dev, NCCL's from the torch wheel's
// nvidia-nccl package), which no other file should see. Private to the distributed area.
#pragma once

#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include <chrono>

namespace headroom::distributed::detail {

// ProcessGroupGloo over TCP (CPU tensors), bound to this host's address (or loopback).
c10::intrusive_ptr<c10d::Backend> make_gloo_backend(const c10::intrusive_ptr<c10d::Store>& store,
                                                    int rank, int world_size,
                                                    std::chrono::milliseconds timeout);

// ProcessGroupNCCL on cuda:device_index, created by the CUDA plugin (nn/cuda_runtime.hpp; the
// NCCL backend lives in LibTorch's CUDA library). Throws std::runtime_error when the plugin is
// missing or was built without NCCL's headers.
c10::intrusive_ptr<c10d::Backend> make_nccl_backend(const c10::intrusive_ptr<c10d::Store>& store,
                                                    int rank, int world_size, int device_index,
                                                    std::chrono::milliseconds timeout);

}  // namespace headroom::distributed::detail
