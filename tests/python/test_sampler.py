"""BytePackedBatchSampler and the cost model: every graph exactly once per epoch, every batch under
the budget and as full as the budget allows, and the fit and the meter it rests on."""

import pytest
import torch
from torch.utils.data import DataLoader

import headroom

COST = headroom.CostModel(fixed_bytes=1e6, bytes_per_node=4000.0, bytes_per_edge=900.0,
                          bytes_per_graph=2000.0)


def predicted(store, batch, cost=COST):
    index = store.size_index
    return cost.predict(int(index["num_nodes"][batch].sum()), int(index["num_edges"][batch].sum()),
                        len(batch))


def test_every_training_graph_exactly_once_per_epoch_in_a_seeded_order(synthetic_store):
    store = headroom.Store(synthetic_store)
    sampler = headroom.BytePackedBatchSampler(store, budget="8MB", cost=COST, seed=3)
    train = sorted(store.split("train").tolist())
    orders = []
    for epoch in range(3):
        sampler.set_epoch(epoch)
        batches = list(sampler)
        assert len(batches) == len(sampler) > 1
        flat = [graph for batch in batches for graph in batch]
        assert sorted(flat) == train
        orders.append(flat)
    assert orders[0] != orders[1] != orders[2]
    again = headroom.BytePackedBatchSampler(store, budget="8MB", cost=COST, seed=3)
    again.set_epoch(1)
    assert [graph for batch in again for graph in batch] == orders[1]


MASK64 = (1 << 64) - 1
GAMMA = 0x9E3779B97F4A7C15


def documented_order(count, seed, epoch, stream_tag):
    """loader/epoch_order.hpp's algorithm, written again from its text in plain Python."""
    state = 0

    def next_value():
        nonlocal state
        state = (state + GAMMA) & MASK64
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        return z ^ (z >> 31)

    state = seed ^ stream_tag ^ ((epoch * GAMMA) & MASK64)
    state = next_value()
    order = list(range(count))
    for i in range(count, 1, -1):
        threshold = ((1 << 64) - i) % i
        while (r := next_value()) < threshold:
            pass
        j = r % i
        order[i - 1], order[j] = order[j], order[i - 1]
    return order


STREAM_TAGS = {"graph-batches": 0, "node-parts": int.from_bytes(b"node-par", "big"),
               "fusion-split": int.from_bytes(b"fuse-spl", "big"),
               "fusion-epochs": int.from_bytes(b"fuse-epc", "big")}


def test_the_epoch_order_is_the_documented_algorithm_for_every_stream():
    for stream, tag in STREAM_TAGS.items():
        for seed, epoch in [(0, 0), (3, 1), (2**64 - 1, 40)]:
            order = headroom.epoch_order(97, seed, epoch, stream)
            assert order.dtype == torch.int64
            assert order.tolist() == documented_order(97, seed, epoch, tag), (stream, seed, epoch)
    assert headroom.epoch_order(0, 1, 2).tolist() == []
    with pytest.raises(ValueError, match="stream"):
        headroom.epoch_order(5, 0, 0, "graph-batch")
    with pytest.raises(ValueError, match="seed"):
        headroom.epoch_order(5, -1, 0)


def test_the_sampler_shuffles_in_headrooms_epoch_order(synthetic_store):
    store = headroom.Store(synthetic_store)
    train = store.split("train")
    sampler = headroom.BytePackedBatchSampler(store, budget="8MB", cost=COST, seed=5)
    for epoch in (0, 4):
        sampler.set_epoch(epoch)
        flat = [graph for batch in sampler for graph in batch]
        assert flat == train[headroom.epoch_order(len(train), 5, epoch)].tolist()
        # The graph stages' order: their training ids in the graph-batch stream's permutation
        # (loader::shuffled), here reproduced without the extension module.
        assert flat == [int(train[k]) for k in documented_order(len(train), 5, epoch, 0)]
    with pytest.raises(ValueError, match="seed"):
        headroom.BytePackedBatchSampler(store, budget="8MB", cost=COST, seed=-1)


def test_every_batch_fits_the_budget_and_no_batch_could_take_the_next_graph(synthetic_store):
    store = headroom.Store(synthetic_store)
    sampler = headroom.BytePackedBatchSampler(store, budget=8 * 2**20, cost=COST, shuffle=False)
    batches = sampler.batches()
    limit = 0.9 * 8 * 2**20
    assert [graph for batch in batches for graph in batch] == store.split("train").tolist()
    for batch, following in zip(batches, batches[1:]):
        assert predicted(store, batch) <= limit
        assert predicted(store, batch + following[:1]) > limit
    assert predicted(store, batches[-1]) <= limit


def test_max_graphs_caps_a_batch_and_an_oversize_graph_is_refused(synthetic_store):
    store = headroom.Store(synthetic_store)
    capped = headroom.BytePackedBatchSampler(store, budget="1GB", cost=COST, max_graphs=7)
    assert max(len(batch) for batch in capped) == 7
    tiny = headroom.BytePackedBatchSampler(store, budget="1MB", cost=COST)
    with pytest.raises(headroom.OversizeGraphError, match="graph"):
        list(tiny)
    with pytest.raises(ValueError):
        headroom.BytePackedBatchSampler(store, budget="a lot", cost=COST)


def test_the_sampler_drives_a_dataloader_with_pyg_collate(synthetic_store):
    from torch_geometric.data import Batch

    store = headroom.Store(synthetic_store)
    sampler = headroom.BytePackedBatchSampler(store, budget="8MB", cost=COST, seed=1)
    loader = DataLoader(range(len(store)), batch_sampler=sampler,
                        collate_fn=lambda ids: Batch.from_data_list([store.to_pyg(i) for i in ids]))
    batches = list(loader)
    assert len(batches) == len(sampler)
    assert sum(batch.num_graphs for batch in batches) == len(store.split("train"))
    first_ids = sampler.batches()[0]
    assert batches[0].num_nodes == int(store.size_index["num_nodes"][first_ids].sum())


def test_the_cost_fit_recovers_a_linear_peak():
    truth = headroom.CostModel(5e6, 3000.0, 700.0, 1500.0)
    samples = [(n, e, g, truth.predict(n, e, g))
               for n, e, g in [(100, 900, 2), (400, 2100, 3), (1000, 9000, 30), (2300, 15000, 8),
                               (5000, 52000, 61), (8000, 61000, 40)]]
    fit = headroom.CostModel.fit(samples)
    for nodes, edges, graphs, peak in samples:
        assert fit.predict(nodes, edges, graphs) == pytest.approx(peak, rel=1e-6)
    assert fit.max_relative_error < 1e-6


def test_the_meter_counts_pytorch_cpu_tensors():
    assert headroom.tensor_memory()["installed"]
    with headroom.measure_peak("cpu") as measured:
        block = torch.ones(4 * 2**20, dtype=torch.float32)  # 16 MiB
        del block
    assert 16 * 2**20 <= measured.peak_bytes < 16 * 2**20 + 2**20 + headroom.tensor_memory()[
        "current_bytes"]
