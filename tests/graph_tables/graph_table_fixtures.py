"""Writes the graph-table fixtures of import_graph_tables_test.cpp with pyarrow (as users' tooling
writes them): DIR/<case>/{graphs,nodes,edges}.parquet, and DIR/shapes/expected.json with the
graphs the "shapes" tables hold, in table order."""

import json
import math
import pathlib
import sys

import pyarrow as pa
import pyarrow.parquet as pq


def shapes():
    """25 graphs: rings (label 0) and stars (label 1) of 3-9 nodes; every fifth a test graph;
    graph 3 has no edges. Node columns: kind (a class in 0..2), mass, flag; edge column weight."""
    graphs = []
    for g in range(25):
        nodes = 3 + (g * 3) % 7
        label = g % 2
        kind = [(g + i) % 3 for i in range(nodes)]
        mass = [0.25 * i + label for i in range(nodes)]
        flag = [(i + g) % 2 == 0 for i in range(nodes)]
        if g == 3:
            edges = []
        elif label == 0:
            edges = [(i, (i + 1) % nodes) for i in range(nodes)]
        else:
            edges = [(0, i) for i in range(1, nodes)] + [(i, 0) for i in range(1, nodes)]
        weight = [0.5 + 0.125 * k for k in range(len(edges))]
        graphs.append(dict(label=label, split="test" if g % 5 == 4 else "train", kind=kind,
                           mass=mass, flag=flag, edges=edges, weight=weight))
    return graphs


def write(directory, graphs, node_types, edge_types, graph_columns=("label", "split"),
          row_group_size=17, nodes_override=None, edges_override=None):
    directory.mkdir(parents=True)
    table = {"graph": list(range(len(graphs)))}
    for column in graph_columns:
        table[column] = [g[column] for g in graphs]
    pq.write_table(pa.table(table), directory / "graphs.parquet")
    nodes = {"graph": []}
    for name in node_types:
        nodes[name] = []
    edges = {"graph": [], "source": [], "target": []}
    for name in edge_types:
        if name not in edges:
            edges[name] = []
    for number, g in enumerate(graphs):
        for i in range(len(g["kind"])):
            nodes["graph"].append(number)
            for name in node_types:
                if name != "graph":
                    nodes[name].append(g[name][i])
        for k, (source, target) in enumerate(g["edges"]):
            edges["graph"].append(number)
            edges["source"].append(source)
            edges["target"].append(target)
            for name in edge_types:
                if name not in ("graph", "source", "target"):
                    edges[name].append(g[name][k])
    if nodes_override:
        nodes_override(nodes)
    if edges_override:
        edges_override(edges)
    pq.write_table(pa.table({k: pa.array(v, node_types.get(k)) for k, v in nodes.items()}),
                   directory / "nodes.parquet", row_group_size=row_group_size)
    pq.write_table(pa.table({k: pa.array(v, edge_types.get(k)) for k, v in edges.items()}),
                   directory / "edges.parquet", row_group_size=row_group_size)


def main(root):
    root = pathlib.Path(root)
    graphs = shapes()
    node_types = {"graph": pa.int32(), "kind": pa.int8(), "mass": pa.float32(), "flag": pa.bool_()}
    edge_types = {"graph": pa.int64(), "source": pa.uint16(), "target": pa.int32(),
                  "weight": pa.float64()}
    write(root / "shapes", graphs, node_types, edge_types)
    expected = [dict(label=g["label"], split=g["split"],
                     x=[[float(g["kind"][i]), g["mass"][i], float(g["flag"][i])]
                        for i in range(len(g["kind"]))],
                     edges=g["edges"], edge_attr=[[w] for w in g["weight"]]) for g in graphs]
    (root / "shapes" / "expected.json").write_text(json.dumps(expected))

    small = graphs[:3]
    plain = {"graph": pa.int32(), "mass": pa.float64()}
    write(root / "no_split", small, plain, {}, graph_columns=("label",))

    # Wide enough types for the damage (a negative source, a float beyond float32).
    wide_nodes = dict(node_types, mass=pa.float64())
    wide_edges = dict(edge_types, source=pa.int32())

    def damaged(name, **damage):
        write(root / name, small, wide_nodes, wide_edges, **damage)

    def set_value(column, row, value):
        return lambda columns: columns[column].__setitem__(row, value)

    damaged("label_two")
    table = pq.read_table(root / "label_two" / "graphs.parquet").to_pydict()
    table["label"][1] = 2
    pq.write_table(pa.table(table), root / "label_two" / "graphs.parquet")
    damaged("split_dev")
    table = pq.read_table(root / "split_dev" / "graphs.parquet").to_pydict()
    table["split"][2] = "dev"
    pq.write_table(pa.table(table), root / "split_dev" / "graphs.parquet")
    # Graphs 0, 1, 2 have 3, 6 and 9 nodes (rows 1-3, 4-9, 10-18 of nodes.parquet) and 3, 10
    # and 9 edges (rows 1-3, 4-13, 14-22 of edges.parquet); indices below are 0-based.
    damaged("unsorted_nodes", nodes_override=set_value("graph", 5, 0))
    damaged("graph_beyond", nodes_override=set_value("graph", 11, 7))
    damaged("no_nodes", nodes_override=lambda n: [n[c].__setitem__(slice(3, 9), [])
                                                  for c in n])
    damaged("target_outside", edges_override=set_value("target", 4, 9))
    damaged("negative_source", edges_override=set_value("source", 2, -1))
    damaged("null_feature", nodes_override=set_value("mass", 6, None))
    damaged("nan_feature", nodes_override=set_value("mass", 9, math.nan))
    damaged("huge_feature", nodes_override=set_value("mass", 0, 1e300))
    write(root / "string_feature", small, dict(node_types, kind=pa.string()), edge_types,
          nodes_override=lambda n: n.__setitem__("kind", [str(k) for k in n["kind"]]))
    damaged("missing_edges")
    (root / "missing_edges" / "edges.parquet").unlink()

    # Geometric tables: node i of graph g at (0.5 i, g, -0.25 i), its parent (i - 1) // 2 (a heap;
    # -1 at the root), in columns after the features.
    def with_geometry(dims=3, parent=True, extra=None):
        def add(nodes):
            axes = ("pos_x", "pos_y", "pos_z")[:dims]
            for axis in axes:
                nodes[axis] = []
            if parent:
                nodes["parent"] = []
            seen = {}
            for g in nodes["graph"]:
                i = seen.get(g, 0)
                seen[g] = i + 1
                for axis, value in zip(axes, (0.5 * i, float(g), -0.25 * i)):
                    nodes[axis].append(value)
                if parent:
                    nodes["parent"].append(-1 if i == 0 else (i - 1) // 2)
            if extra:
                extra(nodes)
        return add

    damaged("trees", nodes_override=with_geometry())
    damaged("trees_2d", nodes_override=with_geometry(dims=2, parent=False))
    damaged("nan_position", nodes_override=with_geometry(extra=set_value("pos_y", 4, math.nan)))
    damaged("parent_cycle", nodes_override=with_geometry(extra=set_value("parent", 3, 2)))
    damaged("parent_outside", nodes_override=with_geometry(extra=set_value("parent", 13, 9)))
    damaged("pos_w", nodes_override=with_geometry(
        extra=lambda n: n.__setitem__("pos_w", [0.0] * len(n["graph"]))))
    damaged("only_pos_x", nodes_override=with_geometry(dims=1, parent=False))
    damaged("parent_without_positions", nodes_override=with_geometry(dims=0))


if __name__ == "__main__":
    main(sys.argv[1])
