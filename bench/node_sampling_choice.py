#!/usr/bin/env python3
"""Which sampling scheme should headroom use for node-level TextGCN when the full-batch step does
not fit the memory budget? Neighbour sampling or random node partitions, measured against each
other at a matched activation size, with full-batch training as the reference.

Usage (torch 2.11 CPU and torch_geometric's environment; only torch and numpy are imported):

    python bench/node_sampling_choice.py --store /tmp/ng/pstore
        [--schemes full,partition,neighbour] [--seeds 1,2] [--threads 1]
        [--parts 4] [--fanouts 25,10 10,10] [--batch-size auto|B]
        [--epochs 200] [--patience 10] [--receptive-field | --no-receptive-field]
        [--json-out FILE]

The store is a headroom node-graph store (docs/store-format.md): raw little-endian arrays
row_offsets.i64 [N+1], column_index.i32 [E], edge_weight.f32 [E] (the symmetric normalised
A' = D^-1/2 (A + I) D^-1/2, self-loops included), node_label.i32 (-1 for words) and
node_split.u8 (1 train, 2 validation, 3 test). They are read as they are; nothing is recomputed.

Model and training, identical for every scheme (TextGCN, Yao et al. 2019, without input dropout):
identity features, so layer 1's input for node i is row i of W1 [N, 200] (an embedding; no N x N
matrix is ever built),

    H      = relu(A_1 W1[cols of A_1])
    logits = A_2 (dropout(H, 0.5) W2)              W2 [200, classes]

Glorot-uniform W1 and W2 (drawn from torch.manual_seed(seed), so every scheme of one seed starts
from the same weights), no biases, Adam (torch.optim.Adam(fused=True), dense: every row of W1 and
its moments are updated at every step, as an nn.Embedding without sparse gradients would be; the
fused kernel is the same update as the default one, about 13x faster on one CPU core for the 12M
parameters of W1, which matters for schemes with many steps per epoch), lr 0.02, no
weight decay, loss the mean cross-entropy over the training nodes of the step. Every sparse
product is a torch.sparse CSR tensor times a dense matrix (torch.sparse.mm, the dense operand
cut into 20-column blocks, which is 2x faster on one core than one 200-wide product), inside an
autograd function whose backward multiplies by a CSR copy of the transpose (A' itself where the
block is symmetric). The schemes differ only in A_1 and A_2 (the blocks of one step):

  full       A_1 = A' (N x N), A_2 = A'[train rows, :]. One step per epoch. The reference.

  partition  Random node partitions, GraphSAINT's node sampler (Zeng et al. 2020) with its
             aggregator normalisation. Each epoch, a random permutation of ALL N nodes is cut into
             --parts equal parts (numpy.array_split); each step trains on the subgraph induced by
             one part of n nodes: A_1 = S, A' restricted to the part's rows and columns with every
             off-diagonal entry divided by p = (n - 1) / (N - 1) (the probability that a
             neighbour of a sampled node is sampled too) and the self-loops unscaled; A_2 = S's
             rows of the part's training nodes. Loss: mean over the training nodes in the part.
             A step computes layer 1 for n nodes from n rows of W1.

  neighbour  Neighbour sampling as PyG's NeighborLoader does it (num_neighbors=[f1, f2]): each
             epoch the training documents are shuffled and cut into mini-batches of B seeds
             (the last one smaller). Hop 1: every seed keeps its self-loop (unscaled) and f1 of its
             other neighbours drawn uniformly without replacement (all of them when it has at most
             f1); hop 2: the same with f2 for every node of the 1-hop set S1 (seeds first). A
             sampled entry A'[v, u] is multiplied by deg(v) / f (deg(v): v's neighbours other
             than itself) when v's neighbours were subsampled, the usual unbiased estimate of
             A'[v, :] x. A_2 = the B x |S1| block, A_1 = the |S1| x |S2| block (S2 the 2-hop set,
             S1 first). A step computes layer 1 for |S1| nodes from |S2| rows of W1.
             --batch-size auto (the default) picks B, per fanout pair, by bisection so that the
             mean |S2| (the layer-1 input rows) matches the partition size n = N / --parts, i.e.
             the same number of W1 rows and layer-1 inputs per step as the partition scheme.

Evaluation after every epoch, exact and the same for every scheme: a full-graph forward without
sampling, dropout off, no gradients (H = relu(A' W1), logits of the validation and test rows =
A'[rows, :] (H W2)). Early stopping: the run stops when the validation loss has not reached a new
minimum for --patience epochs, or after --epochs (or after --time-limit seconds, a cap for short
benchmark sessions; such a run is marked stop_reason "time limit", not converged); test accuracy
and macro-F1 (mean over classes of 2TP / (2TP + FP + FN)) are those of the epoch with the lowest
validation loss.

Measured per run: epochs run, best epoch, best validation loss and accuracy, test accuracy and
macro-F1, the wall seconds of each epoch split into training (sampling or subgraph extraction,
"prepare", included) and evaluation, and per step the nodes touched: seeds / loss nodes, layer-1
output rows, layer-1 input rows (rows of W1 read), and the nonzeros of both blocks (means, min, max
over all steps of the run). Timings come from one machine with --threads torch threads; the
evaluation forward costs the same for every scheme and is reported apart.

Receptive field (--receptive-field, on by default): for random batches of B training documents
(B = 1, 16, 256), the fraction of all N nodes within 1 and 2 hops, exact (no fanout): whether an
exact 2-hop neighbourhood could ever be small on this graph.

Output: a table per run and a summary, and one JSON object per run (and one for the receptive
field) appended to --json-out as soon as it is known (JSON lines).
"""

import argparse
import json
import math
import os
import pathlib
import platform
import sys
import time
import warnings

import numpy as np

from bench_host import cpu_model
import torch
import torch.nn.functional as F

HIDDEN = 200
DROPOUT = 0.5
LEARNING_RATE = 0.02
COLUMN_BLOCK = 20
SPLIT_TRAIN, SPLIT_VALIDATION, SPLIT_TEST = 1, 2, 3

# --- the store --------------------------------------------------------------------------------


class Store:
    """The node-graph store as numpy arrays (CSR of A') and torch tensors (labels, splits)."""

    def __init__(self, path):
        path = pathlib.Path(path)
        manifest_path = path / "manifest.json"
        if not manifest_path.exists():
            raise SystemExit(f"node_sampling_choice: {path} is not a store (no manifest.json)")
        manifest = json.loads(manifest_path.read_text())
        if manifest.get("kind") != "node-graph":
            raise SystemExit(f"node_sampling_choice: {path}: not a node-graph store")
        self.path = str(path)
        self.classes = manifest["classes"]
        self.num_classes = len(self.classes)
        self.row_offsets = np.fromfile(path / "row_offsets.i64", dtype="<i8")
        self.columns = np.fromfile(path / "column_index.i32", dtype="<i4")
        self.weights = np.fromfile(path / "edge_weight.f32", dtype="<f4")
        labels = np.fromfile(path / "node_label.i32", dtype="<i4")
        split = np.fromfile(path / "node_split.u8", dtype=np.uint8)
        n = self.num_nodes = len(self.row_offsets) - 1
        e = self.num_edges = len(self.columns)
        if int(self.row_offsets[-1]) != e or len(self.weights) != e or len(labels) != n:
            raise SystemExit(f"node_sampling_choice: {path}: inconsistent array sizes")
        self.degree = np.diff(self.row_offsets)  # stored entries per row, self-loop included
        rows = np.repeat(np.arange(n, dtype=np.int32), self.degree)
        self_entries = np.flatnonzero(self.columns == rows)
        if len(self_entries) != n or len(np.unique(rows[self_entries])) != n:
            raise SystemExit("node_sampling_choice: every node needs exactly one self-loop")
        del rows
        # Offset of each row's self-loop inside the row; neighbours other than itself.
        self.self_offset = self_entries - self.row_offsets[:-1]
        self.neighbours = self.degree - 1
        self.labels_np = labels.astype(np.int64)
        self.labels = torch.from_numpy(self.labels_np)
        self.split = split
        self.train = np.flatnonzero(split == SPLIT_TRAIN)
        self.validation = np.flatnonzero(split == SPLIT_VALIDATION)
        self.test = np.flatnonzero(split == SPLIT_TEST)
        for name, nodes in (("train", self.train), ("validation", self.validation),
                            ("test", self.test)):
            if len(nodes) == 0 or (labels[nodes] < 0).any():
                raise SystemExit(f"node_sampling_choice: the {name} split is empty or unlabelled")
        self.is_train = split == SPLIT_TRAIN
        self.check_symmetry()

    def check_symmetry(self, samples=2000):
        """Spot check that A' is symmetric (the full and partition blocks use A' as A'^T)."""
        rng = np.random.default_rng(0)
        entries = rng.integers(0, self.num_edges, samples)
        rows = np.searchsorted(self.row_offsets, entries, side="right") - 1
        cols = self.columns[entries]
        for i, j, k in zip(rows, cols, entries):
            lo, hi = self.row_offsets[j], self.row_offsets[j + 1]
            at = lo + np.searchsorted(self.columns[lo:hi], i)
            if at >= hi or self.columns[at] != i or not np.isclose(self.weights[at],
                                                                     self.weights[k]):
                raise SystemExit(f"node_sampling_choice: A' is not symmetric at ({i}, {j})")


def gather_ranges(starts, lengths):
    """Flat indices of the ranges [starts[r], starts[r] + lengths[r]), in order."""
    lengths = lengths.astype(np.int64)
    before = np.cumsum(lengths) - lengths
    return np.arange(int(lengths.sum()), dtype=np.int64) + np.repeat(starts - before, lengths)


# --- sparse blocks and the product ------------------------------------------------------------


def csr(crow, col, val, shape):
    return torch.sparse_csr_tensor(torch.from_numpy(np.ascontiguousarray(crow, dtype=np.int64)),
                                   torch.from_numpy(np.ascontiguousarray(col, dtype=np.int64)),
                                   torch.from_numpy(np.ascontiguousarray(val, dtype=np.float32)),
                                   shape)


class Block:
    """A sparse block (rows x cols) as CSR, with a CSR of its transpose for the backward."""

    def __init__(self, rows, cols, vals, shape, symmetric=False, rows_sorted=False):
        num_rows, num_cols = shape
        if not rows_sorted:
            order = np.argsort(rows, kind="stable")
            rows, cols, vals = rows[order], cols[order], vals[order]
        crow = np.zeros(num_rows + 1, dtype=np.int64)
        np.cumsum(np.bincount(rows, minlength=num_rows), out=crow[1:])
        self.matrix = csr(crow, cols, vals, shape)
        self.shape = shape
        self.nnz = len(vals)
        if symmetric:
            self.transpose = self.matrix
        else:
            order = np.argsort(cols, kind="stable")
            crow_t = np.zeros(num_cols + 1, dtype=np.int64)
            np.cumsum(np.bincount(cols, minlength=num_cols), out=crow_t[1:])
            self.transpose = csr(crow_t, rows[order], vals[order], (num_cols, num_rows))


def spmm(matrix, dense):
    """matrix (CSR) @ dense, the dense operand in COLUMN_BLOCK-wide blocks (cache-friendly)."""
    if dense.shape[1] <= 2 * COLUMN_BLOCK:
        return torch.sparse.mm(matrix, dense.contiguous())
    return torch.cat([torch.sparse.mm(matrix, dense[:, j:j + COLUMN_BLOCK].contiguous())
                      for j in range(0, dense.shape[1], COLUMN_BLOCK)], dim=1)


class SparseProduct(torch.autograd.Function):
    """block @ dense; the backward multiplies by the block's stored transpose."""

    @staticmethod
    def forward(ctx, dense, block):
        ctx.block = block
        return spmm(block.matrix, dense)

    @staticmethod
    def backward(ctx, grad):
        return spmm(ctx.block.transpose, grad), None


def product(block, dense):
    return SparseProduct.apply(dense, block)


# --- the model --------------------------------------------------------------------------------


class TextGCN(torch.nn.Module):
    def __init__(self, num_nodes, num_classes):
        super().__init__()
        self.w1 = torch.nn.Parameter(torch.empty(num_nodes, HIDDEN))
        self.w2 = torch.nn.Parameter(torch.empty(HIDDEN, num_classes))
        torch.nn.init.xavier_uniform_(self.w1)
        torch.nn.init.xavier_uniform_(self.w2)

    def forward(self, layer1, layer2, input_rows):
        """layer1: |out1| x |input_rows| block, layer2: |loss rows| x |out1| block; input_rows the
        global ids of layer 1's columns (None: all nodes in order)."""
        w1 = self.w1 if input_rows is None else self.w1[torch.from_numpy(input_rows)]
        h = F.relu(product(layer1, w1))
        z = F.dropout(h, DROPOUT, self.training) @ self.w2
        return product(layer2, z)


def accuracy_and_macro_f1(predicted, truth, num_classes):
    accuracy = (predicted == truth).double().mean().item()
    confusion = torch.bincount(truth * num_classes + predicted, minlength=num_classes ** 2)
    confusion = confusion.reshape(num_classes, num_classes).double()
    true_positive = confusion.diag()
    denominator = confusion.sum(0) + confusion.sum(1)
    f1 = torch.where(denominator > 0, 2 * true_positive / denominator.clamp(min=1),
                     torch.zeros_like(true_positive))
    return accuracy, f1.mean().item()


# --- the schemes ------------------------------------------------------------------------------


class Step:
    """One training step's blocks and what they touch."""

    def __init__(self, layer1, layer2, input_rows, loss_nodes, output1_rows):
        self.layer1, self.layer2 = layer1, layer2
        self.input_rows = input_rows  # global ids of layer 1's columns (W1 rows), None = all
        self.loss_nodes = loss_nodes  # global ids of layer 2's rows (training nodes)
        self.stats = {
            "loss_nodes": len(loss_nodes),
            "layer1_output_rows": output1_rows,
            "layer1_input_rows": layer1.shape[1],
            "layer1_nnz": layer1.nnz,
            "layer2_nnz": layer2.nnz,
        }


class FullBatch:
    name = "full"

    def __init__(self, store):
        n = store.num_nodes
        rows = np.repeat(np.arange(n, dtype=np.int64), store.degree)
        whole = Block(rows, store.columns, store.weights, (n, n), symmetric=True, rows_sorted=True)
        del rows
        self.step = Step(whole, rows_block(store, store.train, n), None, store.train, n)
        self.settings = {}

    def epoch(self, rng):
        yield self.step


def rows_block(store, nodes, num_cols):
    """A'[nodes, :] (columns global), for the loss rows of the full-batch step and evaluation."""
    starts, lengths = store.row_offsets[nodes], store.degree[nodes]
    idx = gather_ranges(starts, lengths)
    rows = np.repeat(np.arange(len(nodes), dtype=np.int64), lengths)
    return Block(rows, store.columns[idx], store.weights[idx], (len(nodes), num_cols),
                 rows_sorted=True)


class Partition:
    name = "partition"

    def __init__(self, store, parts):
        self.store, self.parts = store, parts
        self.local = np.full(store.num_nodes, -1, dtype=np.int64)
        self.settings = {"parts": parts, "part_size": store.num_nodes / parts}

    def epoch(self, rng):
        store = self.store
        big_n = store.num_nodes
        for part in np.array_split(rng.permutation(big_n), self.parts):
            nodes = np.sort(part)
            n = len(nodes)
            p = (n - 1) / (big_n - 1)
            self.local[nodes] = np.arange(n)
            lengths = store.degree[nodes]
            idx = gather_ranges(store.row_offsets[nodes], lengths)
            cols = self.local[store.columns[idx]]
            keep = cols >= 0
            rows = np.repeat(np.arange(n, dtype=np.int64), lengths)[keep]
            cols = cols[keep]
            vals = store.weights[idx[keep]]
            vals = np.where(rows == cols, vals, vals / np.float32(p)).astype(np.float32)
            self.local[nodes] = -1
            layer1 = Block(rows, cols, vals, (n, n), symmetric=True, rows_sorted=True)
            # The loss rows: the part's training nodes (rows of S, in order).
            train_local = np.flatnonzero(store.is_train[nodes])
            crow = layer1.matrix.crow_indices().numpy()
            counts = np.diff(crow)[train_local]
            sel = gather_ranges(crow[train_local], counts)
            layer2 = Block(np.repeat(np.arange(len(train_local), dtype=np.int64), counts),
                           cols[sel], vals[sel], (len(train_local), n), rows_sorted=True)
            yield Step(layer1, layer2, nodes, nodes[train_local], n)


class Neighbour:
    name = "neighbour"

    def __init__(self, store, fanouts, batch_size):
        self.store, self.fanouts, self.batch_size = store, tuple(fanouts), batch_size
        self.local = np.full(store.num_nodes, -1, dtype=np.int64)
        self.settings = {"fanouts": list(self.fanouts), "batch_size": batch_size}

    def sample_hop(self, targets, fanout, rng):
        """Entries (target row, global column, scaled value) of one hop for `targets`."""
        store = self.store
        starts = store.row_offsets[targets]
        deg = store.neighbours[targets]
        whole = deg <= fanout
        # Rows kept whole: every stored entry, self-loop included, unscaled.
        w_rows = np.flatnonzero(whole)
        w_len = store.degree[targets[w_rows]]
        w_idx = gather_ranges(starts[w_rows], w_len)
        w_row = np.repeat(w_rows, w_len)
        w_scale = np.ones(len(w_idx), dtype=np.float32)
        # Subsampled rows: the self-loop, and `fanout` other neighbours without replacement.
        s_rows = np.flatnonzero(~whole)
        s_deg = deg[s_rows]
        picks = sample_without_replacement(s_deg, fanout, rng)  # [m, fanout] in [0, deg)
        self_off = store.self_offset[targets[s_rows]]
        picks = picks + (picks >= self_off[:, None])  # skip over the self-loop
        s_idx = (starts[s_rows][:, None] + picks).ravel()
        s_row = np.repeat(s_rows, fanout)
        s_scale = np.repeat((s_deg / fanout).astype(np.float32), fanout)
        self_idx = starts[s_rows] + self_off
        idx = np.concatenate([w_idx, s_idx, self_idx])
        row = np.concatenate([w_row, s_row, s_rows])
        scale = np.concatenate([w_scale, s_scale, np.ones(len(s_rows), dtype=np.float32)])
        return row, store.columns[idx].astype(np.int64), store.weights[idx] * scale

    def block(self, targets, fanout, rng):
        """The |targets| x |sources| block of one hop; sources = targets first, then the new
        nodes in increasing id."""
        row, col, val = self.sample_hop(targets, fanout, rng)
        self.local[targets] = np.arange(len(targets))
        new = np.unique(col[self.local[col] < 0])
        sources = np.concatenate([targets, new])
        self.local[new] = np.arange(len(targets), len(sources))
        block = Block(row, self.local[col], val.astype(np.float32), (len(targets), len(sources)))
        self.local[sources] = -1
        return block, sources

    def make_step(self, seeds, rng):
        f1, f2 = self.fanouts
        layer2, hop1 = self.block(seeds, f1, rng)
        layer1, hop2 = self.block(hop1, f2, rng)
        return Step(layer1, layer2, hop2, seeds, len(hop1))

    def epoch(self, rng):
        order = rng.permutation(self.store.train)
        for start in range(0, len(order), self.batch_size):
            yield self.make_step(order[start:start + self.batch_size], rng)

    def mean_inputs(self, batch_size, batches, rng):
        sizes = []
        for _ in range(batches):
            seeds = rng.choice(self.store.train, batch_size, replace=False)
            f1, f2 = self.fanouts
            _, hop1 = self.block(seeds, f1, rng)
            row, col, _ = self.sample_hop(hop1, f2, rng)
            sizes.append(len(np.union1d(hop1, col)))
        return float(np.mean(sizes))

    def tune_batch_size(self, target, rng, batches=12):
        """Smallest-error B (bisection on the mean |S2|, which grows with B) for the target."""
        lo, hi = 1, len(self.store.train)
        trace = []
        while lo < hi:
            mid = (lo + hi) // 2
            size = self.mean_inputs(mid, batches, rng)
            trace.append((mid, size))
            if size < target:
                lo = mid + 1
            else:
                hi = mid
        best = min(trace, key=lambda t: abs(t[1] - target))[0] if trace else lo
        candidates = {best, lo, max(1, lo - 1)}
        final = {b: self.mean_inputs(b, 3 * batches, rng) for b in sorted(candidates)}
        best = min(final, key=lambda b: abs(final[b] - target))
        return best, final[best], trace


def sample_without_replacement(degrees, fanout, rng):
    """For each row r, `fanout` distinct integers drawn uniformly from [0, degrees[r])
    (degrees > fanout): random keys for rows of small degree, rejection for the others."""
    m = len(degrees)
    out = np.empty((m, fanout), dtype=np.int64)
    if m == 0:
        return out
    small = degrees <= 4 * fanout
    s_rows = np.flatnonzero(small)
    if len(s_rows):
        d = degrees[s_rows]
        owner = np.repeat(np.arange(len(s_rows)), d)
        value = np.arange(int(d.sum())) - np.repeat(np.cumsum(d) - d, d)
        order = np.lexsort((rng.random(len(owner)), owner))
        first = np.repeat(np.cumsum(d) - d, fanout) + np.tile(np.arange(fanout), len(s_rows))
        out[s_rows] = value[order][first].reshape(len(s_rows), fanout)
    b_rows = np.flatnonzero(~small)
    if len(b_rows):
        d = degrees[b_rows][:, None]
        picks = np.floor(rng.random((len(b_rows), fanout)) * d).astype(np.int64)
        while True:
            picks.sort(axis=1)
            dup = np.zeros_like(picks, dtype=bool)
            dup[:, 1:] = picks[:, 1:] == picks[:, :-1]
            if not dup.any():
                break
            r, c = np.nonzero(dup)
            picks[r, c] = np.floor(rng.random(len(r)) * d[r, 0]).astype(np.int64)
        out[b_rows] = picks
    return out


# --- one run ----------------------------------------------------------------------------------


class Evaluator:
    """Exact full-graph forward: H = relu(A' W1) for all nodes, logits for validation and test."""

    def __init__(self, store, whole):
        self.store = store
        self.whole = whole
        self.rows = np.concatenate([store.validation, store.test])
        self.block = rows_block(store, self.rows, store.num_nodes)
        self.num_validation = len(store.validation)
        self.labels = store.labels[torch.from_numpy(self.rows)]

    @torch.no_grad()
    def __call__(self, model):
        model.eval()
        h = F.relu(spmm(self.whole.matrix, model.w1))
        logits = spmm(self.block.matrix, h @ model.w2)
        v = self.num_validation
        loss = F.cross_entropy(logits[:v], self.labels[:v]).item()
        predicted = logits.argmax(1)
        accuracy = (predicted[:v] == self.labels[:v]).double().mean().item()
        return loss, accuracy, predicted[v:]


def train(store, scheme, evaluator, seed, settings):
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    model = TextGCN(store.num_nodes, store.num_classes)
    optimizer = torch.optim.Adam(model.parameters(), lr=LEARNING_RATE, weight_decay=0.0,
                                 fused=True)
    history, step_stats = [], []
    best = {"validation_loss": math.inf}
    since_best = 0
    stop_reason = "max epochs"
    run_start = time.perf_counter()
    for epoch in range(1, settings.epochs + 1):
        start = time.perf_counter()
        prepare = compute = 0.0
        losses, steps = [], 0
        model.train()
        batches = scheme.epoch(rng)
        while True:
            t0 = time.perf_counter()
            step = next(batches, None)
            t1 = time.perf_counter()
            prepare += t1 - t0
            if step is None:
                break
            optimizer.zero_grad(set_to_none=True)
            logits = model(step.layer1, step.layer2, step.input_rows)
            loss = F.cross_entropy(logits, store.labels[torch.from_numpy(step.loss_nodes)])
            loss.backward()
            optimizer.step()
            compute += time.perf_counter() - t1
            losses.append(loss.item())
            steps += 1
            step_stats.append(step.stats)
        train_seconds = time.perf_counter() - start
        t0 = time.perf_counter()
        validation_loss, validation_accuracy, test_predicted = evaluator(model)
        eval_seconds = time.perf_counter() - t0
        history.append({"epoch": epoch, "steps": steps, "train_loss": float(np.mean(losses)),
                        "validation_loss": validation_loss,
                        "validation_accuracy": validation_accuracy,
                        "train_seconds": train_seconds, "prepare_seconds": prepare,
                        "compute_seconds": compute, "eval_seconds": eval_seconds})
        improved = validation_loss < best["validation_loss"]
        if improved:
            best = {"validation_loss": validation_loss, "epoch": epoch,
                    "validation_accuracy": validation_accuracy, "test_predicted": test_predicted}
            since_best = 0
        else:
            since_best += 1
        test_note = ""
        if improved:
            history[-1]["test_accuracy"] = accuracy_and_macro_f1(
                test_predicted, store.labels[torch.from_numpy(store.test)], store.num_classes)[0]
            test_note = f"  test acc {history[-1]['test_accuracy']:.4f}"
        if settings.verbose:
            print(f"    epoch {epoch:3d}  steps {steps:3d}  train loss "
                  f"{history[-1]['train_loss']:.4f}  val loss {validation_loss:.4f}"
                  f"{' *' if improved else '  '}  val acc "
                  f"{validation_accuracy:.4f}  train {train_seconds:6.2f} s (prepare "
                  f"{prepare:5.2f})  eval {eval_seconds:5.2f} s{test_note}", flush=True)
        if not math.isfinite(validation_loss):
            stop_reason = "non-finite validation loss"
            break
        if since_best >= settings.patience:
            stop_reason = "early stopping"
            break
        if settings.time_limit and time.perf_counter() - run_start >= settings.time_limit:
            stop_reason = "time limit"
            break
    if "test_predicted" not in best:
        raise RuntimeError("the validation loss was never finite")
    accuracy, macro_f1 = accuracy_and_macro_f1(
        best["test_predicted"], store.labels[torch.from_numpy(store.test)], store.num_classes)

    def mean(key):
        return float(np.mean([h[key] for h in history]))

    per_step = {}
    for key in step_stats[0]:
        values = np.array([s[key] for s in step_stats], dtype=np.float64)
        per_step[key] = {"mean": float(values.mean()), "min": int(values.min()),
                         "max": int(values.max())}
    return {
        "status": "ok",
        "epochs_run": len(history),
        "best_epoch": best["epoch"],
        "stopped_early": len(history) < settings.epochs,
        "stop_reason": stop_reason,
        "time_limit_seconds": settings.time_limit,
        "best_validation_loss": best["validation_loss"],
        "best_validation_accuracy": best["validation_accuracy"],
        "test_accuracy": accuracy,
        "test_macro_f1": macro_f1,
        "steps_per_epoch": history[0]["steps"],
        "steps_to_best": sum(h["steps"] for h in history[:best["epoch"]]),
        "train_seconds_per_epoch": mean("train_seconds"),
        "prepare_seconds_per_epoch": mean("prepare_seconds"),
        "compute_seconds_per_epoch": mean("compute_seconds"),
        "eval_seconds_per_epoch": mean("eval_seconds"),
        "seconds_per_epoch": mean("train_seconds") + mean("eval_seconds"),
        "train_seconds_to_best": sum(h["train_seconds"] for h in history[:best["epoch"]]),
        "per_step": per_step,
        "history": history,
    }


# --- receptive field --------------------------------------------------------------------------


def receptive_field(store, batch_sizes=(1, 16, 256), trials=(50, 20, 10), seed=0):
    """Mean fraction of all nodes within 1 and 2 hops (exact) of B random training documents."""
    rng = np.random.default_rng(seed)
    n = store.num_nodes
    out = {}
    for b, t in zip(batch_sizes, trials):
        one, two = [], []
        for _ in range(t):
            seeds = rng.choice(store.train, b, replace=False)
            mark = np.zeros(n, dtype=bool)
            mark[store.columns[gather_ranges(store.row_offsets[seeds], store.degree[seeds])]] = True
            hop1 = np.flatnonzero(mark)
            one.append(len(hop1) / n)
            mark[store.columns[gather_ranges(store.row_offsets[hop1], store.degree[hop1])]] = True
            two.append(mark.sum() / n)
        out[str(b)] = {"trials": t, "hop1_fraction_mean": float(np.mean(one)),
                       "hop2_fraction_mean": float(np.mean(two)),
                       "hop2_fraction_min": float(np.min(two)),
                       "hop2_fraction_max": float(np.max(two))}
    return out


# --- main -------------------------------------------------------------------------------------


def emit(path, record):
    if path:
        with open(path, "a") as out:
            out.write(json.dumps(record, sort_keys=True) + "\n")


def describe(result):
    s = result["settings"]
    if result["scheme"] == "partition":
        return f"k={s['parts']}"
    if result["scheme"] == "neighbour":
        return f"B={s['batch_size']} fanout={s['fanouts'][0]},{s['fanouts'][1]}"
    return "exact"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--store", required=True)
    parser.add_argument("--schemes", default="full,partition,neighbour",
                        help="comma list of full, partition, neighbour")
    parser.add_argument("--seeds", default="1")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--parts", type=int, default=4, help="partition: parts per epoch (k)")
    parser.add_argument("--fanouts", nargs="+", default=["25,10", "10,10"],
                        help="neighbour: one or more 'f1,f2' pairs (hop 1 from the seeds first)")
    parser.add_argument("--batch-size", default="auto",
                        help="neighbour: seeds per step, or 'auto' (match N/--parts layer-1 "
                        "input rows)")
    parser.add_argument("--epochs", type=int, default=200)
    parser.add_argument("--patience", type=int, default=10)
    parser.add_argument("--time-limit", type=float, default=None,
                        help="stop a run after the epoch that takes it past this many wall "
                        "seconds (stop_reason 'time limit': not converged; metrics are those of "
                        "the best epoch so far)")
    parser.add_argument("--receptive-field", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument("--quiet", dest="verbose", action="store_false",
                        help="no per-epoch lines")
    parser.add_argument("--json-out", default=None, help="append JSON lines here")
    settings = parser.parse_args()
    schemes = [s for s in settings.schemes.split(",") if s]
    for s in schemes:
        if s not in ("full", "partition", "neighbour"):
            parser.error(f"unknown scheme {s}")
    seeds = [int(s) for s in settings.seeds.split(",") if s]
    fanouts = [tuple(int(f) for f in pair.split(",")) for pair in settings.fanouts]
    if any(len(f) != 2 for f in fanouts):
        parser.error("--fanouts takes 'f1,f2' pairs (two layers)")

    torch.set_num_threads(settings.threads)
    warnings.filterwarnings("ignore", message=".*[Ss]parse.*")
    if settings.json_out:
        pathlib.Path(settings.json_out).parent.mkdir(parents=True, exist_ok=True)

    t0 = time.perf_counter()
    store = Store(settings.store)
    full = FullBatch(store)
    evaluator = Evaluator(store, full.step.layer1)
    common = {"store": store.path, "num_nodes": store.num_nodes, "num_edges": store.num_edges,
              "num_classes": store.num_classes, "threads": settings.threads,
              "max_epochs": settings.epochs, "patience": settings.patience,
              "torch_version": torch.__version__, "numpy_version": np.__version__,
              "python_version": platform.python_version(), "cpu_model": cpu_model(),
              "nproc": os.cpu_count(), "hostname": platform.node()}
    print(f"store {store.path}: N {store.num_nodes:,}, E {store.num_edges:,}, "
          f"{store.num_classes} classes, {len(store.train)} train / {len(store.validation)} "
          f"validation / {len(store.test)} test; loaded in {time.perf_counter() - t0:.1f} s; "
          f"{settings.threads} thread(s); torch {torch.__version__}; {cpu_model()}", flush=True)

    if settings.receptive_field:
        t0 = time.perf_counter()
        field = receptive_field(store)
        record = {"kind": "receptive_field", **common, "receptive_field": field,
                  "seconds": time.perf_counter() - t0}
        emit(settings.json_out, record)
        for b, r in field.items():
            print(f"receptive field B={b:>3}: 1 hop {r['hop1_fraction_mean']:.3f} of N, 2 hops "
                  f"{r['hop2_fraction_mean']:.3f} of N (min {r['hop2_fraction_min']:.3f}, max "
                  f"{r['hop2_fraction_max']:.3f}, {r['trials']} batches)", flush=True)

    runs = []
    for name in schemes:
        if name == "full":
            variants = [full]
        elif name == "partition":
            variants = [Partition(store, settings.parts)]
        else:
            variants = []
            target = store.num_nodes / settings.parts
            for pair in fanouts:
                scheme = Neighbour(store, pair, None)
                if settings.batch_size == "auto":
                    t0 = time.perf_counter()
                    b, size, trace = scheme.tune_batch_size(target, np.random.default_rng(12345))
                    print(f"neighbour fanout {pair}: B={b} gives a mean of {size:,.0f} layer-1 "
                          f"input rows (target {target:,.0f}; tuned in "
                          f"{time.perf_counter() - t0:.1f} s)", flush=True)
                    scheme.settings["tuning"] = {"target": target, "probe_mean": size,
                                                 "trace": trace}
                else:
                    b = int(settings.batch_size)
                scheme.batch_size = b
                scheme.settings["batch_size"] = b
                variants.append(scheme)
        for scheme in variants:
            for seed in seeds:
                print(f"== {scheme.name} {scheme.settings if scheme.name != 'full' else ''} "
                      f"seed {seed}", flush=True)
                record = {"kind": "run", "scheme": scheme.name, "seed": seed,
                          "settings": {k: v for k, v in scheme.settings.items()}, **common,
                          "load_average_start": os.getloadavg()[0]}
                try:
                    record.update(train(store, scheme, evaluator, seed, settings))
                except Exception as error:  # noqa: BLE001 - a failure is a result too
                    record.update({"status": "error", "error": f"{type(error).__name__}: {error}"})
                record["load_average_end"] = os.getloadavg()[0]
                emit(settings.json_out, record)
                runs.append(record)
                if record["status"] == "ok":
                    ps = record["per_step"]
                    print(f"   -> best epoch {record['best_epoch']} of {record['epochs_run']}, "
                          f"test acc {record['test_accuracy']:.4f}, macro-F1 "
                          f"{record['test_macro_f1']:.4f}, {record['seconds_per_epoch']:.2f} "
                          f"s/epoch (train {record['train_seconds_per_epoch']:.2f}, eval "
                          f"{record['eval_seconds_per_epoch']:.2f}), stopped by "
                          f"{record['stop_reason']}, layer-1 inputs/step "
                          f"{ps['layer1_input_rows']['mean']:,.0f}", flush=True)
                else:
                    print(f"   -> {record['error']}", flush=True)

    print("\nscheme     settings                 steps/ep  L1 in rows  L1 out rows  loss nodes"
          "  L1 nnz     epochs(best)  test acc  macro-F1  train s/ep  eval s/ep")
    for r in runs:
        if r["status"] != "ok":
            print(f"{r['scheme']:<10} {describe(r):<24} {r['error']}")
            continue
        ps = r["per_step"]
        print(f"{r['scheme']:<10} {describe(r):<24} {r['steps_per_epoch']:>8} "
              f"{ps['layer1_input_rows']['mean']:>11,.0f} "
              f"{ps['layer1_output_rows']['mean']:>12,.0f} {ps['loss_nodes']['mean']:>11,.0f} "
              f"{ps['layer1_nnz']['mean']:>10,.0f} "
              f"{r['epochs_run']:>6}({r['best_epoch']:>3})   {r['test_accuracy']:.4f}    "
              f"{r['test_macro_f1']:.4f}    {r['train_seconds_per_epoch']:>7.2f}   "
              f"{r['eval_seconds_per_epoch']:>7.2f}   seed {r['seed']}")


if __name__ == "__main__":
    main()
