"""The stages as functions: keyword arguments checked by the command's own parser before anything
starts, a stage's result returned as a dict, its lines logged, and an interrupted stage that
resumes when called again."""

import json
import logging
import os
import pathlib
import subprocess
import sys
import textwrap

import pytest

import headroom
from conftest import SOURCE_DIR

SHARED_DATA = pathlib.Path(os.environ.get("HEADROOM_SHARED_DATA_DIR", SOURCE_DIR.parent / "shared" / "data"))


def test_keyword_arguments_are_the_commands_flags():
    assert headroom.stages.arguments("normal", store="s", max_epochs=3, preset="gcn,student") == [
        "normal", "--store", "s", "--max-epochs", "3", "--preset", "gcn,student"]
    assert headroom.stages.arguments("evaluation", store="s", models=["a", "b"]) == [
        "evaluation", "--store", "s", "--models", "a", "b"]
    flags = {name: takes for name, takes, _, _ in headroom._headroom.command_flags("run")}
    assert flags["regenerate"] is False and flags["max-epochs"] is True


@pytest.mark.parametrize("options, message", [
    (dict(max_epoch=3), "max-epoch"),
    (dict(precision="fp64"), "precision"),
    (dict(calibration="auc"), "calibration"),
])
def test_a_bad_option_raises_before_anything_runs(tmp_path, synthetic_store, options, message):
    with pytest.raises(headroom.OptionError, match=message):
        headroom.normal(synthetic_store, runs_dir=tmp_path / "runs", **options)
    assert not (tmp_path / "runs").exists()


def test_a_configuration_the_command_refuses_is_refused_before_the_child_starts(
        tmp_path, synthetic_store):
    with pytest.raises(ValueError, match="giant"):
        headroom.normal(synthetic_store, preset="gat,giant", runs_dir=tmp_path / "runs")
    assert not (tmp_path / "runs").exists()


def test_a_stage_returns_its_result_and_logs_its_lines(tmp_path, synthetic_store, caplog):
    lines = []
    with caplog.at_level(logging.INFO, logger="headroom"):
        result = headroom.normal(synthetic_store, preset="gcn,student", max_epochs=2,
                                 batch_size=64, threads=1, runs_dir=tmp_path / "runs",
                                 on_line=lines.append)
    assert result["run_dir"] == str(tmp_path / "runs" / "store" / "student_normal_gcn")
    assert result["training"]["epochs"] == 2
    assert any(line.startswith("epoch   2/2") for line in lines), lines
    assert any("epoch   1/2" in record.getMessage() for record in caplog.records)
    evaluation = headroom.evaluation(synthetic_store, runs_dir=tmp_path / "runs", threads=1)
    assert evaluation["run_dir"] == str(tmp_path / "runs" / "store" / "evaluation")
    groups = evaluation["student_normal_gcn"]["groups"]
    assert any(group["split"].startswith("test_") and group["metrics"]["count"] > 0
               for group in groups), groups


def test_a_failing_stage_raises_with_the_commands_error(tmp_path, synthetic_store):
    with pytest.raises(headroom.CommandError, match="teacher"):
        headroom.normal(synthetic_store, preset="gat,student", use_kd=True,
                        teacher_path=tmp_path / "no-teacher", runs_dir=tmp_path / "runs")


# Ctrl-C arrives in the caller as KeyboardInterrupt; here the progress callback raises it after
# epoch 3, in a separate interpreter, and a second call finishes the run from where it stopped.
INTERRUPTED = textwrap.dedent("""
    import sys, headroom
    def stop_after_epoch_3(line):
        if line.startswith("epoch   3/"):
            raise KeyboardInterrupt
    try:
        headroom.normal(sys.argv[1], preset="gcn,student", max_epochs=40, patience=100,
                        batch_size=64, threads=1, runs_dir=sys.argv[2],
                        on_line=stop_after_epoch_3)
    except KeyboardInterrupt:
        print("interrupted")
""")


def test_an_interrupted_stage_resumes_when_called_again(tmp_path, synthetic_store):
    out = subprocess.run([sys.executable, "-c", INTERRUPTED, str(synthetic_store),
                          str(tmp_path / "runs")], check=True, capture_output=True, text=True)
    assert out.stdout.strip().endswith("interrupted"), out
    run_dir = tmp_path / "runs" / "store" / "student_normal_gcn"
    assert (run_dir / "last.pt").exists() and not (run_dir / "result.json").exists()
    result = headroom.normal(synthetic_store, preset="gcn,student", max_epochs=40, patience=100,
                             batch_size=64, threads=1, runs_dir=tmp_path / "runs")
    # Stopped after epoch 3's line, before or after its checkpoint: it resumes after epoch 2 or 3.
    assert result["training"]["resumed_after"] in (2, 3), result
    assert result["training"]["epochs"] == 40


def test_run_chains_every_stage_on_the_synthetic_default(tmp_path):
    options = dict(synthetic_dir=tmp_path / "data", store=tmp_path / "store",
                   runs_dir=tmp_path / "runs", frames=30000, max_epochs=2, batch_size=128,
                   threads=1, vgae_hidden="32,16", latent=8, progress=False)
    outcome = headroom.run(**options)
    assert outcome["runs"] == str(tmp_path / "runs" / "store")
    assert {"teacher_autoencoder", "teacher_curriculum", "student_curriculum_kd",
            "hybrid_logistic"} <= set(outcome["stages"]), outcome["stages"].keys()
    # --max-epochs bounds the graph stages (fusions and the hybrid have their own --fusion-epochs).
    assert all(stage["training"]["epochs"] <= 2 for name, stage in outcome["stages"].items()
               if not name.startswith(("fusion", "hybrid"))), outcome["stages"]
    assert "teacher_curriculum" in outcome["evaluation"], outcome["evaluation"].keys()
    manifest = outcome["manifest"]
    assert manifest["complete"] and manifest["task"] == "graph classification"
    assert manifest["evaluation"] == "evaluation/evaluation.json"
    # The store's identity is its manifest's seal, which covers every array's checksum.
    store_manifest = json.loads((tmp_path / "store" / "manifest.json").read_text())
    assert manifest["store"]["manifest_xxh3"] == store_manifest["manifest_xxh3"]
    assert manifest["store"]["path"] == str(tmp_path / "store")
    for stage in manifest["stages"]:
        assert not stage["reused"], stage
        if not stage["name"].startswith(("fusion", "hybrid")):  # fusions plan no graph batches
            assert (tmp_path / "runs" / "store" / stage["memory_plan"]).is_file(), stage
        best = outcome["stages"][stage["name"]]["training"]["best_metrics"]
        assert stage["metric"]["value"] == best[stage["metric"]["name"]], (stage, best)
    # A second run reuses every stage; they are still its stages, with the results they had.
    again = headroom.run(**options)
    assert again["stages"] == outcome["stages"]
    assert all(stage["reused"] for stage in again["manifest"]["stages"]), again["manifest"]


# A killed run leaves a manifest listing exactly the stages it finished, marked incomplete.
def test_an_interrupted_run_leaves_a_true_partial_manifest(tmp_path):
    options = dict(synthetic_dir=tmp_path / "data", store=tmp_path / "store",
                   runs_dir=tmp_path / "runs", frames=30000, max_epochs=2, batch_size=128,
                   threads=1, vgae_hidden="32,16", latent=8, progress=False)
    seen = []

    def stop_at_the_second_stage(line):
        seen.append(line)
        if line == "== teacher_curriculum ==":
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        headroom.run(on_line=stop_at_the_second_stage, **options)
    partial = headroom.stages.read_run(tmp_path / "runs" / "store")
    assert not partial["manifest"]["complete"]
    assert [stage["name"] for stage in partial["manifest"]["stages"]] == ["teacher_autoencoder"]
    assert partial["evaluation"] is None
    assert partial["stages"]["teacher_autoencoder"]["training"]["epochs"] <= 2


def write_text_corpus(directory, documents_per_class=24):
    """A cleaned corpus in TextGCN's layout (labels.tsv, corpus.clean.txt): two classes, each with
    its own words beside shared ones; every fourth document is a test document."""
    import random
    draw = random.Random(3)
    labels, corpus = ["index\tsplit\tlabel"], []
    for number in range(2 * documents_per_class):
        label = number % 2
        labels.append(f"doc{number}\t{'test' if number % 4 == 3 else 'train'}\tclass{label}")
        corpus.append(" ".join(
            f"c{label}w{draw.randrange(10)}" if draw.random() < 0.6 else f"shared{draw.randrange(30)}"
            for _ in range(25)))
    directory.mkdir(parents=True)
    (directory / "labels.tsv").write_text("\n".join(labels) + "\n")
    (directory / "corpus.clean.txt").write_text("\n".join(corpus) + "\n")


def test_run_on_a_text_corpus_returns_its_node_stage_and_evaluation(tmp_path):
    write_text_corpus(tmp_path / "corpus")
    outcome = headroom.run(tmp_path / "corpus", store=tmp_path / "store",
                           runs_dir=tmp_path / "runs", max_epochs=5, threads=1)
    manifest = outcome["manifest"]
    assert manifest["task"] == "node classification" and manifest["complete"], manifest
    assert manifest["store"]["kind"] == "node-graph"
    [stage] = manifest["stages"]
    assert stage["metric"]["name"] == "accuracy", stage
    assert outcome["stages"][stage["name"]]["training"]["epochs"] <= 5
    evaluation = outcome["evaluation"]
    assert evaluation["task"] == "node classification", evaluation.keys()
    assert evaluation["splits"]["test"]["count"] == 12  # every fourth of 48 documents
    assert manifest["evaluation"] == f"{stage['run_dir']}/evaluation.json"


@pytest.mark.skipif(not (SHARED_DATA / "text" / "r8" / "labels.tsv").exists(),
                    reason="no shared r8 corpus")
def test_run_on_r8_returns_its_stage_and_evaluation(tmp_path):
    outcome = headroom.run(SHARED_DATA / "text" / "r8", store=tmp_path / "store",
                           runs_dir=tmp_path / "runs", max_epochs=2, threads=2)
    assert len(outcome["stages"]) == 1, outcome["manifest"]
    assert outcome["evaluation"]["splits"]["test"]["count"] == 2189
