"""headroom.plan: the memory plan that `headroom plan` prints, as a dict."""

from __future__ import annotations

import json
import os

from . import _headroom


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
    :class:`headroom.OptionError` with the command's message. Measured mode runs training steps in
    this process (fits are cached as the command caches them).
    """
    path = store.path if hasattr(store, "path") else os.fspath(store)
    args = ["--store", path]
    if model is not None:
        args += ["--preset", model]
    if budget is not None:
        args += ["--memory-budget", _flag_value(budget)]
    for name, value in options.items():
        args += ["--" + name.replace("_", "-"), _flag_value(value)]
    return json.loads(_headroom.plan_json(args))
