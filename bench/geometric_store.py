#!/usr/bin/env python3
"""A small reader of headroom's geometric graph stores (docs/store-format.md, "Geometric stores")
into torch_geometric `Data` objects, for the PyG reference of SGMP / GT-SSL (issue 48,
bench/sgmp_reference.py).

Everything is read through numpy memmaps of the arrays the manifest's `arrays` table lists (file,
dtype, shape), never by guessing file names: opening a store maps its arrays and reads nothing
else. A store without node positions (no `geometry` in its manifest) is refused, naming it.

    from geometric_store import GeometricStore
    store = GeometricStore("/tmp/trees")
    data = store.graph(0)            # Data(x, pos, edge_index, parent?, y | target, split, ...)
    train = store.dataset("train")   # list of Data, the ids of split_train

Fields of a graph's `Data`:
  x          float32 [n, F]   node features as stored (feature 0 is the identity class)
  pos        float32 [n, D]   positions, D = 2 or 3 as stored (the encoder pads 2-D with z = 0)
  edge_index int64   [2, e]   (source, target) per directed edge, local node indices
  parent     int64   [n]      each node's parent (local), -1 for a root; only with
                              geometry.parents. Not shifted by PyG's collate (its name has no
                              "index"); bench/sgmp_reference.py shifts it by the batch's ptr.
  y          int64   [1]      graph_label (classification)
  target     float32 [1]      graph_target, in the manifest's unit (QM9: hartree); only with
                              graph_target
  num_paths  int64   [1, 3]   the store's graph_num_paths row (1st-, 2nd-, 3rd-order paths)
  graph_id   int64   [1]      the graph's id in the store
  split      str              the split list the graph was read through (train, validation,
                              test), or the name in manifest.splits for graph(g) alone
"""

import json
import pathlib

import numpy as np
import torch
from torch_geometric.data import Data

SPLIT_ARRAYS = {"train": "split_train", "validation": "split_validation", "test": "split_test"}


class StoreError(ValueError):
    """A directory that is not a geometric graph store this reader can read."""


class GeometricStore:
    def __init__(self, path):
        self.path = pathlib.Path(path)
        manifest_path = self.path / "manifest.json"
        if not manifest_path.is_file():
            raise StoreError(f"{self.path}: not a graph store (no manifest.json)")
        self.manifest = json.loads(manifest_path.read_text())
        if self.manifest.get("format") != "headroom-graph-store":
            raise StoreError(f"{self.path}: manifest format is {self.manifest.get('format')!r}, "
                             "not 'headroom-graph-store'")
        if self.manifest.get("kind", "windows") != "windows":
            raise StoreError(f"{self.path}: a {self.manifest['kind']!r} store holds one graph of "
                             "classified nodes, not graphs with geometry")
        geometry = self.manifest.get("geometry")
        if not geometry:
            raise StoreError(
                f"{self.path}: the store has no node positions (its manifest has no 'geometry'), "
                "so SGMP / GT-SSL cannot read it; write a geometric store with `headroom "
                "generate-trees`, `headroom import-qm9` or `headroom import-graphs --geometric`")
        self.position_dimensions = int(geometry["position_dimensions"])
        self.has_parents = bool(geometry.get("parents", False))
        self.target = self.manifest.get("graph_target")  # {name, unit} or None
        self.arrays = {}
        for name, spec in self.manifest["arrays"].items():
            file = spec["file"]
            if "/" in file or file in (".", ".."):
                raise StoreError(f"{self.path}: array {name!r} names {file!r}, not a plain file")
            shape = tuple(int(s) for s in spec["shape"])
            if int(spec["bytes"]) == 0:
                self.arrays[name] = np.zeros(shape, dtype=spec["dtype"])
            else:
                self.arrays[name] = np.memmap(self.path / file, dtype=spec["dtype"], mode="r",
                                              shape=shape)
        required = ["node_features", "edge_index", "node_offsets", "edge_offsets", "graph_label",
                    "graph_split", "node_positions", "graph_num_paths"]
        if self.has_parents:
            required.append("node_parent")
        if self.target is not None:
            required.append("graph_target")
        missing = [name for name in required if name not in self.arrays]
        if missing:
            raise StoreError(f"{self.path}: the manifest lists no array {', '.join(missing)}")
        positions = self.arrays["node_positions"]
        if positions.ndim != 2 or positions.shape[1] != self.position_dimensions:
            raise StoreError(f"{self.path}: node_positions has shape {positions.shape}, not "
                             f"[nodes, {self.position_dimensions}]")
        self.num_graphs = int(self.manifest["num_graphs"])
        self.split_names = [s["name"] for s in self.manifest["splits"]]

    @property
    def num_node_features(self):
        return int(self.arrays["node_features"].shape[1])

    def split_ids(self, split):
        """The graph ids of split `split` (train, validation or test), as the store lists them."""
        if split not in SPLIT_ARRAYS:
            raise ValueError(f"split {split!r}: one of {', '.join(SPLIT_ARRAYS)}")
        return np.asarray(self.arrays[SPLIT_ARRAYS[split]], dtype=np.int64)

    def graph(self, g, split=None):
        a = self.arrays
        n0, n1 = (int(v) for v in a["node_offsets"][g:g + 2])
        e0, e1 = (int(v) for v in a["edge_offsets"][g:g + 2])
        data = Data(
            x=torch.from_numpy(np.array(a["node_features"][n0:n1], dtype=np.float32)),
            pos=torch.from_numpy(np.array(a["node_positions"][n0:n1], dtype=np.float32)),
            edge_index=torch.from_numpy(np.array(a["edge_index"][e0:e1], dtype=np.int64).T.copy()),
            y=torch.tensor([int(a["graph_label"][g])], dtype=torch.long),
            num_paths=torch.from_numpy(np.array(a["graph_num_paths"][g], dtype=np.int64)).view(1, 3),
            graph_id=torch.tensor([g], dtype=torch.long),
        )
        data.num_nodes = n1 - n0
        if self.has_parents:
            data.parent = torch.from_numpy(np.array(a["node_parent"][n0:n1], dtype=np.int64))
        if self.target is not None:
            data.target = torch.tensor([float(a["graph_target"][g])], dtype=torch.float32)
        data.split = split if split is not None else self.split_names[int(a["graph_split"][g])]
        return data

    def dataset(self, split):
        """The graphs of one split as a list of Data (copied out of the maps: a few MB here)."""
        return [self.graph(int(g), split) for g in self.split_ids(split)]


def open_geometric_store(path):
    return GeometricStore(path)
