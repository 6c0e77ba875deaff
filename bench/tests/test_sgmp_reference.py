"""Tests of the PyG reference of SGMP / GT-SSL (bench/sgmp_reference.py) and its store reader
(bench/geometric_store.py). Not registered with ctest; run them with

    ~/.cache/headroom/venv/bin/python -m pytest bench/tests

The stores are written by headroom's own binary (HEADROOM_BINARY, else build/bin/headroom), so the
path counts are compared with what headroom recorded; tests that need it are skipped without it.
"""

import json
import math
import os
import pathlib
import shutil
import subprocess
import sys

import pytest
import torch

BENCH = pathlib.Path(__file__).resolve().parents[1]
REPO = BENCH.parent
sys.path.insert(0, str(BENCH))

from geometric_store import GeometricStore, StoreError  # noqa: E402
import sgmp_reference as ref  # noqa: E402

torch.set_num_threads(1)

BINARY = pathlib.Path(os.environ.get("HEADROOM_BINARY", REPO / "build" / "bin" / "headroom"))
QM9 = pathlib.Path(os.environ.get("HEADROOM_SHARED_DATA_DIR", REPO.parent / "shared" / "data"),
                   "qm9", "molecules.parquet")
needs_binary = pytest.mark.skipif(not BINARY.is_file(), reason=f"no headroom binary at {BINARY}")


def headroom(*args):
    subprocess.run([str(BINARY), *map(str, args)], check=True, capture_output=True, text=True)


@pytest.fixture(scope="module")
def stores(tmp_path_factory):
    if not BINARY.is_file():
        pytest.skip(f"no headroom binary at {BINARY}")
    root = tmp_path_factory.mktemp("stores")
    headroom("generate-trees", "--out", root / "trees3", "--trees", 24, "--min-nodes", 6,
             "--max-nodes", 30, "--dimensions", 3, "--seed", 5)
    headroom("generate-trees", "--out", root / "trees2", "--trees", 24, "--min-nodes", 6,
             "--max-nodes", 30, "--dimensions", 2, "--seed", 6)
    made = {"trees3": root / "trees3", "trees2": root / "trees2"}
    if QM9.is_file():
        headroom("import-qm9", QM9, "--limit", 120, "--out", root / "qm9")
        made["qm9"] = root / "qm9"
    return made


def brute_force_paths(edges, num_nodes):
    """Every i->j->k->p over the edges (a list, duplicates kept, self-loops dropped) with four
    pairwise distinct nodes, then v->v->v->v per node."""
    edges = [(a, b) for a, b in edges if a != b]
    paths = []
    for i, j in edges:
        for j2, k in edges:
            if j2 != j or k == i:
                continue
            for k2, p in edges:
                if k2 == k and p not in (i, j):
                    paths.append((i, j, k, p))
    return sorted(paths + [(v, v, v, v) for v in range(num_nodes)])


# -- paths ----------------------------------------------------------------------------------------

def test_paths_of_a_small_graph_with_a_repeated_edge_and_a_self_loop():
    edges = [(0, 1), (1, 0), (1, 2), (2, 1), (2, 3), (3, 2), (1, 2), (3, 0), (2, 2), (3, 4)]
    paths = ref.third_order_paths(torch.tensor(edges).T, 5)
    assert sorted(map(tuple, paths.T.tolist())) == brute_force_paths(edges, 5)


@needs_binary
@pytest.mark.parametrize("name", ["trees3", "trees2", "qm9"])
def test_path_counts_equal_the_stores_graph_num_paths(stores, name):
    if name not in stores:
        pytest.skip(f"no QM9 file at {QM9}")
    store = GeometricStore(stores[name])
    for g in range(store.num_graphs):
        data = store.graph(g)
        paths = ref.third_order_paths(data.edge_index, data.num_nodes)
        assert paths.size(1) == int(data.num_paths[0, 2]), f"graph {g}"
    # A batch enumerates the sum of its graphs' paths (no path crosses graphs).
    graphs = store.dataset("train")[:8]
    batch = next(iter(ref.DataLoader(graphs, batch_size=8)))
    paths = ref.third_order_paths(batch.edge_index, batch.num_nodes)
    assert paths.size(1) == int(batch.num_paths[:, 2].sum())
    assert bool((batch.batch[paths[0]] == batch.batch[paths[3]]).all())


# -- the reader -----------------------------------------------------------------------------------

@needs_binary
def test_reader_gives_the_documented_fields(stores):
    store = GeometricStore(stores["trees2"])
    data = store.graph(int(store.split_ids("train")[0]), "train")
    assert data.pos.shape == (data.num_nodes, 2) and data.pos.dtype == torch.float32
    assert data.x.shape == (data.num_nodes, store.num_node_features)
    assert data.edge_index.shape[0] == 2 and data.edge_index.dtype == torch.long
    assert int((data.parent < 0).sum()) == 1 and data.split == "train"
    assert int(data.y) in (0, 1)
    if "qm9" in stores:
        qm9 = GeometricStore(stores["qm9"])
        assert qm9.target["unit"] == "hartree" and not qm9.has_parents
        assert 0.0 < float(qm9.graph(0).target) < 1.0  # a gap in hartree


@needs_binary
def test_reader_refuses_a_store_without_positions(stores, tmp_path):
    plain = tmp_path / "plain"
    shutil.copytree(stores["trees3"], plain)
    manifest = json.loads((plain / "manifest.json").read_text())
    del manifest["geometry"]
    (plain / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(StoreError, match="no node positions"):
        GeometricStore(plain)


# -- geometry -------------------------------------------------------------------------------------

def geometry_of(points):
    """The geometry of the one path 0->1->2->3 through `points` (i, j, k, p)."""
    pos = torch.tensor(points, dtype=torch.float64)
    return {k: float(v[0]) for k, v in ref.path_geometry(pos, torch.tensor([[0], [1], [2], [3]])).items()}


def dihedral_points(angle):
    # b1 = j - i along x; k in the x-y plane (n1 along +z); p turned by `angle` about b1.
    return [[-1.0, 0.0, 0.0], [0.0, 0.0, 0.0], [1.0, 1.0, 0.0],
            [1.0, math.cos(angle), math.sin(angle)]]


def test_right_angle_and_distances():
    g = geometry_of([[0.0, 0.0, 0.0], [2.0, 0.0, 0.0], [2.0, 3.0, 0.0], [2.0, 0.0, 4.0]])
    assert g["d_ij"] == pytest.approx(2.0) and g["d_jk"] == pytest.approx(3.0)
    assert g["d_jp"] == pytest.approx(4.0)
    assert g["theta_ijk"] == pytest.approx(math.pi / 2)
    assert g["theta_ijp"] == pytest.approx(math.pi / 2)
    straight = geometry_of([[0.0, 0.0], [1.0, 0.0], [2.0, 0.0], [0.0, 0.0]])  # 2-D, padded
    assert straight["theta_ijk"] == pytest.approx(0.0)
    assert straight["theta_ijp"] == pytest.approx(math.pi)


@pytest.mark.parametrize("turn, phi", [(0.0, 0.0), (math.pi, math.pi), (math.pi / 2, math.pi / 2),
                                       (-math.pi / 2, 3 * math.pi / 2)])
def test_dihedral_cis_trans_and_quarter_turns(turn, phi):
    assert geometry_of(dihedral_points(turn))["phi"] == pytest.approx(phi, abs=1e-9)


def test_exact_trans_is_pi_not_zero():
    # n1 x n2 is exactly 0 here: sign(0) is taken as +1 (the reference's torch.sign gives 0).
    points = [[-1.0, 0.0, 0.0], [0.0, 0.0, 0.0], [1.0, 1.0, 0.0], [1.0, -1.0, 0.0]]
    assert geometry_of(points)["phi"] == pytest.approx(math.pi)


def test_degenerate_path_has_zero_geometry():
    g = geometry_of([[1.0, 2.0, 3.0]] * 4)
    assert all(v == 0.0 for v in g.values())


def test_gaussian_smearing():
    smear = ref.GaussianSmearing(0.0, 4.0, 5)  # centres 0..4, width 1
    out = smear(torch.tensor([1.0, 2.5]))
    assert out[0, 1] == pytest.approx(1.0) and out[0, 2] == pytest.approx(math.exp(-0.5))
    assert out[1, 2] == pytest.approx(math.exp(-0.125))


def random_rotation(generator):
    q, r = torch.linalg.qr(torch.randn(3, 3, generator=generator, dtype=torch.float64))
    q = q * torch.sign(torch.diagonal(r))
    if torch.det(q) < 0:
        q[:, 0] = -q[:, 0]
    return q


@needs_binary
@pytest.mark.parametrize("name", ["trees3", "trees2"])
def test_rotation_and_translation_invariance(stores, name):
    torch.manual_seed(0)
    generator = torch.Generator().manual_seed(1)
    store = GeometricStore(stores[name])
    batch = next(iter(ref.DataLoader(store.dataset("train")[:4], batch_size=4)))
    model = ref.SGMP(store.num_node_features, hidden=16, outputs=2).double().eval()
    paths = ref.third_order_paths(batch.edge_index, batch.num_nodes)
    x, pos = batch.x.double(), batch.pos.double()
    if pos.size(1) == 2:
        a = 0.7
        rotation = torch.tensor([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]],
                                dtype=torch.float64)
    else:
        rotation = random_rotation(generator)
    moved = pos @ rotation.T + torch.randn(pos.size(1), generator=generator, dtype=torch.float64) * 5
    with torch.no_grad():
        before = model(x, pos, paths, batch.batch, batch.num_graphs)
        after = model(x, moved, paths, batch.batch, batch.num_graphs)
        g0, g1 = ref.path_geometry(pos, paths), ref.path_geometry(moved, paths)
    for key in g0:
        # phi near 0 and near 2 pi are the same angle; compare on the circle.
        diff = (g0[key] - g1[key]).abs()
        if key == "phi":
            diff = torch.minimum(diff, 2 * math.pi - diff)
        assert float(diff.max()) < 1e-6, key
    torch.testing.assert_close(before, after, rtol=1e-6, atol=1e-6)


# -- GT-SSL ---------------------------------------------------------------------------------------

def test_wasserstein_of_hand_worked_histograms():
    p = torch.tensor([1.0, 0.0, 0.0])
    q = torch.tensor([0.0, 0.0, 1.0])
    assert float(ref.wasserstein_1d(p, q)) == pytest.approx(2.0)  # all mass moved two bins
    # CDFs [.5, 1, 1] and [0, .5, 1]: 0.5 + 0.5 + 0 = 1 bin; bins 0.5 apart: 0.5.
    p = torch.tensor([0.5, 0.5, 0.0])
    q = torch.tensor([0.0, 0.5, 0.5])
    assert float(ref.wasserstein_1d(p, q)) == pytest.approx(1.0)
    assert float(ref.wasserstein_1d(p, q, bin_width=0.5)) == pytest.approx(0.5)
    assert float(ref.wasserstein_1d(p, p)) == 0.0
    # Plain L1 (the reference's comparison) cannot tell a bin away from two bins away: W1 can.
    first, second, third = torch.eye(3)
    assert float((first - second).abs().sum()) == float((first - third).abs().sum()) == 2.0
    assert float(ref.wasserstein_1d(first, second)) == pytest.approx(1.0)
    assert float(ref.wasserstein_1d(first, third)) == pytest.approx(2.0)


def test_partial_order_loss_zero_when_the_order_holds_and_positive_otherwise():
    # Tree 0 -> {1, 2}, 1 -> 3: parents of 1, 2, 3 are 0, 0, 1.
    child = torch.tensor([1, 2, 3])
    parent = torch.tensor([0, 0, 1])
    neg_a, neg_b = torch.tensor([2, 3]), torch.tensor([1, 2])  # not ancestors of one another
    h = torch.tensor([[5.0, 5.0], [3.0, 4.0], [4.0, 0.0], [0.0, 2.0]])
    assert float(ref.partial_order_loss(h, child, parent, neg_a, neg_b, delta=1.0)) == 0.0
    broken = h.clone()
    broken[3] = torch.tensor([3.5, 2.0])  # above its parent in dimension 0 by 0.5
    loss = ref.partial_order_loss(broken, child, parent, neg_a, neg_b, delta=1.0)
    assert float(loss) == pytest.approx(0.5 / 3)
    close = h.clone()
    close[2] = torch.tensor([3.0, 3.6])  # 0.4 from node 1: inside the margin
    loss = ref.partial_order_loss(close, child, parent, neg_a, neg_b, delta=1.0)
    assert float(loss) == pytest.approx(0.6 / 2)


def test_unrelated_pairs_are_in_one_tree_and_not_ancestors():
    # Two trees: 0 -> 1 -> 2, 0 -> 3 and 4 -> 5, 4 -> 6.
    parent = torch.tensor([-1, 0, 1, 0, -1, 4, 4])
    batch = torch.tensor([0, 0, 0, 0, 1, 1, 1])
    ptr = torch.tensor([0, 4, 7])
    a, b = ref.sample_unrelated_pairs(parent, batch, ptr, 50, torch.Generator().manual_seed(0))
    allowed = {(1, 3), (3, 1), (2, 3), (3, 2), (5, 6), (6, 5)}
    assert a.numel() > 0 and set(zip(a.tolist(), b.tolist())) <= allowed


@needs_binary
def test_gtssl_losses_reach_the_encoder(stores):
    torch.manual_seed(0)
    store = GeometricStore(stores["trees3"])
    batch = next(iter(ref.DataLoader(store.dataset("train")[:4], batch_size=4)))
    model = ref.SGMP(store.num_node_features, hidden=16)
    ssl = ref.GTSSL(model)
    paths = ref.third_order_paths(batch.edge_index, batch.num_nodes)
    total, order, growth = ssl(batch, paths, torch.Generator().manual_seed(0))
    assert float(growth) > 0 and float(order) >= 0 and torch.isfinite(total)
    ssl.zero_grad()
    ssl.subtree_growth_loss(model.node_embeddings(batch.x, batch.pos, paths), batch.pos,
                            ref.global_parents(batch)).backward()
    assert float(model.embedding[0].weight.grad.abs().sum()) > 0  # not from zeros, as upstream


# -- the command line -----------------------------------------------------------------------------

@needs_binary
def test_command_line_pretrain_fine_tune_and_regression(stores, tmp_path):
    out = tmp_path / "trees.json"
    ref.main(["--store", str(stores["trees3"]), "--task", "classify", "--pretrain-epochs", "1",
              "--epochs", "1", "--batch-size", "8", "--labels-fraction", "0.5", "--seed", "3",
              "--threads", "1", "--hidden", "16", "--json", str(out)])
    result = json.loads(out.read_text())
    assert 0.0 <= result["test_accuracy"] <= 1.0
    assert result["graphs"]["train_labelled"] == round(0.5 * result["graphs"]["train_split"])
    assert result["max_paths_per_batch"] > 0 and result["peak_rss_bytes"] > 0
    assert result["train_graphs_per_second"] > 0 and result["pretrain_graphs_per_second"] > 0
    if "qm9" in stores:
        out = tmp_path / "qm9.json"
        ref.main(["--store", str(stores["qm9"]), "--task", "regress", "--epochs", "1",
                  "--batch-size", "32", "--seed", "3", "--threads", "1", "--hidden", "16",
                  "--json", str(out)])
        result = json.loads(out.read_text())
        assert result["test_mae_mev"] == pytest.approx(result["test_mae"] * 27211.386245988)
        with pytest.raises(SystemExit, match="parent"):
            ref.main(["--store", str(stores["qm9"]), "--task", "regress", "--pretrain-epochs",
                      "1", "--epochs", "1"])
