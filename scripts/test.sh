#!/usr/bin/env bash
# Installs what is missing (quick when present), builds everything and runs the whole test suite.
# Extra arguments go to ctest, e.g. scripts/test.sh -R Store
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
# The Python package, installed into the project's environment as the README says (README,
# "From Python"); the suite's pytest cases import the build tree's copy of it.
scripts/install-python.sh
cd "${HEADROOM_BUILD_DIR:-build}"
ctest --output-on-failure -j "$(nproc)" "$@"
