"""headroom from Python: graph stores as zero-copy torch tensors, the memory planner, and a batch
sampler that packs each batch under a byte budget, for use inside an existing PyTorch or PyG loop.

    import headroom
    store = headroom.Store("stores/hcrl_sa")
    graph = store[0]                  # x, edge_index, edge_attr: views of the mapped files
    data = store.to_pyg(0)            # a torch_geometric.data.Data
    plan = headroom.plan(store, model="gat,teacher", budget="1GB")
    result = headroom.normal(store.path, preset="gcn,student", max_epochs=20)

docs/python.md documents the API.
"""

import torch  # noqa: F401  (first: the extension module binds to the LibTorch that torch loaded)

from . import _headroom
from ._headroom import OptionError, OversizeGraphError, StoreError
from .memory import (
    CostModel,
    fit_step_cost,
    measure_peak,
    parse_byte_size,
    tensor_memory,
    track_cpu_tensors,
)
from .planning import plan
from .sampler import BytePackedBatchSampler, epoch_order
from .stages import (
    CommandError,
    autoencoder,
    curriculum,
    evaluation,
    fusion,
    normal,
    read_run,
    run,
)
from .store import Graph, Store
from .writer import write_store

__version__ = _headroom.__version__

__all__ = [
    "BytePackedBatchSampler",
    "CommandError",
    "CostModel",
    "Graph",
    "OptionError",
    "OversizeGraphError",
    "Store",
    "StoreError",
    "autoencoder",
    "curriculum",
    "epoch_order",
    "evaluation",
    "fit_step_cost",
    "fusion",
    "measure_peak",
    "normal",
    "parse_byte_size",
    "plan",
    "read_run",
    "run",
    "tensor_memory",
    "track_cpu_tensors",
    "write_store",
]
