#!/usr/bin/env bash
# Installs what headroom needs and is missing; quick and silent when everything is present.
#
#  - Debian -dev packages (compiler tools, CLI11, toml++, nlohmann-json, GoogleTest,
#    Google Benchmark, xxhash, ccache, ninja).
#  - A Python virtual environment with the PyPI packages torch (LibTorch) and pyarrow
#    (Arrow/Parquet C++), outside the repository so every clone shares it:
#    ${HEADROOM_DEPS_DIR:-$HOME/.cache/headroom}/venv
#  - Experiment tracking: Debian libcurl (MLflow's REST API), protobuf and Boost.CRC (TensorBoard
#    event files), Chart.js (`headroom report` pages), Chromium (the report's browser test); and
#    a second venv, ${HEADROOM_DEPS_DIR:-$HOME/.cache/headroom}/tracking-venv, with the PyPI
#    packages tensorboard (its event schema is compiled at build time; the tests read event files
#    with it) and mlflow (the tests run a tracking server). mlflow pins numpy/pyarrow versions of
#    its own, hence the separate venv.
#  - clang and its runtime libraries (libFuzzer, the sanitizers) for scripts/sanitize.sh.
#
# Prints the venv's python path on the last line of stdout so callers can use it.
set -euo pipefail

TORCH_VERSION="2.11.0"
PYARROW_VERSION="22.0.0"
MLFLOW_VERSION="3.17.2"
TENSORBOARD_VERSION="2.21.0"
# The Python package (python/): nanobind and scikit-build-core build it, pytest and PyG test it.
PYTHON_TOOLS=("nanobind==3.1.0" "scikit-build-core==1.1.2" "pytest==9.2.0" "torch_geometric==2.8.1")
DEPS_DIR="${HEADROOM_DEPS_DIR:-$HOME/.cache/headroom}"
VENV="$DEPS_DIR/venv"
TRACKING_VENV="$DEPS_DIR/tracking-venv"

log() { echo "[setup] $*" >&2; }

debian_packages=(
  build-essential cmake ninja-build ccache pkg-config python3-venv
  libcli11-dev libtomlplusplus-dev nlohmann-json3-dev
  libgtest-dev libgmock-dev libbenchmark-dev libxxhash-dev
  libgloo-dev
  libcurl4-openssl-dev libprotobuf-dev protobuf-compiler libboost-dev libjs-chart.js chromium
  clang libclang-rt-14-dev
)

missing=()
for pkg in "${debian_packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done
if ((${#missing[@]})); then
  log "installing Debian packages: ${missing[*]}"
  sudo_cmd=()
  if [[ $(id -u) -ne 0 ]]; then sudo_cmd=(sudo); fi
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq "${missing[@]}" >&2
fi

python_ok() {
  [[ -x "$VENV/bin/python" ]] && "$VENV/bin/python" - "$TORCH_VERSION" "$PYARROW_VERSION" <<'EOF' 2>/dev/null
import sys, importlib.metadata as md
want_torch, want_arrow = sys.argv[1], sys.argv[2]
ok = md.version("torch").split("+")[0] == want_torch and md.version("pyarrow") == want_arrow
md.version("numpy")
sys.exit(0 if ok else 1)
EOF
}

if ! python_ok; then
  log "installing torch==$TORCH_VERSION and pyarrow==$PYARROW_VERSION into $VENV (one time, a few GB)"
  mkdir -p "$DEPS_DIR"
  [[ -x "$VENV/bin/python" ]] || python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q --disable-pip-version-check \
    "torch==$TORCH_VERSION" "pyarrow==$PYARROW_VERSION" numpy >&2
  python_ok || { log "error: torch/pyarrow installation in $VENV failed"; exit 1; }
fi

python_tools_ok() {
  "$VENV/bin/python" - "${PYTHON_TOOLS[@]}" <<'EOF' 2>/dev/null
import sys, importlib.metadata as md
for pin in sys.argv[1:]:
    name, version = pin.split("==")
    if md.version(name) != version:
        sys.exit(1)
EOF
}

if ! python_tools_ok; then
  log "installing ${PYTHON_TOOLS[*]} into $VENV (one time)"
  "$VENV/bin/pip" install -q --disable-pip-version-check "${PYTHON_TOOLS[@]}" >&2
  python_tools_ok || { log "error: installing ${PYTHON_TOOLS[*]} into $VENV failed"; exit 1; }
fi

tracking_ok() {
  [[ -x "$TRACKING_VENV/bin/python" ]] && "$TRACKING_VENV/bin/python" - "$MLFLOW_VERSION" "$TENSORBOARD_VERSION" <<'EOF' 2>/dev/null
import sys, importlib.metadata as md
sys.exit(0 if (md.version("mlflow"), md.version("tensorboard")) == (sys.argv[1], sys.argv[2]) else 1)
EOF
}

if ! tracking_ok; then
  log "installing mlflow==$MLFLOW_VERSION and tensorboard==$TENSORBOARD_VERSION into $TRACKING_VENV (one time)"
  mkdir -p "$DEPS_DIR"
  [[ -x "$TRACKING_VENV/bin/python" ]] || python3 -m venv "$TRACKING_VENV"
  "$TRACKING_VENV/bin/pip" install -q --disable-pip-version-check \
    "mlflow==$MLFLOW_VERSION" "tensorboard==$TENSORBOARD_VERSION" >&2
  tracking_ok || { log "error: mlflow/tensorboard installation in $TRACKING_VENV failed"; exit 1; }
fi

# pyarrow ships versioned shared objects only; the unversioned links are what the linker wants.
"$VENV/bin/python" - <<'EOF' >&2
import pathlib, pyarrow
libdir = pathlib.Path(pyarrow.get_library_dirs()[0])
if not (libdir / "libparquet.so").exists():
    pyarrow.create_library_symlinks()
EOF

echo "$VENV/bin/python"
