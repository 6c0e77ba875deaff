#!/usr/bin/env python3
"""The Python package's speed bars (issue 28), measured in one run on one machine:

  import        `import torch; import headroom` against `import torch` alone, fresh processes
  open          headroom.Store(path) and reading graph 0, in a fresh process
  read all      every graph of the store through store[i] (and store.to_pyg(i)), against the same
                graphs read the PyG way: an InMemoryDataset's torch.load of the collated data, then
                dataset[i] for every i (upstream's processed dataset)

    PYTHONPATH=build/python ~/.cache/headroom/venv/bin/python bench/python_store_bench.py \
        stores/hcrl_sa [--repeats 5]

Prints one markdown table (docs/benchmarks.md, "From Python").
"""

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def fresh_process_seconds(code: str, repeats: int) -> float:
    """Median wall time of `python -c code` over `repeats` fresh processes (each prints its own
    measurement of the timed part, so interpreter start-up is left out)."""
    times = []
    for _ in range(repeats):
        out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                             text=True).stdout
        times.append(float(out.strip().splitlines()[-1]))
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("store")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    timer = "import time; t = time.perf_counter(); "

    torch_alone = fresh_process_seconds(timer + "import torch; print(time.perf_counter() - t)",
                                        args.repeats)
    with_headroom = fresh_process_seconds(
        timer + "import torch, headroom; print(time.perf_counter() - t)", args.repeats)
    open_read = fresh_process_seconds(
        "import headroom, time; t = time.perf_counter(); "
        f"s = headroom.Store({args.store!r}); g = s[0]; print(time.perf_counter() - t)",
        args.repeats)

    import torch
    import headroom
    from torch_geometric.data import InMemoryDataset

    store = headroom.Store(args.store)
    count = len(store)

    started = time.perf_counter()
    store = headroom.Store(args.store)
    for graph_id in range(count):
        store[graph_id]
    headroom_tensors = time.perf_counter() - started

    started = time.perf_counter()
    store = headroom.Store(args.store)
    for graph_id in range(count):
        store.to_pyg(graph_id)
    headroom_pyg = time.perf_counter() - started

    class Processed(InMemoryDataset):
        def __init__(self, path):
            super().__init__(None)
            self.data, self.slices = torch.load(path, weights_only=False)

    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "processed.pt"
        data_list = []
        for graph_id in range(count):
            data = store.to_pyg(graph_id)
            data.x, data.edge_attr = data.x.clone(), data.edge_attr.clone()
            data_list.append(data)
        torch.save(InMemoryDataset.collate(data_list), path)
        del data_list
        started = time.perf_counter()
        dataset = Processed(path)
        for graph_id in range(count):
            dataset[graph_id]
        pyg_load = time.perf_counter() - started

    print(f"| measure ({count} graphs of {args.store}) | seconds | ratio |")
    print("|---|---:|---:|")
    print(f"| `import torch` | {torch_alone:.3f} | |")
    print(f"| `import torch, headroom` | {with_headroom:.3f} | +{with_headroom - torch_alone:.3f} s |")
    print(f"| `Store(path)` and `store[0]` | {open_read * 1000:.2f} ms | |")
    print(f"| every graph, PyG `torch.load` + `dataset[i]` | {pyg_load:.2f} | 1.00 |")
    print(f"| every graph, `store[i]` | {headroom_tensors:.2f} | "
          f"{pyg_load / headroom_tensors:.1f}x faster |")
    print(f"| every graph, `store.to_pyg(i)` | {headroom_pyg:.2f} | "
          f"{pyg_load / headroom_pyg:.1f}x faster |")


if __name__ == "__main__":
    main()
