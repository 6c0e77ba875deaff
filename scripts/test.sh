#!/usr/bin/env bash
# Installs what is missing (quick when present), builds everything and runs the whole test suite.
# Extra arguments go to ctest, e.g. scripts/test.sh -R Store
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
cd "${HEADROOM_BUILD_DIR:-build}"
ctest --output-on-failure -j "$(nproc)" "$@"
