"""BytePackedBatchSampler: batches of graph ids whose predicted step peak stays under a byte budget,
for torch.utils.data.DataLoader(batch_sampler=...); and epoch_order, the seeded permutation it and
headroom's own loaders shuffle with."""

from __future__ import annotations

from typing import Iterator, Sequence

import torch
from torch.utils.data import Sampler

from . import _headroom
from .memory import CostModel, parse_byte_size


_UINT64_LIMIT = 1 << 64


def epoch_order(count: int, seed: int, epoch: int, stream: str = "graph-batches") -> torch.Tensor:
    """The permutation of ``range(count)`` (int64) that headroom visits ``count`` items in at
    ``epoch`` of a run seeded ``seed`` (loader/epoch_order.hpp, which states the algorithm): a
    function of its arguments only, the same on every machine, so a resumed run draws the same.
    ``stream`` names the user, so that two users of one seed draw unrelated orders:
    ``"graph-batches"`` (the graph stages' batches, and this module's sampler), ``"node-parts"``,
    ``"fusion-split"`` or ``"fusion-epochs"``. ``seed`` and ``epoch`` are in [0, 2**64)."""
    for name, value in (("count", count), ("seed", seed), ("epoch", epoch)):
        if not 0 <= value < _UINT64_LIMIT:
            raise ValueError(f"{name} must be in [0, 2**64), got {value}")
    return torch.from_dlpack(_headroom.epoch_order(count, seed, epoch, stream))


class BytePackedBatchSampler(Sampler):
    """Yields lists of graph ids of ``store``: every id of ``ids`` (default: the training split)
    exactly once per epoch, in a seeded shuffled order (or in order without ``shuffle``), cut into
    consecutive batches whose predicted peak ``cost.predict(nodes, edges, graphs)`` stays within
    ``utilization * budget`` bytes (headroom's packer, memory/batch_packer.hpp). ``max_graphs``
    caps a batch's graph count (0: no cap). Call ``set_epoch`` to draw a new order each epoch: the
    order of epoch e is ``ids[epoch_order(len(ids), seed, e)]``, a function of seed and e only (a
    resumed run sees the same batches) and the order headroom's graph stages shuffle the same ids
    in for ``--seed`` seed.

    Raises :class:`headroom.OversizeGraphError` when one graph alone is predicted over the budget.
    """

    def __init__(
        self,
        store,
        budget: int | float | str,
        cost: CostModel,
        ids: Sequence[int] | torch.Tensor | None = None,
        shuffle: bool = True,
        seed: int = 0,
        max_graphs: int = 0,
        utilization: float = 0.9,
    ):
        if not 0.0 < utilization <= 1.0:
            raise ValueError(f"utilization must be in (0, 1], got {utilization}")
        if max_graphs < 0:
            raise ValueError(f"max_graphs must be 0 (no cap) or positive, got {max_graphs}")
        self.store = store
        self.budget_bytes = parse_byte_size(budget)
        self.cost = cost
        ids = store.split("train") if ids is None else ids
        self.ids = torch.as_tensor(ids, dtype=torch.int64).contiguous()
        if not 0 <= seed < _UINT64_LIMIT:
            raise ValueError(f"seed must be in [0, 2**64), got {seed}")
        self.shuffle = shuffle
        self.seed = seed
        self.max_graphs = max_graphs
        self.utilization = utilization
        self.epoch = 0
        self._batches = None

    def set_epoch(self, epoch: int) -> None:
        self.epoch = epoch
        self._batches = None

    @property
    def packing_budget_bytes(self) -> float:
        return self.utilization * self.budget_bytes

    def batches(self) -> list[list[int]]:
        """This epoch's batches (packed once per epoch)."""
        if self._batches is None:
            order = self.ids
            if self.shuffle:
                order = order[epoch_order(len(order), self.seed, self.epoch)]
            self._batches = _headroom.pack_by_bytes(
                self.store._store,
                order,
                self.cost.coefficients(),
                self.packing_budget_bytes,
                self.max_graphs,
            )
        return self._batches

    def __iter__(self) -> Iterator[list[int]]:
        return iter(self.batches())

    def __len__(self) -> int:
        return len(self.batches())
