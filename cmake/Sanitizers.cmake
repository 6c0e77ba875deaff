# Sanitizer and fuzzing instrumentation for every target of the build (scripts/sanitize.sh).
#
# HEADROOM_SANITIZE (e.g. "address,undefined"): any finding aborts the process, so a test or a
# fuzzer that trips a sanitizer fails instead of printing and going on.
# HEADROOM_FUZZ: the libraries get libFuzzer's coverage instrumentation (fuzzer-no-link); the
# targets in fuzz/ link the libFuzzer driver itself. clang only.

if(HEADROOM_SANITIZE)
  if(NOT HEADROOM_DATA_SIDE_ONLY AND NOT HEADROOM_PREBUILT_DIR)
    # Compiling all of the training side again with sanitizers doubles the build; LibTorch under
    # it is not sanitized. The training areas worth it are compiled, the others linked as built.
    message(FATAL_ERROR "HEADROOM_SANITIZE needs HEADROOM_DATA_SIDE_ONLY=ON or HEADROOM_PREBUILT_DIR")
  endif()
  add_compile_options(-fsanitize=${HEADROOM_SANITIZE} -fno-sanitize-recover=all
                      -fno-omit-frame-pointer)
  add_link_options(-fsanitize=${HEADROOM_SANITIZE})
  message(STATUS "Sanitizers: ${HEADROOM_SANITIZE}")
endif()

if(HEADROOM_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "HEADROOM_FUZZ needs clang (libFuzzer): configure with CXX=clang++")
  endif()
  if(NOT HEADROOM_DATA_SIDE_ONLY AND NOT HEADROOM_PREBUILT_DIR)
    message(FATAL_ERROR "HEADROOM_FUZZ needs HEADROOM_DATA_SIDE_ONLY=ON or HEADROOM_PREBUILT_DIR")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()
