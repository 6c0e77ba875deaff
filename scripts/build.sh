#!/usr/bin/env bash
# Configures (once) and builds headroom into ./build. Usage: scripts/build.sh [target...]
# HEADROOM_BUILD_TYPE (default Release), HEADROOM_WERROR (default ON) tune the configuration.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON="$(scripts/setup.sh | tail -n 1)"
BUILD_DIR="${HEADROOM_BUILD_DIR:-build}"
BUILD_TYPE="${HEADROOM_BUILD_TYPE:-Release}"

if [[ ! -f "$BUILD_DIR/build.ninja" ]]; then
  cmake -S . -B "$BUILD_DIR" -G Ninja \
    -DCMAKE_BUILD_TYPE="$BUILD_TYPE" \
    -DHEADROOM_PYTHON="$PYTHON" \
    -DHEADROOM_WERROR="${HEADROOM_WERROR:-ON}" >&2
fi
cmake --build "$BUILD_DIR" ${1:+--target "$@"} >&2
