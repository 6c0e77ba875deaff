"""examples/pyg_train.py run exactly as docs/python.md shows it (the command is read from the
document), in a reader's working directory whose stores/hcrl_sa is the hcrl_sa dataset
preprocessed (the shared data's; a synthetic dataset where that is absent): it prints a line per
epoch as the epoch ends (loss, tensor peak against the budget, elapsed), then a last line saying
the budget held, and finishes in CPU time (its default was once upstream's teacher: 15 minutes
without a line of output)."""

import os
import pathlib
import re
import shlex
import subprocess
import sys
import time

import pytest

from conftest import SOURCE_DIR, run_headroom

SHARED_DATA = pathlib.Path(
    os.environ.get("HEADROOM_SHARED_DATA_DIR", SOURCE_DIR.parent / "shared" / "data"))
DOC = SOURCE_DIR / "docs" / "python.md"
EXAMPLE = SOURCE_DIR / "examples" / "pyg_train.py"
PYTHON = "~/.cache/headroom/venv/bin/python"  # the documented interpreter; the test runs its own

EPOCH = re.compile(
    r"^epoch (\d+)/(\d+): loss ([0-9.]+), tensor peak ([0-9.]+) MiB of ([0-9.]+) MiB budget "
    r"\((\d+)%\), (\d+) batches, ([0-9.]+) s \(elapsed ([0-9.]+) s\), "
    r"validation accuracy ([0-9.]+)$")
HELD = re.compile(
    r"^budget held: tensor peak ([0-9.]+) MiB <= budget ([0-9.]+) MiB; process peak RSS (\d+) MiB "
    r"= tensor peak \+ (\d+) MiB outside the budget; elapsed ([0-9.]+) s$")


def documented_commands() -> list[str]:
    """The example's command lines in docs/python.md, in order."""
    return re.findall(rf"^{re.escape(PYTHON)} examples/pyg_train\.py .*$", DOC.read_text(), re.M)


def test_the_documented_commands_are_the_examples_own():
    commands = documented_commands()
    assert len(commands) == 2, commands  # the CPU-sized default, then --full
    assert "--full" not in commands[0] and "--full" in commands[1], commands
    docstring = EXAMPLE.read_text().split('"""')[1]
    for command in commands:
        assert f"    {command}" in docstring, f"the example's docstring lacks {command!r}"


@pytest.fixture()
def reader_directory(tmp_path):
    """A working directory with the repository's examples/ and stores/hcrl_sa."""
    work = tmp_path / "work"
    work.mkdir()
    (work / "examples").symlink_to(SOURCE_DIR / "examples")
    dataset = SHARED_DATA / "can" / "hcrl_sa"
    if not dataset.is_dir():
        dataset = tmp_path / "hcrl_sa"
        run_headroom("generate", "--out", dataset, "--frames", 60000, "--seed", 3)
    run_headroom("preprocess", dataset, "--out", work / "stores" / "hcrl_sa", "--threads", 2)
    return work


def test_the_documented_command_prints_progress_and_holds_its_budget(reader_directory):
    command = shlex.split(documented_commands()[0])
    assert command[0] == PYTHON
    epochs = int(command[command.index("--epochs") + 1])
    budget_mib = int(command[command.index("--budget") + 1].removesuffix("MB")) * 1e6 / 2**20
    started = time.monotonic()
    child = subprocess.Popen([sys.executable, *command[1:]], cwd=reader_directory,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines = []  # (seconds since start, line), as each line reaches the pipe
    for line in child.stdout:
        lines.append((time.monotonic() - started, line.rstrip("\n")))
    assert child.wait() == 0, "\n".join(line for _, line in lines)
    output = "\n".join(line for _, line in lines)

    progress = [(when, EPOCH.match(line)) for when, line in lines if EPOCH.match(line)]
    assert [int(match[1]) for _, match in progress] == list(range(1, epochs + 1)), output
    for _, match in progress:
        assert int(match[2]) == epochs
        assert 0 < float(match[3]) < 10, output  # a loss, not nan
        assert float(match[5]) == pytest.approx(budget_mib, abs=0.05), output
        assert 0 < float(match[4]) <= float(match[5]), output  # the epoch's peak within budget
    elapsed = [float(match[9]) for _, match in progress]
    assert elapsed == sorted(elapsed), output

    final_when, final = lines[-1]
    held = HELD.match(final)
    assert held, f"the last line does not say the budget held:\n{output}"
    peak, budget, rss, outside, total = map(float, held.groups())
    assert budget == pytest.approx(budget_mib, abs=0.05)
    assert peak == max(float(match[4]) for _, match in progress) and peak <= budget
    assert rss > peak and outside == pytest.approx(rss - peak, abs=1.5), final
    # Lines reach a pipe as they are printed, not all at exit (a 15-minute silence once).
    assert progress[0][0] < final_when - 0.2, output
    # CPU-sized: about a minute on two idle cores; the teacher default took 15 minutes.
    assert total < 240, output
