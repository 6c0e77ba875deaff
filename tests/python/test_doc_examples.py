"""The Python examples of the documents, run as a reader would run them: every ```python block of
docs/python.md in order in one namespace (each continues the last, as one script), then the
README's block, each in a fresh working directory whose stores/hcrl_sa is a small synthetic
store and ../shared/data/can/hcrl_sa a small synthetic dataset. An example that breaks (a renamed
function, a changed keyword) fails here, naming the block's first line."""

import os
import pathlib
import re

import pytest
import torch

from conftest import SOURCE_DIR, run_headroom


def python_blocks(markdown: pathlib.Path):
    """(first line number, code) of every ```python block, in order."""
    text = markdown.read_text()
    blocks = []
    for match in re.finditer(r"^```python\n(.*?)^```", text, re.S | re.M):
        blocks.append((text.count("\n", 0, match.start()) + 2, match.group(1)))
    return blocks


@pytest.fixture()
def reader_directory(tmp_path, monkeypatch):
    """A new user's working directory, made current for the test."""
    dataset = tmp_path / "shared" / "data" / "can" / "hcrl_sa"
    work = tmp_path / "work"
    work.mkdir()
    run_headroom("generate", "--out", dataset, "--frames", 20000, "--seed", 3)
    run_headroom("preprocess", dataset, "--out", work / "stores" / "hcrl_sa", "--threads", 1)
    monkeypatch.chdir(work)
    return work


def run_blocks(markdown: pathlib.Path) -> dict:
    namespace = {"__name__": "__doc_example__"}
    blocks = python_blocks(markdown)
    assert blocks, f"{markdown} has no python block"
    for line, code in blocks:
        where = f"{markdown.relative_to(SOURCE_DIR)}:{line}"
        exec(compile(code, where, "exec"), namespace)  # a traceback names the document's line
    return namespace


def test_python_doc_examples_run_in_order(reader_directory):
    names = run_blocks(SOURCE_DIR / "docs" / "python.md")
    # What the examples promise, where running without an exception would not show it.
    assert len(names["store"]) > 0
    assert names["measured"].peak_bytes >= names["nodes"].numel() * 4
    assert names["cost"].predict(100, 200, 4) > names["cost"].predict(10, 20, 1) > 0
    assert len(names["sampler"]) >= 1
    assert names["plan"]["mode"] == "static"
    assert len(names["mine"]) == 200
    assert pathlib.Path(names["result"]["run_dir"]).is_dir()
    assert "evaluation" in names["everything"] and names["everything"]["stages"]


def test_readme_python_example_runs(reader_directory):
    names = run_blocks(SOURCE_DIR / "README.md")
    assert names["plan"]["model"].startswith("teacher gat")
    assert len(names["mine"]) == 100
    assert (pathlib.Path(names["result"]["run_dir"]) / "best.pt").is_file()
