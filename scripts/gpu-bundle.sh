#!/usr/bin/env bash
# Packs what scripts/gpu-check.sh needs on a GPU machine that has Python and torch but nothing of
# headroom's (docs/gpu.md): the binaries built here (build/bin/headroom, headroom-train,
# training_bench, build/tests/headroom_tests), the CUDA plugin (build/lib/libheadroom_cuda.so)
# and the shared libraries they link that the other machine's torch does not bring — Arrow/Parquet 22, toml++, xxhash, protobuf, libcurl and theirs —
# resolved with ldd, compressed with xz so that the bundle fits the device tool's 64 MiB working
# tree. Not packed: torch's and the CUDA wheels' libraries (the other machine's torch ships them,
# and they must match its driver) and the C and C++ runtimes (the other machine's own).
#
# A CAN dataset travels in the bundle too (data/NAME), for gpu-check's chain step: by default the
# shared hcrl_sa (../shared/data/can/hcrl_sa, 19 MiB of Parquet) where it exists, since the GPU
# machine has no copy of the shared data.
#
# Usage: scripts/gpu-bundle.sh [--dataset DIR | --no-dataset] [OUT]
#        (OUT default gpu-bundle/headroom-gpu.tar.xz; gpu-bundle/ is ignored by git, so the device
#        tool carries it: carry ["gpu-bundle"])
set -euo pipefail
cd "$(dirname "$0")/.."
dataset=../shared/data/can/hcrl_sa
[[ -d "$dataset" ]] || dataset=""
while (($#)); do
  case "$1" in
    --dataset)
      (($# >= 2)) || { echo "gpu-bundle: --dataset needs a directory" >&2; exit 2; }
      [[ -d "$2" ]] || { echo "gpu-bundle: no dataset directory at '$2'" >&2; exit 2; }
      dataset="$2"
      shift 2
      ;;
    --no-dataset) dataset=""; shift ;;
    -*) echo "gpu-bundle: unknown option '$1'" >&2; exit 2 ;;
    *) break ;;
  esac
done
out="${1:-gpu-bundle/headroom-gpu.tar.xz}"
bins=(build/bin/headroom build/bin/headroom-train build/bin/training_bench
      build/tests/headroom_tests)
for binary in "${bins[@]}"; do
  [[ -x "$binary" ]] || { echo "gpu-bundle: $binary is missing: build first (scripts/build.sh)" >&2; exit 1; }
done
# CUDA is a plugin the binaries load from ../lib (nn/cuda_runtime.hpp): without it a GPU run is
# impossible, so a bundle without it is refused.
plugin=build/lib/libheadroom_cuda.so
[[ -f "$plugin" ]] || { echo "gpu-bundle: $plugin is missing: build with a CUDA compiler (nvcc)" >&2; exit 1; }
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
root="$stage/headroom-gpu"
mkdir -p "$root/bin" "$root/lib"
cp "${bins[@]}" "$root/bin/"
cp "$plugin" "$root/lib/"
carried=none
if [[ -n "$dataset" ]]; then
  carried="$(basename "$(realpath "$dataset")")"
  mkdir -p "$root/data"
  cp -rL "$dataset" "$root/data/$carried"
fi
ldd "${bins[@]}" "$plugin" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' | sort -u |
  while read -r name path; do
    path="$(realpath "$path")"  # torch's are found through .../torch/share/cmake/../../lib
    case "$path" in
      */torch/lib/* | */nvidia/* | /usr/local/cuda*) continue ;;
    esac
    case "$name" in
      libc.so.* | libm.so.* | libdl.so.* | libpthread.so.* | librt.so.* | libresolv.so.* | \
        libutil.so.* | libanl.so.* | libnsl.so.* | libstdc++.so.* | \
        libgcc_s.so.* | ld-linux*) continue ;;
    esac
    cp -L "$path" "$root/lib/$name"
  done
# The absolute paths the test binary runs the binaries by (HEADROOM_BINARY, HEADROOM_TRAIN_BINARY,
# compiled in): gpu-check.sh links them to the bundle's where nothing is there.
grep -a -o '/[[:alnum:]_./-]*/build/bin/headroom\(-train\)\?' build/tests/headroom_tests |
  sort -u >"$root/binary-paths"
git rev-parse HEAD >"$root/commit" 2>/dev/null || echo unknown >"$root/commit"
mkdir -p "$(dirname "$out")"
tar -C "$stage" -cf - headroom-gpu | xz -T0 -6 >"$out.tmp"
mv "$out.tmp" "$out"
echo "gpu-bundle: $out ($(du -h "$out" | cut -f1); $(ls "$root/lib" | wc -l) libraries; dataset: $carried)"
