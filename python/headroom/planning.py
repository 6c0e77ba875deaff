"""headroom.plan: the memory plan that `headroom plan` prints, as a dict."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

from . import _headroom

# The errors the child may hand back, raised again here as themselves.
_ERRORS = {error.__name__: error for error in (
    _headroom.OptionError, _headroom.StoreError, ValueError, RuntimeError, OSError)}


def _flag_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def plan(store, model: str | None = None, budget: int | str | None = None, **options) -> dict:
    """The plan of ``headroom plan --store STORE --preset MODEL --memory-budget BUDGET --json``.

    ``store`` is a path or a :class:`headroom.Store`; ``model`` a preset such as "gat,teacher" or
    "vgae,student"; every other keyword is the command's flag of that name with "-" for "_"
    (``precision="bf16-mixed"``, ``batch_size=4096``, ``mode="static"``). The flags are parsed and
    checked by the command's own definitions: an unknown or invalid one raises
    :class:`headroom.OptionError` with the command's message.

    The plan is computed in a child process (``python -m headroom._plan``): measured mode runs
    training steps and sets LibTorch's thread count and the device budget as the command does, and
    none of that may change the caller's process. Fits are cached as the command caches them.
    """
    path = store.path if hasattr(store, "path") else os.fspath(store)
    args = ["--store", path]
    if model is not None:
        args += ["--preset", model]
    if budget is not None:
        args += ["--memory-budget", _flag_value(budget)]
    for name, value in options.items():
        args += ["--" + name.replace("_", "-"), _flag_value(value)]
    with tempfile.TemporaryDirectory(prefix="headroom-plan-") as scratch:
        result_file = os.path.join(scratch, "plan.json")
        child = subprocess.run(
            [sys.executable, "-m", "headroom._plan", result_file, *args],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
        if not os.path.exists(result_file):
            raise RuntimeError(f"headroom plan stopped (exit status {child.returncode}) "
                               f"before it wrote its plan: {child.stdout[-2000:]}")
        with open(result_file) as result:
            outcome = json.load(result)
    if "error" in outcome:
        raise _ERRORS.get(outcome["error"], RuntimeError)(outcome["message"])
    return outcome["plan"]
