"""The pipeline's stages as functions: ``headroom.normal(store, preset="gcn,student",
max_epochs=20)`` runs what ``headroom normal --store STORE --preset gcn,student --max-epochs 20``
runs and returns its result as a dict.

Keyword arguments are the command's flags with ``_`` for ``-``, checked by the command's own
parser before anything starts (an unknown name or a bad value raises ``OptionError`` with the
command line's message); there is no second list of options here. A stage runs headroom-train's
main in a child process (``python -m headroom._main``), so its memory and its budget are its own and
the calling interpreter stays responsive; its output lines go to the ``headroom`` logger (INFO)
and to ``on_line(line)`` when given. Ctrl-C (KeyboardInterrupt) stops the stage as it stops the command
line, and calling the function again resumes the run from its last completed epoch.
"""

from __future__ import annotations

import collections
import json
import logging
import os
import pathlib
import signal
import subprocess
import sys
from typing import Callable, Optional

from . import _headroom

logger = logging.getLogger("headroom")

LineCallback = Callable[[str], None]


class CommandError(RuntimeError):
    """A stage's child process failed; ``str()`` is its error line, ``output`` its last lines."""

    def __init__(self, command: str, returncode: int, output: list[str]):
        errors = [line for line in output if line.startswith("headroom: error:")]
        message = errors[-1] if errors else (output[-1] if output else f"exit status {returncode}")
        super().__init__(f"headroom {command} failed: {message}")
        self.command = command
        self.returncode = returncode
        self.output = output


def _value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    return str(value)


def arguments(command: str, positional: tuple = (), **options) -> list[str]:
    """The command line ``headroom COMMAND`` takes for these keyword arguments: ``max_epochs=20``
    is ``--max-epochs 20``; ``True`` gives a flag that takes no value, ``False`` and ``None`` leave
    it out; a list or tuple gives a flag that repeats its values. Names the command does not have
    are passed on for its parser to refuse."""
    flags = {name: (takes_value, repeats)
             for name, takes_value, repeats, _ in _headroom.command_flags(command)}
    args = [command, *map(_value, positional)]
    for key, value in options.items():
        name = key.replace("_", "-")
        takes_value, repeats = flags.get(name, (True, False))
        if value is None:
            continue
        if not takes_value:
            if value is True:
                args.append(f"--{name}")
            elif value is not False:
                raise _headroom.OptionError(f"--{name} is a flag: pass True or False, not {value!r}")
            continue
        if isinstance(value, (list, tuple)):
            args += [f"--{name}", *map(_value, value)]
        else:
            args += [f"--{name}", _value(value)]
    return args


def _run(args: list[str], on_line: Optional[LineCallback]) -> None:
    """Runs headroom-train's main on ``args`` in a child process, streaming its lines."""
    tail = collections.deque(maxlen=40)
    child = subprocess.Popen(
        [sys.executable, "-m", "headroom._main", *args],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    try:
        for line in child.stdout:
            line = line.rstrip("\n")
            tail.append(line)
            logger.info("%s", line)
            if on_line is not None:
                on_line(line)
        returncode = child.wait()
    except BaseException:
        # KeyboardInterrupt (or the callback's own exception): stop the child as Ctrl-C stops the
        # command line; its run resumes from its last epoch when called again.
        if child.poll() is None:
            child.send_signal(signal.SIGINT)
        child.wait()
        raise
    finally:
        child.stdout.close()
    if returncode != 0:
        raise CommandError(args[0], returncode, list(tail))


def _read_json(path: pathlib.Path) -> dict:
    return json.loads(path.read_text())


def _stage(command: str, store, on_line, options) -> dict:
    args = arguments(command, store=store, **options)
    _headroom.check_arguments(args)
    run_dir = pathlib.Path(_headroom.stage_run_directory(args))
    _run(args, on_line)
    name = "evaluation.json" if command == "evaluation" else "result.json"
    result = _read_json(run_dir / name)
    result["run_dir"] = str(run_dir)
    return result


def autoencoder(store, *, on_line: Optional[LineCallback] = None, **options) -> dict:
    """``headroom autoencoder --store STORE ...``: the VGAE (stage 1). Returns result.json."""
    return _stage("autoencoder", store, on_line, options)


def curriculum(store, *, on_line: Optional[LineCallback] = None, **options) -> dict:
    """``headroom curriculum --store STORE ...``: the GAT with the VGAE-guided curriculum."""
    return _stage("curriculum", store, on_line, options)


def normal(store, *, on_line: Optional[LineCallback] = None, **options) -> dict:
    """``headroom normal --store STORE ...``: a graph classifier, plain supervised."""
    return _stage("normal", store, on_line, options)


def fusion(store, *, on_line: Optional[LineCallback] = None, **options) -> dict:
    """``headroom fusion --store STORE ...``: the classifier's and the VGAE's scores, fused."""
    return _stage("fusion", store, on_line, options)


def evaluation(store, *, on_line: Optional[LineCallback] = None, **options) -> dict:
    """``headroom evaluation --store STORE ...``: every trained model per split and attack type.
    Returns evaluation.json (one entry per model, its groups and metrics)."""
    return _stage("evaluation", store, on_line, options)


def run(dataset=None, *, on_line: Optional[LineCallback] = None, **options) -> dict:
    """``headroom run [DATASET] ...``: the whole pipeline (the synthetic default without a dataset;
    a text corpus's node stage for a corpus). Returns :func:`read_run` of the run it wrote: every
    stage it ran or reused and the evaluation, as its run manifest lists them."""
    positional = () if dataset is None else (dataset,)
    args = arguments("run", positional, **options)
    _headroom.check_arguments(args)
    manifest = pathlib.Path(_headroom.run_manifest_path(args))
    _run(args, on_line)
    return read_run(manifest.parent)


def read_run(runs) -> dict:
    """What a ``headroom run`` wrote under ``runs`` (``runs/{dataset}``), read from its run
    manifest (``run_manifest.json``, written by the command; docs/architecture.md):
    ``{"runs": directory, "manifest": the manifest as a dict, "stages": {run directory name:
    result.json with "run_dir" added}, "evaluation": the evaluation's JSON or None}``. Raises
    ``FileNotFoundError`` naming the file when there is no manifest (not a run root, or a run
    from before manifests)."""
    runs = pathlib.Path(runs)
    manifest = _read_json(runs / _headroom.RUN_MANIFEST_FILE)
    stages = {}
    for stage in manifest["stages"]:
        result = _read_json(runs / stage["result"]) if stage["result"] else {}
        result["run_dir"] = str(runs / stage["run_dir"])
        stages[stage["name"]] = result
    evaluation = manifest["evaluation"]
    return {"runs": str(runs), "manifest": manifest, "stages": stages,
            "evaluation": _read_json(runs / evaluation) if evaluation else None}
