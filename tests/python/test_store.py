"""headroom.Store: graphs as views of the mapped files, values equal to the raw arrays, writes
that never reach the files, and errors as exceptions naming the store."""

import gc
import shutil

import numpy as np
import pytest
import torch

import headroom
from conftest import array_file, raw_arrays


def mapping_of(address: int) -> str:
    """The file mapped at `address` in this process (/proc/self/maps), or "" for anonymous memory."""
    with open("/proc/self/maps") as maps:
        for line in maps:
            fields = line.split(maxsplit=5)
            low, high = (int(bound, 16) for bound in fields[0].split("-"))
            if low <= address < high:
                return fields[5].strip() if len(fields) == 6 else ""
    return ""


def test_graph_tensors_view_the_store_files_without_a_copy(synthetic_store):
    store = headroom.Store(synthetic_store)
    graph = store[len(store) // 2]
    assert graph.x.numel() > 0 and graph.edge_attr.numel() > 0
    assert mapping_of(graph.x.data_ptr()) == str(array_file(synthetic_store, "node_features"))
    assert mapping_of(graph.edge_index.data_ptr()) == str(array_file(synthetic_store, "edge_index"))
    assert mapping_of(graph.edge_attr.data_ptr()) == str(
        array_file(synthetic_store, "edge_features")
    )
    assert mapping_of(graph.can_ids.data_ptr()) == str(array_file(synthetic_store, "node_can_ids"))
    data = store.to_pyg(len(store) // 2)
    assert data.x.data_ptr() == graph.x.data_ptr()
    assert data.edge_attr.data_ptr() == graph.edge_attr.data_ptr()


def test_every_graph_equals_the_raw_arrays(synthetic_store):
    store = headroom.Store(synthetic_store)
    raw = raw_arrays(synthetic_store)
    assert len(store) == len(raw["graph_label"]) > 100
    nodes, edges = raw["node_offsets"], raw["edge_offsets"]
    for graph_id in range(len(store)):
        graph = store[graph_id]
        n0, n1, e0, e1 = nodes[graph_id], nodes[graph_id + 1], edges[graph_id], edges[graph_id + 1]
        np.testing.assert_array_equal(graph.x.numpy(), raw["node_features"][n0:n1])
        np.testing.assert_array_equal(graph.edge_index.numpy(), raw["edge_index"][e0:e1].T)
        np.testing.assert_array_equal(graph.edge_attr.numpy(), raw["edge_features"][e0:e1])
        np.testing.assert_array_equal(graph.can_ids.numpy(), raw["node_can_ids"][n0:n1])
        assert graph.y == raw["graph_label"][graph_id]
    assert store[-1].y == store[len(store) - 1].y


def test_size_index_splits_and_metadata_equal_the_raw_arrays(synthetic_store):
    store = headroom.Store(synthetic_store)
    raw = raw_arrays(synthetic_store)
    index = store.size_index
    for key, name in [("num_nodes", "graph_num_nodes"), ("num_edges", "graph_num_edges"),
                      ("label", "graph_label"), ("split", "graph_split"), ("file", "graph_file"),
                      ("attack_type", "graph_attack_type"), ("window", "graph_window")]:
        assert index[key].dtype == torch.int64
        np.testing.assert_array_equal(index[key].numpy(), raw[name].astype(np.int64))
    train, validation, test = (store.split(name) for name in ("train", "validation", "test"))
    np.testing.assert_array_equal(train.numpy(), raw["split_train"].astype(np.int64))
    assert len(set(train.tolist()) | set(validation.tolist()) | set(test.tolist())) == len(
        train) + len(validation) + len(test)
    assert store.metadata["num_graphs"] == len(store)
    assert store.metadata["arrays"]["node_features"]["shape"][0] == raw["node_features"].shape[0]
    with pytest.raises(ValueError, match="no split 'dev'"):
        store.split("dev")


def test_a_write_to_a_graph_tensor_never_reaches_the_store(synthetic_store):
    before = array_file(synthetic_store, "node_features").read_bytes()
    store = headroom.Store(synthetic_store)
    graph = store[0]
    original = graph.x[0, 0].item()
    graph.x[0, 0] = original + 1000.0
    assert store[0].x[0, 0].item() == original + 1000.0  # this process's copy of the page
    assert headroom.Store(synthetic_store)[0].x[0, 0].item() == original  # a fresh mapping
    assert array_file(synthetic_store, "node_features").read_bytes() == before


def test_tensors_outlive_their_store(synthetic_store):
    store = headroom.Store(synthetic_store)
    graph = store[3]
    expected = graph.x.clone()
    del store
    gc.collect()
    assert torch.equal(graph.x, expected)


def test_errors_are_exceptions_naming_the_store(synthetic_store, tmp_path):
    with pytest.raises(headroom.StoreError, match="no graph store here"):
        headroom.Store(tmp_path / "missing")
    broken = tmp_path / "broken"
    shutil.copytree(synthetic_store, broken)
    with open(array_file(broken, "graph_num_nodes"), "r+b") as size_index:
        size_index.truncate(4)
    with pytest.raises(headroom.StoreError, match="broken.*graph_num_nodes"):
        headroom.Store(broken)
    store = headroom.Store(synthetic_store)
    with pytest.raises(IndexError, match=f"outside the store \\({len(store)} graphs"):
        store[len(store)]
