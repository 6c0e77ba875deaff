#!/usr/bin/env python3
"""The per-condition detection table of one or more `headroom run` results (evaluation.json), as
Markdown, written between the markers of a section of docs/detection.md (or printed).

    bench/detection_table.py --doc docs/detection.md --command "..." NAME=RUNS_ROOT/DATASET/evaluation/evaluation.json ...

Each row: one model on one test condition. Cells: F1 at the label-free decision (a threshold per
test file from its first windows, no label read) with the windows it judged and the attacks among
the adaptation windows; the label-picked per-vehicle threshold (an upper bound: it reads labels to
pick normal windows); the model's own calibrated decision; ROC AUC. Attack types not in any
training file are marked *. Standard library only.
"""
import argparse
import json
import math
import os
import sys

BEGIN = "<!-- detection-bench:begin -->"
END = "<!-- detection-bench:end -->"


def f1(metrics):
    if metrics is None:
        return "—"
    value = metrics.get("f1")
    return "n/a" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.3f}"


def auc(metrics):
    value = metrics.get("roc_auc")
    return "—" if value is None else f"{value:.3f}"


def own_decision(group):
    return group.get("calibrated_metrics", group["metrics"])


def attack_types(model, split):
    marks = []
    for group in model["groups"]:
        if group["split"] == split and "seen_in_training" in group:
            marks.append(group["attack_type"] + ("" if group["seen_in_training"] else "*"))
    return ", ".join(marks) or "—"


def rows_of(name, evaluation):
    models = {k: v for k, v in evaluation.items() if isinstance(v, dict) and "groups" in v}
    splits = []
    for model in models.values():
        for group in model["groups"]:
            if not group["attack_type"] and group["split"] != "validation" and group["split"] not in splits:
                splits.append(group["split"])
    out = []
    for split in splits:
        first = True
        best = None
        cells = []
        for model_name, model in models.items():
            group = next((g for g in model["groups"] if g["split"] == split and not g["attack_type"]), None)
            if group is None:
                continue
            lf = group.get("label_free_metrics")
            coverage = group.get("label_free_coverage")
            lf_cell = f1(lf)
            if coverage:
                lf_cell += f" ({coverage['judged']}/{coverage['windows']}, {coverage['adaptation_attack_windows']} att.)"
            score = lf.get("f1") if lf else None
            gnn_only = model_name != "baseline" and not model.get("hybrid", False)
            if gnn_only and score is not None and (best is None or score > best[1]):
                best = (model_name, score)
            cells.append((model_name, lf_cell, f1(group.get("vehicle_calibrated_metrics")), f1(own_decision(group)), auc(group["metrics"])))
        for model_name, lf_cell, picked, own, roc in cells:
            label = f"**{model_name}**" if best and model_name == best[0] else model_name
            if models[model_name].get("hybrid", False):
                label += " (hybrid)"
            condition = f"{split} ({attack_types(models[model_name], split)})" if first else ""
            out.append(f"| {name if first else ''} | {condition} | {label} | {lf_cell} | {picked} | {own} | {roc} |")
            first = False
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--doc", help="write between the markers of this Markdown file")
    parser.add_argument("--command", default="", help="the command that produced the results")
    parser.add_argument("results", nargs="+", help="NAME=path/to/evaluation.json")
    args = parser.parse_args()
    lines = [
        "| dataset | condition (attack types; * unseen in training) | model | F1 label-free (judged/windows, attacks among the adaptation windows) | F1 label-picked (upper bound) | F1 own decision | ROC AUC |",
        "|---|---|---|---|---|---|---|",
    ]
    for spec in args.results:
        name, _, path = spec.partition("=")
        with open(path) as f:
            lines += rows_of(name, json.load(f))
    table = "\n".join(lines)
    if args.command:
        table = f"Command: `{args.command}`. Bold: the best GNN model per condition at the label-free decision (a hybrid, which also reads the baseline's score, is not a GNN model alone).\n\n" + table
    if not args.doc:
        print(table)
        return
    with open(args.doc) as f:
        text = f.read()
    if BEGIN not in text or END not in text:
        sys.exit(f"{args.doc}: no {BEGIN} ... {END} markers to write between")
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    with open(args.doc + ".tmp", "w") as f:
        f.write(head + BEGIN + "\n" + table + "\n" + END + tail)
    os.replace(args.doc + ".tmp", args.doc)


if __name__ == "__main__":
    main()
