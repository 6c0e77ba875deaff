#!/usr/bin/env bash
# Installs the `headroom` Python package into the project's environment (~/.cache/headroom/venv,
# or HEADROOM_DEPS_DIR's): builds what is missing, then `pip install` of python/, which
# scikit-build-core builds in the project's build directory from the libraries already compiled.
# Usage: scripts/install-python.sh [extra pip arguments, e.g. --force-reinstall]
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON="$(scripts/setup.sh | tail -n 1)"
BUILD_DIR="$(realpath -m "${HEADROOM_BUILD_DIR:-build}")"
scripts/build.sh headroom_python
"$PYTHON" -m pip install -q --disable-pip-version-check --no-build-isolation --no-deps \
  --config-settings=build-dir="$BUILD_DIR" "$@" ./python >&2
"$PYTHON" -c "import headroom; print('headroom', headroom.__version__, 'in', headroom.__file__)" >&2
