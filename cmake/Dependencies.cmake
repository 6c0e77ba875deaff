# Third-party dependencies. LibTorch and Arrow/Parquet come from the PyPI packages installed by
# scripts/setup.sh (torch, pyarrow); everything else from Debian -dev packages.

find_package(Threads REQUIRED)
find_package(CLI11 CONFIG REQUIRED)
# toml++ (Debian libtomlplusplus-dev) reads --config files: CLI11's own reader accepts any text.
find_package(tomlplusplus CONFIG REQUIRED)
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
if(HEADROOM_DATA_SIDE_ONLY)
  # The data side needs only the wheel's header-only fmt (src/CMakeLists.txt), not LibTorch.
  headroom_python_query(HEADROOM_TORCH_INCLUDE_DIR
    "import os, torch; print(os.path.join(os.path.dirname(torch.__file__), 'include'))")
else()
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

# What every LibTorch user here links: LibTorch's CPU library and c10, never its CUDA libraries
# (libtorch.so would pull libtorch_cuda.so, ~355 MiB mapped by every run). CUDA is the plugin's
# (headroom_cuda, src/CMakeLists.txt; nn/cuda_runtime.hpp), loaded when a CUDA device is asked for:
# a CUDA call outside the plugin does not link.
add_library(headroom_torch INTERFACE)
target_link_libraries(headroom_torch INTERFACE torch_cpu_library c10)
target_include_directories(headroom_torch SYSTEM INTERFACE ${TORCH_INCLUDE_DIRS})
# All of LibTorch, CUDA included: the CUDA plugin, and the test binary (its CUDA cases call CUDA
# directly).
add_library(headroom_torch_full INTERFACE)
target_link_libraries(headroom_torch_full INTERFACE headroom_torch ${TORCH_LIBRARIES})
# The include root (torch/include), where the wheel's fmt headers also live.
list(GET TORCH_INCLUDE_DIRS 0 HEADROOM_TORCH_INCLUDE_DIR)
target_compile_options(headroom_torch INTERFACE ${TORCH_CXX_FLAGS})
endif()

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
if(HEADROOM_DATA_SIDE_ONLY)
  set(CMAKE_BUILD_RPATH "${HEADROOM_ARROW_LIBDIR}")
else()
  set(CMAKE_BUILD_RPATH "${HEADROOM_ARROW_LIBDIR};${HEADROOM_TORCH_PREFIX}/../../lib")
endif()

if(NOT HEADROOM_DATA_SIDE_ONLY)
  # --- Experiment tracking ----------------------------------------------------------------------
  # libcurl (Debian libcurl4-openssl-dev) talks to MLflow's REST API. TensorBoard events are
  # protobuf messages (Debian libprotobuf-dev, protobuf-compiler) of the schema that the
  # `tensorboard` PyPI package defines: its wheel ships the schema compiled into Python modules
  # (tensorboard/compat/proto/*_pb2.py), not as .proto text, so cmake/tensorboard_schema.py exports
  # those descriptors at configure time and protoc generates the C++ from them. Boost.CRC (Debian
  # libboost-dev, header-only) checksums the event records. tensorboard lives in its own venv
  # (scripts/setup.sh): mlflow, installed beside it for the tests, pins versions that the
  # torch/pyarrow venv cannot share.
  find_package(CURL REQUIRED)
  find_package(Protobuf REQUIRED)
  find_package(Boost REQUIRED)
  if(DEFINED ENV{HEADROOM_DEPS_DIR})
    set(headroom_tracking_python_default "$ENV{HEADROOM_DEPS_DIR}/tracking-venv/bin/python")
  else()
    set(headroom_tracking_python_default "$ENV{HOME}/.cache/headroom/tracking-venv/bin/python")
  endif()
  set(HEADROOM_TRACKING_PYTHON "${headroom_tracking_python_default}"
      CACHE FILEPATH "Python with the tensorboard and mlflow packages (scripts/setup.sh)")

  set(HEADROOM_TENSORBOARD_GENERATED "${CMAKE_BINARY_DIR}/tensorboard_proto")
  set(tensorboard_schema "${HEADROOM_TENSORBOARD_GENERATED}/tensorboard_event.desc")
  file(MAKE_DIRECTORY "${HEADROOM_TENSORBOARD_GENERATED}")
  # Exported beside it and copied over only when it changed: a configure that rewrote it would make
  # protoc and the schema's compile run again on every configure (pip install ./python configures).
  execute_process(
    COMMAND "${HEADROOM_TRACKING_PYTHON}" "${PROJECT_SOURCE_DIR}/cmake/tensorboard_schema.py"
            "${tensorboard_schema}.new"
    OUTPUT_VARIABLE tensorboard_proto_files
    OUTPUT_STRIP_TRAILING_WHITESPACE
    RESULT_VARIABLE tensorboard_rc)
  if(NOT tensorboard_rc EQUAL 0)
    message(FATAL_ERROR "${HEADROOM_TRACKING_PYTHON} cannot export the TensorBoard event schema "
                        "from the tensorboard package. Run scripts/setup.sh.")
  endif()
  file(COPY_FILE "${tensorboard_schema}.new" "${tensorboard_schema}" ONLY_IF_DIFFERENT)
  set(tensorboard_sources)
  set(tensorboard_headers)
  foreach(proto IN LISTS tensorboard_proto_files)
    string(REGEX REPLACE "\\.proto$" "" stem "${proto}")
    list(APPEND tensorboard_sources "${HEADROOM_TENSORBOARD_GENERATED}/${stem}.pb.cc")
    list(APPEND tensorboard_headers "${HEADROOM_TENSORBOARD_GENERATED}/${stem}.pb.h")
  endforeach()
  add_custom_command(
    OUTPUT ${tensorboard_sources} ${tensorboard_headers}
    COMMAND "${Protobuf_PROTOC_EXECUTABLE}" --descriptor_set_in=${tensorboard_schema}
            --cpp_out=${HEADROOM_TENSORBOARD_GENERATED} ${tensorboard_proto_files}
    DEPENDS "${tensorboard_schema}" "${Protobuf_PROTOC_EXECUTABLE}"
    COMMENT "Generating C++ for the TensorBoard event schema (protoc)")
  if(HEADROOM_PREBUILT_DIR)
    # The sanitizer build links the main build's (its user, tracking, comes from there too).
    add_library(headroom_tensorboard_proto STATIC IMPORTED GLOBAL)
    set_target_properties(headroom_tensorboard_proto PROPERTIES
      IMPORTED_LOCATION "${HEADROOM_PREBUILT_DIR}/libheadroom_tensorboard_proto.a")
    target_link_libraries(headroom_tensorboard_proto INTERFACE "${Protobuf_LIBRARY_RELEASE}")
  else()
    add_library(headroom_tensorboard_proto STATIC ${tensorboard_sources})
    target_include_directories(headroom_tensorboard_proto SYSTEM
                               PUBLIC "${HEADROOM_TENSORBOARD_GENERATED}")
    # By path, not protobuf::libprotobuf: LibTorch's CMake config defines an empty target of that
    # name before FindProtobuf runs, and linking it links nothing.
    target_link_libraries(headroom_tensorboard_proto PUBLIC "${Protobuf_LIBRARY_RELEASE}")
  endif()
  message(STATUS "TensorBoard event schema: ${tensorboard_proto_files}")
endif()

# Chart.js (Debian libjs-chart.js) is inlined into `headroom report` pages.
find_file(HEADROOM_CHART_JS chart.min.js PATHS /usr/share/javascript/chart.js NO_DEFAULT_PATH)
if(NOT HEADROOM_CHART_JS)
  message(FATAL_ERROR "Chart.js not found in /usr/share/javascript/chart.js: install the Debian "
                      "package libjs-chart.js (scripts/setup.sh does)")
endif()
