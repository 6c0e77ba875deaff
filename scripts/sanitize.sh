#!/usr/bin/env bash
# The sanitizer and fuzzing pass (CI runs it after scripts/test.sh): builds the data side (every
# library without LibTorch, the light `headroom` binary, their unit tests and the libFuzzer targets
# in fuzz/) with clang, AddressSanitizer and UndefinedBehaviorSanitizer into ./build-sanitize, runs
# those unit tests, then runs each fuzzer for HEADROOM_FUZZ_SECONDS (default 60) from its seed
# corpus. Any sanitizer report, failed test or fuzzer crash makes it exit non-zero; a crashing
# input is kept as build-sanitize/fuzz/findings/<target>/crash-*.
#
# Usage: scripts/sanitize.sh [tests|fuzz]   (default: both)
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON="$(scripts/setup.sh | tail -n 1)"
BUILD_DIR="${HEADROOM_SANITIZE_BUILD_DIR:-build-sanitize}"
FUZZ_SECONDS="${HEADROOM_FUZZ_SECONDS:-60}"
WHAT="${1:-all}"
FUZZERS=(csv_reader hcrl_reader candump_reader parquet_reader graph_tables store_open store_manifest
         run_directory)

if [[ ! -f "$BUILD_DIR/build.ninja" ]]; then
  CC=clang CXX=clang++ cmake -S . -B "$BUILD_DIR" -G Ninja \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DHEADROOM_PYTHON="$PYTHON" \
    -DHEADROOM_WERROR="${HEADROOM_WERROR:-ON}" \
    -DHEADROOM_DATA_SIDE_ONLY=ON \
    -DHEADROOM_SANITIZE=address,undefined \
    -DHEADROOM_FUZZ=ON >&2
fi
cmake --build "$BUILD_DIR" >&2

# detect_leaks: the tests fork and exec; a leak report from a child would be noise, and leaks are
# not what this pass is for. Everything else aborts at the first report.
export ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"

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
