"""Measuring tensor memory in this process and fitting a step's peak, for any training step.

headroom's counting CPU allocator is installed when the package is imported: from then on every
CPU tensor that PyTorch allocates in this process is counted, so the peak of a PyG step is
measured the same way headroom measures its own. Import headroom before creating the model, so
that its parameters count too. On CUDA the caching allocator's own statistics are used.
"""

from __future__ import annotations

import contextlib
import random
from dataclasses import dataclass, field
from typing import Callable, Iterator, Sequence

import torch

from . import _headroom


def track_cpu_tensors() -> None:
    """Installs the counting CPU allocator (idempotent; done on import)."""
    _headroom.install_counting_allocator()


def tensor_memory() -> dict:
    """Live and peak CPU tensor bytes counted since the allocator was installed, and the
    process's resident set (rss_bytes) and its high-water mark (peak_rss_bytes)."""
    memory = _headroom.cpu_tensor_memory()
    memory["rss_bytes"] = _headroom.process_rss_bytes()
    memory["peak_rss_bytes"] = _headroom.process_peak_rss_bytes()
    return memory


def parse_byte_size(size: int | float | str) -> int:
    """Bytes from a number or a string such as "512MB", "1.5GiB" (headroom's own parser)."""
    if isinstance(size, str):
        return _headroom.parse_byte_size(size)
    if size <= 0:
        raise ValueError(f"a byte size must be positive, got {size}")
    return int(size)


@dataclass
class PeakMeasurement:
    peak_bytes: int = 0  # the highest live tensor bytes inside the block


@contextlib.contextmanager
def measure_peak(device: str | torch.device = "cpu") -> Iterator[PeakMeasurement]:
    """Measures the peak tensor bytes on ``device`` inside the ``with`` block (parameters, optimizer
    state and everything else alive at the time included)."""
    device = torch.device(device)
    measurement = PeakMeasurement()
    if device.type == "cuda":
        torch.cuda.synchronize(device)
        torch.cuda.reset_peak_memory_stats(device)
        yield measurement
        torch.cuda.synchronize(device)
        measurement.peak_bytes = torch.cuda.max_memory_allocated(device)
    elif device.type == "cpu":
        track_cpu_tensors()
        _headroom.reset_peak()
        yield measurement
        measurement.peak_bytes = _headroom.cpu_tensor_memory()["peak_bytes"]
    else:
        raise ValueError(f"cannot measure tensor memory on {device}")


@dataclass(frozen=True)
class CostModel:
    """Peak bytes of one training step for a batch: fixed + per node + per edge + per graph."""

    fixed_bytes: float = 0.0
    bytes_per_node: float = 0.0
    bytes_per_edge: float = 0.0
    bytes_per_graph: float = 0.0
    max_relative_error: float = 0.0  # over the probes the model was fitted to
    samples: tuple = field(default=(), compare=False)  # (nodes, edges, graphs, peak) per probe

    def predict(self, nodes: int, edges: int, graphs: int) -> float:
        return (
            self.fixed_bytes
            + self.bytes_per_node * nodes
            + self.bytes_per_edge * edges
            + self.bytes_per_graph * graphs
        )

    def coefficients(self) -> tuple[float, float, float, float]:
        return (self.fixed_bytes, self.bytes_per_node, self.bytes_per_edge, self.bytes_per_graph)

    @classmethod
    def fit(cls, samples: Sequence[tuple[int, int, int, float]]) -> "CostModel":
        """Least squares over measured (nodes, edges, graphs, peak_bytes) samples, as headroom's
        planner fits its own probes (memory/peak_model.hpp)."""
        fit = _headroom.fit_peak([tuple(sample) for sample in samples])
        return cls(
            fit["fixed_bytes"],
            fit["bytes_per_node"],
            fit["bytes_per_edge"],
            fit["bytes_per_graph"],
            fit["max_relative_error"],
            tuple(tuple(sample) for sample in samples),
        )


def _probe_batches(store, ids: Sequence[int], max_graphs: int, seed: int) -> list[list[int]]:
    """Batches of 1, 2, 4, ... max_graphs graphs, each size drawn three ways: at random, the
    largest graphs by edge count and the smallest, so that nodes, edges and graphs do not move in
    lockstep (graphs of one store are often of similar size) and the fit can tell them apart."""
    num_edges = store.size_index["num_edges"]
    by_size = sorted(ids, key=lambda graph: int(num_edges[graph]))
    rng = random.Random(seed)
    batches, count = [], 1
    while count <= min(max_graphs, len(ids)):
        batches.append(rng.sample(list(ids), count))
        batches.append(by_size[-count:])
        batches.append(by_size[:count])
        count *= 2
    return batches


def fit_step_cost(
    step: Callable[[list[int]], None],
    store,
    ids: Sequence[int] | torch.Tensor | None = None,
    device: str | torch.device = "cpu",
    max_graphs: int = 256,
    seed: int = 0,
) -> CostModel:
    """Fits the peak bytes of *your* training step: runs ``step(batch_ids)`` (forward, backward and
    optimizer step on those graphs of ``store``) on probe batches of 1 to ``max_graphs`` graphs
    drawn from ``ids`` (default: the training split; random, largest and smallest graphs), measures each step's peak tensor bytes and
    fits a :class:`CostModel` to them. One warm-up step first, so that lazily created optimizer
    state is in every measurement. The probes train the model: fit before training, or on a copy.
    """
    if ids is None:
        ids = store.split("train")
    ids = [int(graph) for graph in ids]
    if len(ids) < 2:
        raise ValueError("fitting a step's cost needs at least 2 graphs to probe")
    batches = _probe_batches(store, ids, max_graphs, seed)
    step(batches[0])  # warm-up
    index = store.size_index
    samples = []
    for batch in batches:
        with measure_peak(device) as measured:
            step(batch)
        nodes = int(index["num_nodes"][batch].sum())
        edges = int(index["num_edges"][batch].sum())
        samples.append((nodes, edges, len(batch), float(measured.peak_bytes)))
    return CostModel.fit(samples)


track_cpu_tensors()
