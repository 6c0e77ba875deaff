"""headroom.plan: the numbers `headroom plan --json` prints, with the command's own flags."""

import json

import pytest

import headroom
from conftest import run_headroom


def test_the_static_plan_equals_the_command(synthetic_store):
    from_python = headroom.plan(headroom.Store(synthetic_store), model="gat,student",
                                budget="256MiB", mode="static", batch_size=512)
    printed = run_headroom("plan", "--store", synthetic_store, "--preset", "gat,student",
                           "--memory-budget", "256MiB", "--mode", "static", "--batch-size", 512,
                           "--json").stdout
    from_command = json.loads(printed)
    for volatile in ("host",):  # the process's own memory differs between the two processes
        from_python.pop(volatile)
        from_command.pop(volatile)
    assert from_python == from_command
    assert from_python["mode"] == "static"
    assert from_python["budget_bytes"] == 256 * 2**20


def test_a_measured_plan_reuses_the_fit_the_command_stored(synthetic_store):
    printed = run_headroom("plan", "--store", synthetic_store, "--preset", "gat,student",
                           "--memory-budget", "512MB", "--json").stdout
    from_command = json.loads(printed)
    from_python = headroom.plan(synthetic_store, model="gat,student", budget="512MB")
    assert from_python["fit_cache"]["hit"]
    assert from_python["fit"] == from_command["fit"]
    assert from_python["fit_cache"]["file"] == from_command["fit_cache"]["file"]


def test_flags_are_checked_by_the_commands_definitions(synthetic_store):
    with pytest.raises(headroom.OptionError, match="--no-such-flag"):
        headroom.plan(synthetic_store, model="gat,student", no_such_flag=1)
    with pytest.raises(headroom.OptionError, match="--precision"):
        headroom.plan(synthetic_store, model="gat,student", precision="fp7")
    with pytest.raises(headroom.StoreError):
        headroom.plan(synthetic_store.parent / "missing", model="gat,student")


# Planning runs training steps with the command's settings (threads, the CPU tensor budget); none of
# them may stay behind in the caller's process.
def test_planning_leaves_the_callers_threads_and_budget_as_they_were(synthetic_store):
    import torch

    torch.set_num_threads(3)
    headroom._headroom.set_cpu_tensor_budget(0)
    plan = headroom.plan(synthetic_store, model="gat,student", budget="256MiB", threads=1,
                         batch_size=64)
    assert plan["budget_bytes"] == 256 * 2**20  # a budget the plan applied, in its own process
    assert torch.get_num_threads() == 3
    assert headroom._headroom.cpu_tensor_budget() == 0
    headroom._headroom.set_cpu_tensor_budget(2**40)
    try:
        headroom.plan(synthetic_store, model="gat,student", budget="256MiB", threads=1,
                      batch_size=64)
        assert headroom._headroom.cpu_tensor_budget() == 2**40
    finally:
        headroom._headroom.set_cpu_tensor_budget(0)
