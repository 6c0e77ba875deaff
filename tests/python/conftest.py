"""Fixtures of the Python package's tests: a small synthetic graph store built by the headroom
binary (HEADROOM_BINARY, set by ctest; tests/CMakeLists.txt), and the raw arrays of a store read
with numpy alone (docs/store-format.md), to check the package against."""

import json
import os
import pathlib
import subprocess

import numpy as np
import pytest

SOURCE_DIR = pathlib.Path(__file__).resolve().parents[2]


def headroom_binary() -> str:
    binary = os.environ.get("HEADROOM_BINARY", str(SOURCE_DIR / "build" / "bin" / "headroom"))
    if not os.access(binary, os.X_OK):
        pytest.fail(f"no headroom binary at {binary}: build first (scripts/build.sh)")
    return binary


def run_headroom(*args) -> subprocess.CompletedProcess:
    return subprocess.run(
        [headroom_binary(), *map(str, args)], check=True, capture_output=True, text=True
    )


@pytest.fixture(scope="session")
def synthetic_store(tmp_path_factory) -> pathlib.Path:
    root = tmp_path_factory.mktemp("synthetic")
    run_headroom("generate", "--out", root / "data", "--frames", 60000, "--seed", 7)
    run_headroom("preprocess", root / "data", "--out", root / "store", "--threads", 1)
    return root / "store"


def raw_arrays(store_path: pathlib.Path) -> dict:
    """Every array of a store, read with numpy from the files the manifest lists."""
    manifest = json.loads((store_path / "manifest.json").read_text())
    arrays = {}
    for name, record in manifest["arrays"].items():
        shape = tuple(record["shape"])
        if record["bytes"] == 0:
            arrays[name] = np.zeros(shape, dtype=record["dtype"])
        else:
            arrays[name] = np.fromfile(store_path / record["file"], dtype=record["dtype"]).reshape(
                shape
            )
    return arrays


def array_file(store_path: pathlib.Path, name: str) -> pathlib.Path:
    manifest = json.loads((store_path / "manifest.json").read_text())
    return (store_path / manifest["arrays"][name]["file"]).resolve()
