"""`headroom import-graphs`: graph tables written with pyarrow give the same store as
headroom.write_store of the same graphs, and the store trains through the CLI."""

import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import headroom
from conftest import raw_arrays, run_headroom
from test_write_store import two_shapes


def write_tables(directory, graphs, split, edge_features=True):
    """graphs.parquet, nodes.parquet, edges.parquet of `graphs` (PyG Data objects)."""
    directory.mkdir()
    pq.write_table(pa.table({"graph": np.arange(len(graphs)),
                             "label": [int(g.y) for g in graphs], "split": split}),
                   directory / "graphs.parquet")
    nodes = {"graph": np.concatenate([np.full(g.num_nodes, n) for n, g in enumerate(graphs)])}
    x = np.concatenate([g.x.numpy() for g in graphs])
    for column in range(x.shape[1]):
        nodes[f"x{column}"] = x[:, column]
    pq.write_table(pa.table(nodes), directory / "nodes.parquet", row_group_size=1000)
    edge_index = np.concatenate([g.edge_index.numpy().T for g in graphs])
    edges = {"graph": np.concatenate([np.full(g.num_edges, n) for n, g in enumerate(graphs)]),
             "source": edge_index[:, 0], "target": edge_index[:, 1]}
    if edge_features:
        edge_attr = np.concatenate([g.edge_attr.numpy() for g in graphs])
        for column in range(edge_attr.shape[1]):
            edges[f"e{column}"] = edge_attr[:, column]
    pq.write_table(pa.table(edges), directory / "edges.parquet", row_group_size=1000)


def test_tables_give_the_store_write_store_gives(tmp_path):
    graphs = list(two_shapes(60, seed=3))
    split = ["test" if n % 4 == 1 else "train" for n in range(len(graphs))]
    write_tables(tmp_path / "tables", graphs, split)
    run_headroom("import-graphs", tmp_path / "tables", "--out", tmp_path / "imported",
                 "--identity-classes", 3, "--validation-fraction", 0.25, "--seed", 9)
    headroom.write_store(tmp_path / "written", graphs, split=split, identity_classes=3,
                         validation_fraction=0.25, seed=9)
    imported, written = raw_arrays(tmp_path / "imported"), raw_arrays(tmp_path / "written")
    assert imported.keys() == written.keys()
    for name in written:
        assert np.array_equal(imported[name], written[name]), name
    assert len(headroom.Store(tmp_path / "imported").split("test")) == 15


def test_a_bad_table_is_refused_naming_file_row_and_column(tmp_path):
    graphs = list(two_shapes(5))
    write_tables(tmp_path / "tables", graphs, ["train"] * 5)
    table = pq.read_table(tmp_path / "tables" / "edges.parquet").to_pydict()
    table["target"][7] = 99
    pq.write_table(pa.table(table), tmp_path / "tables" / "edges.parquet")
    with pytest.raises(Exception) as refused:
        run_headroom("import-graphs", tmp_path / "tables", "--out", tmp_path / "store")
    message = refused.value.stderr
    assert "edges.parquet:8: column 'target': node 99 is outside graph 0" in message, message
    assert not (tmp_path / "store").exists()


def test_imported_tables_without_edge_features_train_through_the_cli(tmp_path):
    graphs = list(two_shapes(300, seed=4))
    split = ["test" if n % 5 == 4 else "train" for n in range(len(graphs))]
    write_tables(tmp_path / "tables", graphs, split, edge_features=False)
    run_headroom("import-graphs", tmp_path / "tables", "--out", tmp_path / "shapes",
                 "--identity-classes", 3)
    assert headroom.Store(tmp_path / "shapes").metadata["edge_feature_count"] == 0
    run_headroom("normal", "--store", tmp_path / "shapes", "--preset", "gcn,student",
                 "--max-epochs", 20, "--batch-size", 32, "--runs-dir", tmp_path / "runs",
                 "--threads", 1)
    run_headroom("evaluation", "--store", tmp_path / "shapes", "--runs-dir", tmp_path / "runs")
    evaluation = json.loads(
        (tmp_path / "runs" / "shapes" / "evaluation" / "evaluation.json").read_text())
    test = [group for group in evaluation["student_normal_gcn"]["groups"]
            if group["split"] == "test" and group["attack_type"] == ""]
    assert test[0]["metrics"]["count"] == 60
    assert test[0]["metrics"]["roc_auc"] > 0.9, test[0]["metrics"]
