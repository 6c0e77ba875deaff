#!/usr/bin/env python3
"""Compares two `headroom run` result trees: losses in every metrics.jsonl and every number in
evaluation.json, timings and memory aside. Usage: compare_runs.py BEFORE_RUNS AFTER_RUNS"""
import json, sys, pathlib, math
SKIP = ("seconds", "second", "time", "bytes", "rss", "memory", "per_s", "throughput", "mib", "checkpoint", "peak")
def numbers(x, path=""):
    if isinstance(x, dict):
        for k, v in x.items():
            if any(s in k.lower() for s in SKIP): continue
            yield from numbers(v, f"{path}/{k}")
    elif isinstance(x, list):
        for i, v in enumerate(x): yield from numbers(v, f"{path}[{i}]")
    elif isinstance(x, (int, float)) and not isinstance(x, bool):
        yield path, float(x)
def losses(f):
    out = []
    for line in f.read_text().splitlines():
        rec = json.loads(line)
        out.append({k: v for k, v in rec.items() if "loss" in k and isinstance(v, (int, float))})
    return out
before, after = map(pathlib.Path, sys.argv[1:3])
worst, compared, bad = 0.0, 0, []
for b in sorted(before.rglob("metrics.jsonl")) + sorted(before.rglob("evaluation.json")):
    a = after / b.relative_to(before)
    if not a.exists(): bad.append(f"missing {a}"); continue
    if b.name == "metrics.jsonl":
        lb, la = losses(b), losses(a)
        if len(lb) != len(la): bad.append(f"{b}: {len(lb)} vs {len(la)} lines"); continue
        pairs = [(f"{b}:{i}:{k}", x[k], y.get(k)) for i, (x, y) in enumerate(zip(lb, la)) for k in x]
    else:
        nb, na = dict(numbers(json.loads(b.read_text()))), dict(numbers(json.loads(a.read_text())))
        pairs = [(f"{b}{k}", v, na.get(k)) for k, v in nb.items()]
    for name, x, y in pairs:
        compared += 1
        if y is None: bad.append(f"{name}: absent after"); continue
        if math.isnan(x) and math.isnan(y): continue
        d = abs(x - y); worst = max(worst, d)
        if d > 0: bad.append(f"{name}: {x} vs {y}")
print(f"compared {compared} numbers; largest difference {worst}")
for line in bad[:20]: print(line)
sys.exit(1 if bad else 0)
