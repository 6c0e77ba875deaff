#!/usr/bin/env bash
# Installs what is missing (quick when present), builds headroom and runs its main job on the
# embedded synthetic dataset: `headroom run`. Extra arguments go to `headroom run`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh headroom
exec "${HEADROOM_BUILD_DIR:-build}/bin/headroom" run "$@"
