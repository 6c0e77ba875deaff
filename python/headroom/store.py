"""headroom.Store: a graph store (docs/store-format.md) whose graphs are torch tensors viewing the
store's memory-mapped files."""

from __future__ import annotations

import json
import operator
import os
from typing import NamedTuple

import torch

from . import _headroom

# The arrays' names are the C++ reader's (store/store_arrays.hpp), never spelled here.
_SPLIT_ARRAYS = _headroom.split_arrays()
_SIZE_INDEX = _headroom.size_index_arrays()


_tensor = torch.from_dlpack


class Graph(NamedTuple):
    """One graph's arrays. The tensors view the store's mapping (no copy)."""

    x: torch.Tensor  # float32 [num_nodes, node_feature_count]; column 0 is the node identity
    edge_index: torch.Tensor  # int32 [2, num_edges], local node indices
    edge_attr: torch.Tensor  # float32 [num_edges, edge_feature_count]
    can_ids: torch.Tensor  # uint32 [num_nodes]: raw CAN IDs, 0xFFFFFFFF outside the vocabulary
    y: int  # graph label (1: attack)


class Store:
    """A headroom graph store, opened read-only on disk.

    ``store[i]`` is graph ``i`` as a :class:`Graph` whose tensors are views of the store's files,
    mapped copy-on-write: nothing is read until used, and writing to a tensor changes this
    process's copy only, never the store. The tensors stay valid after the store is closed.
    Raises :class:`headroom.StoreError` naming the store and the reason when it cannot be opened
    (``verify=True`` also checksums every graph array, reading the whole store once).
    """

    def __init__(self, path: str | os.PathLike, verify: bool = False):
        self._store = _headroom._Store(os.fspath(path), verify)
        self._graph = self._store.graph  # bound once: __getitem__ is the per-graph hot path
        self._metadata = None

    def __len__(self) -> int:
        return len(self._store)

    def __getitem__(self, graph_id: int) -> Graph:
        try:
            x, edge_index, edge_attr, can_ids, y = self._graph(graph_id)
        except TypeError:  # a numpy integer or a 0-d tensor: any object with __index__
            x, edge_index, edge_attr, can_ids, y = self._graph(operator.index(graph_id))
        return Graph(_tensor(x), _tensor(edge_index), _tensor(edge_attr), _tensor(can_ids), y)

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def __repr__(self) -> str:
        return f"headroom.Store({self.path!r}, {len(self)} graphs)"

    @property
    def path(self) -> str:
        return self._store.path

    @property
    def bytes_on_disk(self) -> int:
        return self._store.bytes_on_disk

    @property
    def identity_classes(self) -> int:
        """Distinct values of node feature 0, the identity a model embeds (its embedding rows):
        the CAN-ID vocabulary + 1, the identity's classes, or the dataset's (write_store)."""
        return self._store.identity_classes

    @property
    def metadata(self) -> dict:
        """The manifest's content (docs/store-format.md) as a dict."""
        if self._metadata is None:
            self._metadata = json.loads(self._store.metadata_json())
        return self._metadata

    def split(self, name: str) -> torch.Tensor:
        """The graph ids of split ``name`` ("train", "validation" or "test"), int64, ascending."""
        if name not in _SPLIT_ARRAYS:
            raise ValueError(f"no split {name!r}: the splits are {sorted(_SPLIT_ARRAYS)}")
        return torch.from_dlpack(self._store.small_array(_SPLIT_ARRAYS[name]))

    @property
    def size_index(self) -> dict[str, torch.Tensor]:
        """Per graph, int64: num_nodes, num_edges, label, split, file, attack_type, window.
        Reading it touches no graph data."""
        return {
            key: torch.from_dlpack(self._store.small_array(array))
            for key, array in _SIZE_INDEX.items()
        }

    def to_pyg(self, graph_id: int):
        """Graph ``graph_id`` as a ``torch_geometric.data.Data``. x and edge_attr stay views of the
        store; edge_index becomes int64 (PyG's index type), a copy of 16 bytes per edge."""
        from torch_geometric.data import Data

        graph = self[graph_id]
        return Data(
            x=graph.x,
            edge_index=graph.edge_index.long(),
            edge_attr=graph.edge_attr,
            y=torch.tensor([graph.y]),
        )
