"""headroom.write_store: a graph dataset that is not CAN traffic, written from Python, read back
exactly, refused with a clear error when it is malformed, and trained by the CLI and by PyG."""

import json
import os
import re
import subprocess
import sys

import pytest
import torch

import headroom
from conftest import SOURCE_DIR, run_headroom


def two_shapes(count, seed=0):
    """A binary graph-classification dataset that is not CAN traffic: label 0 graphs are rings, label
    1 graphs are stars (one hub), of 8-24 nodes; 3 node features (column 0 a node class in
    {0, 1, 2}; feature 1 drawn from [0, 1) for rings, [0.5, 1.5) for stars) and 2 edge
    features."""
    from torch_geometric.data import Data

    generator = torch.Generator().manual_seed(seed)
    for number in range(count):
        nodes = int(torch.randint(8, 25, (1,), generator=generator))
        label = number % 2
        others = torch.arange(1, nodes)
        if label == 0:
            source = torch.arange(nodes)
            target = (source + 1) % nodes
        else:
            source, target = torch.zeros(nodes - 1, dtype=torch.long), others
        edge_index = torch.cat([torch.stack([source, target]), torch.stack([target, source])], 1)
        x = torch.rand(nodes, 3, generator=generator)
        x[:, 0] = torch.randint(0, 3, (nodes,), generator=generator).float()
        x[:, 1] += 0.5 * label
        edge_attr = torch.rand(edge_index.shape[1], 2, generator=generator)
        yield Data(x=x, edge_index=edge_index, edge_attr=edge_attr, y=torch.tensor([label]))


def test_graphs_written_from_python_read_back_exactly(tmp_path):
    graphs = list(two_shapes(40))
    split = ["test" if number % 4 == 3 else "train" for number in range(len(graphs))]
    store = headroom.write_store(tmp_path / "shapes", iter(graphs), split=split,
                                 identity_classes=3, validation_fraction=0.25, seed=5)
    assert len(store) == 40
    assert store.metadata["node_identity"] == "given"
    assert store.identity_classes == 3
    assert store.metadata["node_feature_count"] == 3 and store.metadata["edge_feature_count"] == 2
    # Training graphs first, then test graphs, each in the order given.
    in_store_order = [g for g, s in zip(graphs, split) if s == "train"] + [
        g for g, s in zip(graphs, split) if s == "test"]
    for number, graph in enumerate(in_store_order):
        read = store[number]
        assert torch.equal(read.x, graph.x)
        assert torch.equal(read.edge_index.long(), graph.edge_index)
        assert torch.equal(read.edge_attr, graph.edge_attr)
        assert read.y == int(graph.y)
    assert store.split("test").tolist() == list(range(30, 40))
    train, validation = store.split("train").tolist(), store.split("validation").tolist()
    assert sorted(train + validation) == list(range(30))
    assert len(validation) == round(0.25 * 30)
    assert store.size_index["num_nodes"].tolist() == [g.num_nodes for g in in_store_order]


def test_without_node_classes_a_constant_identity_comes_first(tmp_path):
    graphs = list(two_shapes(6))
    store = headroom.write_store(tmp_path / "plain", graphs)
    assert store.identity_classes == 1
    assert store.metadata["node_feature_count"] == 4
    assert torch.equal(store[2].x[:, 0], torch.zeros(graphs[2].num_nodes))
    assert torch.equal(store[2].x[:, 1:], graphs[2].x)


@pytest.mark.parametrize("damage, message", [
    (lambda g: g.update(edge_index=g["edge_index"] + 100), "graph 3: edge 0 has source node 1"),
    (lambda g: g.update(y=torch.tensor([2])), "graph 3: label 2"),
    (lambda g: g["x"].__setitem__((0, 0), 7.0), "graph 3: node 0 has identity 7"),
    (lambda g: g["x"].__setitem__((1, 2), float("nan")), "graph 3: a node feature is not finite"),
    (lambda g: g.update(x=g["x"][:, :2]), "graph 3: 2 node and 2 edge features"),
])
def test_a_malformed_graph_is_refused_by_number_and_nothing_is_left(tmp_path, damage, message):
    graphs = [dict(x=g.x, edge_index=g.edge_index, edge_attr=g.edge_attr, y=g.y)
              for g in two_shapes(6)]
    damage(graphs[3])
    with pytest.raises(ValueError, match=message.replace("(", "\\(")):
        headroom.write_store(tmp_path / "bad", graphs, identity_classes=3)
    assert os.listdir(tmp_path) == []


def test_what_headroom_did_not_write_is_never_replaced(tmp_path):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep me")
    with pytest.raises(RuntimeError, match="mine"):
        headroom.write_store(mine, two_shapes(4), force=True)
    assert (mine / "notes.txt").read_text() == "keep me"
    store = headroom.write_store(tmp_path / "store", two_shapes(4))
    with pytest.raises(RuntimeError, match="exists"):
        headroom.write_store(tmp_path / "store", two_shapes(4))
    assert len(headroom.write_store(store.path, two_shapes(6), force=True)) == 6


@pytest.mark.parametrize("preset, stage", [("gat,student", "student_normal"),
                                           ("gcn,student", "student_normal_gcn")])
def test_a_dataset_written_from_python_trains_through_the_cli(tmp_path, preset, stage):
    split = lambda number, graph: "test" if number % 5 == 4 else "train"
    headroom.write_store(tmp_path / "shapes", two_shapes(300, seed=1), split=split,
                         identity_classes=3)
    run_headroom("normal", "--store", tmp_path / "shapes", "--preset", preset, "--max-epochs", 20,
                 "--batch-size", 32, "--runs-dir", tmp_path / "runs", "--threads", 1)
    result = json.loads((tmp_path / "runs" / "shapes" / stage / "result.json").read_text())
    assert 0 < result["training"]["epochs"] <= 20, result
    run_headroom("evaluation", "--store", tmp_path / "shapes", "--runs-dir", tmp_path / "runs")
    evaluation = json.loads(
        (tmp_path / "runs" / "shapes" / "evaluation" / "evaluation.json").read_text())
    test = [group for group in evaluation[stage]["groups"]
            if group["split"] == "test" and group["attack_type"] == ""]
    assert test[0]["metrics"]["count"] == 60
    assert test[0]["metrics"]["roc_auc"] > 0.9, test[0]["metrics"]


def test_a_dataset_written_from_python_trains_through_the_pyg_example(tmp_path):
    split = lambda number, graph: "test" if number % 5 == 4 else "train"
    headroom.write_store(tmp_path / "shapes", two_shapes(200, seed=2), split=split,
                         identity_classes=3)
    out = subprocess.run(
        [sys.executable, str(SOURCE_DIR / "examples" / "pyg_train.py"), str(tmp_path / "shapes"),
         "--budget", "4MB", "--epochs", "8", "--preset", "student"],
        check=True, capture_output=True, text=True).stdout
    assert "budget held: tensor peak" in out and "<= budget 3.8 MiB" in out, out
    accuracy = float(re.search(r"^test accuracy ([0-9.]+)$", out, re.M).group(1))
    assert accuracy > 0.9, out


def heap_trees(count):
    """Trees of 4, 5, ... nodes in 3-D: node i's parent (i - 1) // 2, linked both ways."""
    from torch_geometric.data import Data

    generator = torch.Generator().manual_seed(3)
    for number in range(count):
        nodes = 4 + number
        parent = torch.tensor([-1] + [(i - 1) // 2 for i in range(1, nodes)])
        child = torch.arange(1, nodes)
        edge_index = torch.cat([torch.stack([parent[1:], child]), torch.stack([child, parent[1:]])],
                               1)
        yield Data(x=torch.rand(nodes, 2, generator=generator), edge_index=edge_index,
                   y=torch.tensor([number % 2]), pos=torch.rand(nodes, 3, generator=generator),
                   parent=parent)


def test_positions_and_parents_make_a_geometric_store(tmp_path):
    import numpy as np

    graphs = list(heap_trees(6))
    store = headroom.write_store(tmp_path / "trees", iter(graphs), validation_fraction=0.0)
    assert store.metadata["geometry"] == {"position_dimensions": 3, "parents": True}
    names = headroom._headroom.geometry_arrays()  # the C++ names, never spelled here
    arrays = store.metadata["arrays"]

    def read(key, dtype):
        return np.fromfile(tmp_path / "trees" / arrays[names[key]]["file"], dtype=dtype)

    positions = torch.from_numpy(read("positions", np.float32).reshape(-1, 3))
    assert torch.equal(positions, torch.cat([g.pos for g in graphs]))
    assert read("parents", np.int32).tolist() == torch.cat([g.parent for g in graphs]).tolist()
    paths = read("num_paths", np.uint32).reshape(-1, 3)
    # A heap of n nodes: 2 (n - 1) directed edges; its nodes' own 3rd-order paths at least.
    assert paths[:, 0].tolist() == [2 * (3 + number) for number in range(6)]
    assert all(third >= 4 + number for number, third in enumerate(paths[:, 2].tolist()))


def test_a_tree_with_a_cycle_is_refused_and_nothing_is_left(tmp_path):
    graphs = list(heap_trees(2))
    graphs[1].parent[0] = 2  # 0 -> 2 -> 0
    with pytest.raises(ValueError, match=r"graph 1: node 0: .*a cycle of 2 nodes"):
        headroom.write_store(tmp_path / "trees", iter(graphs))
    assert os.listdir(tmp_path) == []
