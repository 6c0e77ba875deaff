#!/usr/bin/env bash
# The sanitizer and fuzzing pass (CI runs it after scripts/test.sh): builds with clang,
# AddressSanitizer and UndefinedBehaviorSanitizer into ./build-sanitize the data side (every
# library without LibTorch, the light `headroom` binary, their unit tests and the libFuzzer targets
# in fuzz/) and the training step, its OOM guard and the epoch loop (src/train/step, src/train/loop)
# inside a sanitized `headroom-train`, whose other training areas are linked from the main build
# (./build, built first if needed: LibTorch under them is not sanitized, and compiling them again
# would double CI's build; CMakeLists.txt, HEADROOM_PREBUILT_DIR). Runs the data side's unit tests
# and the tests of the command line, the dataset layout, hostile input and the step, guard and
# loop (tests/CMakeLists.txt), then each fuzzer for HEADROOM_FUZZ_SECONDS (default 60) from its
# seed corpus. Any sanitizer report, failed test or fuzzer crash makes it exit non-zero; a crashing
# input is kept as build-sanitize/fuzz/findings/<target>/crash-*. Reports from inside LibTorch are
# suppressed, each with its reason (scripts/sanitizer-suppressions/).
#
# Usage: scripts/sanitize.sh [tests|fuzz|build]   (default: tests and fuzz; build: build only)
# HEADROOM_SANITIZE_BUILD_DIR (default build-sanitize) and HEADROOM_BUILD_DIR (the main build,
# default build) name the trees; HEADROOM_SANITIZED_TESTS (globs under tests/, read when the tree
# is configured) narrows the training-side tests, as CI does (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON="$(scripts/setup.sh | tail -n 1)"
BUILD_DIR="${HEADROOM_SANITIZE_BUILD_DIR:-build-sanitize}"
FUZZ_SECONDS="${HEADROOM_FUZZ_SECONDS:-60}"
WHAT="${1:-all}"
FUZZERS=(csv_reader hcrl_reader candump_reader parquet_reader graph_tables store_open store_manifest
         run_directory)

MAIN_BUILD_DIR="${HEADROOM_BUILD_DIR:-build}"

# The training areas the sanitized headroom-train links as the main build compiled them
# (headroom_train_cli depends on every one); a no-op after CI's build phase.
HEADROOM_BUILD_DIR="$MAIN_BUILD_DIR" scripts/build.sh headroom_train_cli >&2
# Configured once, and again when it was configured as the data side alone (before the training
# side was sanitized too). Line tables (-gline-tables-only) are all a sanitizer report needs; full
# debug information of the LibTorch headers made the torch sources' compiles several times slower.
if [[ ! -f "$BUILD_DIR/build.ninja" ]] || ! grep -q '^HEADROOM_PREBUILT_DIR:PATH=/' "$BUILD_DIR/CMakeCache.txt"; then
  CC=clang CXX=clang++ cmake -S . -B "$BUILD_DIR" -G Ninja \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -gline-tables-only -DNDEBUG" \
    -DHEADROOM_PYTHON="$PYTHON" \
    -DHEADROOM_WERROR="${HEADROOM_WERROR:-ON}" \
    -DHEADROOM_DATA_SIDE_ONLY=OFF \
    -DHEADROOM_PREBUILT_DIR="$(cd "$MAIN_BUILD_DIR" && pwd)" \
    -DHEADROOM_PYTHON_MODULE=OFF \
    -DHEADROOM_BUILD_BENCH=OFF \
    -DHEADROOM_CUDA_KERNELS=OFF \
    -DHEADROOM_SANITIZE=address,undefined \
    -DHEADROOM_FUZZ=ON \
    ${HEADROOM_SANITIZED_TESTS:+"-DHEADROOM_SANITIZED_TESTS=$HEADROOM_SANITIZED_TESTS"} >&2
fi
cmake --build "$BUILD_DIR" >&2
if [[ "$WHAT" == build ]]; then exit 0; fi

# detect_leaks: the tests fork and exec; a leak report from a child would be noise, and leaks are
# not what this pass is for. Everything else aborts at the first report.
suppressions="$(pwd)/scripts/sanitizer-suppressions"
export ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1:suppressions=$suppressions/asan.supp"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:suppressions=$suppressions/ubsan.supp"

if [[ "$WHAT" == all || "$WHAT" == tests ]]; then
  # 20 Newsgroups runs the same text pipeline as r8 and mr, ten times longer under ASan (150 s of
  # the pass's ~450 s); the plain suite runs it.
  (cd "$BUILD_DIR" && ctest --output-on-failure -j "$(nproc)" -E '^SharedTextCorpora\.TwentyNewsgroups$')
fi

if [[ "$WHAT" == all || "$WHAT" == fuzz ]]; then
  fuzz_dir="$BUILD_DIR/fuzz"
  # Seeds: the text fixtures in fuzz/seeds, the Parquet test fixtures, and, for the store, one
  # input per file of a real store and one edit program per kind of manifest edit (the fuzzers
  # write those themselves).
  for target in "${FUZZERS[@]}"; do
    mkdir -p "$fuzz_dir/corpus/$target" "$fuzz_dir/findings/$target"
    if [[ -d "fuzz/seeds/$target" ]]; then cp -n fuzz/seeds/"$target"/* "$fuzz_dir/corpus/$target/"; fi
  done
  "$PYTHON" tests/can/parquet_fixtures.py "$fuzz_dir/corpus/parquet_reader"
  # The graph-table fuzzer replaces one table of valid ones: its seeds are the fixtures' tables,
  # each behind the byte that picks it (0 graphs, 1 nodes, 2 edges; 3 × k picks k identity classes).
  rm -rf "$fuzz_dir/graph_tables"
  "$PYTHON" tests/graph_tables/graph_table_fixtures.py "$fuzz_dir/graph_tables"
  export HEADROOM_FUZZ_GRAPH_TABLES="$fuzz_dir/graph_tables/shapes"
  for table in "$fuzz_dir"/graph_tables/*/*.parquet; do
    case "$(basename "$table")" in graphs.parquet) pick='\x00' ;; nodes.parquet) pick='\x0a' ;;
      *) pick='\x02' ;; esac
    seed="$fuzz_dir/corpus/graph_tables/$(basename "$(dirname "$table")")-$(basename "$table")"
    { printf "$pick"; cat "$table"; } > "$seed"
  done
  HEADROOM_FUZZ_WRITE_SEEDS="$fuzz_dir/corpus/store_open" "$fuzz_dir/store_open_fuzzer" -runs=0 \
    > /dev/null 2>&1
  HEADROOM_FUZZ_WRITE_SEEDS="$fuzz_dir/corpus/store_manifest" "$fuzz_dir/store_manifest_fuzzer" \
    -runs=0 > /dev/null 2>&1

  # The fuzzers write each input to a file: keep that churn in memory where possible.
  if [[ -d /dev/shm && -w /dev/shm ]]; then export TMPDIR=/dev/shm; fi
  failed=()
  for target in "${FUZZERS[@]}"; do
    log="$fuzz_dir/findings/$target/fuzz.log"
    echo "fuzzing $target for ${FUZZ_SECONDS} s" >&2
    if "$fuzz_dir/${target}_fuzzer" -max_total_time="$FUZZ_SECONDS" -timeout=20 -rss_limit_mb=2048 \
        -max_len=65536 -print_final_stats=1 -artifact_prefix="$fuzz_dir/findings/$target/" \
        "$fuzz_dir/corpus/$target" > "$log" 2>&1; then
      # libFuzzer's final line: "Done N runs in S second(s)".
      echo "  $(grep -E '^Done [0-9]+ runs' "$log" || tail -n 1 "$log")" >&2
    else
      failed+=("$target")
      tail -n 60 "$log" >&2
    fi
  done
  if ((${#failed[@]})); then
    echo "fuzzers that found a crash: ${failed[*]} (inputs in $fuzz_dir/findings/)" >&2
    exit 1
  fi
fi
