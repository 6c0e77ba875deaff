"""headroom.write_store: any graph-classification dataset (PyG Data objects, or tensors) written into
a headroom graph store, streamed, atomically, so that the store, the planner, the sampler and the
training commands work on it."""

from __future__ import annotations

import os
from typing import Callable, Iterable, Sequence

import torch

from . import _headroom
from .store import Store


def _field(graph, name):
    if isinstance(graph, dict):
        return graph.get(name)
    return getattr(graph, name, None)


def _label(y, number: int) -> int:
    if isinstance(y, torch.Tensor):
        if y.numel() != 1:
            raise ValueError(f"graph {number}: y has {y.numel()} values; a graph has one label")
        return int(y.reshape(()).item())
    if y is None:
        raise ValueError(f"graph {number}: no label (y)")
    return int(y)


def _split_of(split, number: int, graph) -> str:
    if split is None:
        return "train"
    if isinstance(split, str):
        return split
    if callable(split):
        return split(number, graph)
    return split[number]


def write_store(
    path: str | os.PathLike,
    graphs: Iterable,
    *,
    split: str | Sequence[str] | Callable[[int, object], str] | None = None,
    identity_classes: int | None = None,
    validation_fraction: float = 0.2,
    seed: int = 0,
    force: bool = False,
) -> Store:
    """Writes ``graphs`` into a new graph store at ``path`` and returns it opened.

    ``graphs`` is any iterable (read once, one graph at a time: a generator never has to fit in
    memory) of ``torch_geometric.data.Data`` objects, or of objects or dicts with ``x`` (float
    [nodes, features]), ``edge_index`` (int [2, edges]), optionally ``edge_attr`` (float
    [edges, edge features]) and ``y`` (the graph's label, 0 or 1). Every graph has the same feature
    widths.

    Graphs with ``pos`` (float [nodes, 2 or 3], PyG's name for node positions) make a geometric
    store (docs/store-format.md, "Geometric stores"): positions beside the features and each
    graph's 1st-, 2nd- and 3rd-order path counts in the size index; ``parent`` (int [nodes], -1
    for a root) adds each node's parent in a tree. Either every graph has them or none.

    headroom's models embed a node identity, feature 0. With ``identity_classes=None`` the store
    gets a constant identity (a zero column before ``x``: every node one class); with
    ``identity_classes=K``, column 0 of ``x`` already holds each node's class, a whole number in
    [0, K) (an atom type, a node label).

    ``split`` says which graphs are test graphs: None (all train), "train" or "test" for all, a
    sequence with one entry per graph, or ``split(number, graph)``. The store holds the training
    graphs first, then the test graphs, each in the order given (graph ids follow that order). ``validation_fraction`` of the
    training graphs (seeded by ``seed``) become the validation split. The store is built in a
    staging directory and renamed into place when complete; ``force`` replaces an existing
    headroom store (never anything else). Bad input raises ``ValueError`` naming the graph.
    """
    path = os.fspath(path)
    writer = None
    widths = None
    for number, graph in enumerate(graphs):
        x = _field(graph, "x")
        edge_index = _field(graph, "edge_index")
        if x is None or edge_index is None:
            raise ValueError(f"graph {number}: needs x and edge_index")
        x = torch.as_tensor(x, dtype=torch.float32)
        if x.dim() != 2:
            raise ValueError(f"graph {number}: x has shape {tuple(x.shape)}, not [nodes, features]")
        if identity_classes is None:
            x = torch.cat([torch.zeros(x.shape[0], 1), x], dim=1)
        edge_index = torch.as_tensor(edge_index, dtype=torch.int64)
        if edge_index.dim() != 2 or edge_index.shape[0] != 2:
            raise ValueError(
                f"graph {number}: edge_index has shape {tuple(edge_index.shape)}, not [2, edges]")
        edges = edge_index.t().contiguous()
        edge_attr = _field(graph, "edge_attr")
        if edge_attr is None:
            edge_attr = torch.zeros(edges.shape[0], 0)
        edge_attr = torch.as_tensor(edge_attr, dtype=torch.float32).reshape(edges.shape[0], -1)
        pos = _field(graph, "pos")
        pos = (torch.zeros(x.shape[0], 0) if pos is None
               else torch.as_tensor(pos, dtype=torch.float32))
        if pos.dim() != 2:
            raise ValueError(f"graph {number}: pos has shape {tuple(pos.shape)}, not [nodes, 2 or 3]")
        parent = _field(graph, "parent")
        parent = (torch.zeros(0, dtype=torch.int64) if parent is None
                  else torch.as_tensor(parent, dtype=torch.int64).reshape(-1))
        if widths is None:
            widths = (x.shape[1], edge_attr.shape[1], pos.shape[1], parent.numel() > 0)
            writer = _headroom._GraphWriter(
                path, widths[0], widths[1], identity_classes or 1, validation_fraction, seed,
                force, f"headroom {_headroom.__version__} write_store (Python)", widths[2],
                widths[3])
        shape = (x.shape[1], edge_attr.shape[1], pos.shape[1], parent.numel() > 0)
        if shape != widths:
            raise ValueError(
                f"graph {number}: {shape[0]} node and {shape[1]} edge features, positions of "
                f"{shape[2]} dimensions, {'' if shape[3] else 'no '}parents; the first graph "
                f"{widths[0]} and {widths[1]}, {widths[2]}, {'' if widths[3] else 'no '}parents")
        writer.append(x.contiguous(), edges, edge_attr.contiguous(),
                      _label(_field(graph, "y"), number), _split_of(split, number, graph),
                      pos.contiguous(), parent.contiguous())
    if writer is None:
        raise ValueError("no graphs to write")
    writer.commit()
    return Store(path)
