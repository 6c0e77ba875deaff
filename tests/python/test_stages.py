"""The stages as functions: keyword arguments checked by the command's own parser before anything
starts, a stage's result returned as a dict, its lines logged, and an interrupted stage that
resumes when called again."""

import logging
import subprocess
import sys
import textwrap

import pytest

import headroom
from conftest import SOURCE_DIR


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
    # A second run reuses every stage; they are still its stages, with the results they had.
    again = headroom.run(**options)
    assert again["stages"] == outcome["stages"]
