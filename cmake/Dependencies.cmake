# Third-party dependencies. LibTorch and Arrow/Parquet come from the PyPI packages installed by
# scripts/setup.sh (torch, pyarrow); everything else from Debian -dev packages.

find_package(Threads REQUIRED)
find_package(CLI11 CONFIG REQUIRED)
find_package(nlohmann_json 3.10 CONFIG REQUIRED)
find_package(PkgConfig REQUIRED)
pkg_check_modules(XXHASH REQUIRED IMPORTED_TARGET libxxhash)

function(headroom_python_query out code)
  execute_process(
    COMMAND "${HEADROOM_PYTHON}" -c "${code}"
    OUTPUT_VARIABLE value
    OUTPUT_STRIP_TRAILING_WHITESPACE
    RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${HEADROOM_PYTHON} could not run: ${code}\n"
                        "Run scripts/setup.sh, or pass -DHEADROOM_PYTHON=<python with torch and pyarrow>.")
  endif()
  set(${out} "${value}" PARENT_SCOPE)
endfunction()

# --- LibTorch (torch wheel) -------------------------------------------------------------------
headroom_python_query(HEADROOM_TORCH_PREFIX "import torch.utils; print(torch.utils.cmake_prefix_path)")
headroom_python_query(HEADROOM_TORCH_VERSION "import torch; print(torch.__version__)")
list(APPEND CMAKE_PREFIX_PATH "${HEADROOM_TORCH_PREFIX}")
# The wheel's CUDA libraries live in site-packages/nvidia; the CUDA toolkit is only needed to
# compile CUDA code, which LibTorch's config looks for. Keep its warnings out of our output.
set(CAFFE2_USE_CUDNN OFF CACHE BOOL "")
# Without an explicit list, LibTorch's config tries to run a GPU probe program at configure time.
# Hopper (H100/H200) is the GPU this project's CUDA runs target.
if(NOT DEFINED TORCH_CUDA_ARCH_LIST AND NOT DEFINED ENV{TORCH_CUDA_ARCH_LIST})
  set(TORCH_CUDA_ARCH_LIST "9.0")
endif()
find_package(Torch REQUIRED)
message(STATUS "LibTorch ${HEADROOM_TORCH_VERSION} from ${HEADROOM_TORCH_PREFIX}")

# TORCH_LIBRARIES carries the compile flags torch needs (ABI flag); wrap them in one target.
add_library(headroom_torch INTERFACE)
target_link_libraries(headroom_torch INTERFACE ${TORCH_LIBRARIES})
target_include_directories(headroom_torch SYSTEM INTERFACE ${TORCH_INCLUDE_DIRS})
# The include root (torch/include), where the wheel's fmt headers also live.
list(GET TORCH_INCLUDE_DIRS 0 HEADROOM_TORCH_INCLUDE_DIR)
target_compile_options(headroom_torch INTERFACE ${TORCH_CXX_FLAGS})

# --- Arrow / Parquet (pyarrow wheel) ----------------------------------------------------------
headroom_python_query(HEADROOM_ARROW_INCLUDE "import pyarrow; print(pyarrow.get_include())")
headroom_python_query(HEADROOM_ARROW_LIBDIR "import pyarrow; print(pyarrow.get_library_dirs()[0])")
headroom_python_query(HEADROOM_ARROW_VERSION "import pyarrow; print(pyarrow.__version__)")
find_library(HEADROOM_ARROW_LIB arrow PATHS "${HEADROOM_ARROW_LIBDIR}" NO_DEFAULT_PATH REQUIRED)
find_library(HEADROOM_PARQUET_LIB parquet PATHS "${HEADROOM_ARROW_LIBDIR}" NO_DEFAULT_PATH REQUIRED)
message(STATUS "Arrow/Parquet ${HEADROOM_ARROW_VERSION} from ${HEADROOM_ARROW_LIBDIR}")

add_library(headroom_parquet INTERFACE)
target_include_directories(headroom_parquet SYSTEM INTERFACE "${HEADROOM_ARROW_INCLUDE}")
target_link_libraries(headroom_parquet INTERFACE "${HEADROOM_PARQUET_LIB}" "${HEADROOM_ARROW_LIB}")

# Binaries find the wheels' shared libraries through their RUNPATH.
set(CMAKE_BUILD_RPATH "${HEADROOM_ARROW_LIBDIR};${HEADROOM_TORCH_PREFIX}/../../lib")
