#!/usr/bin/env python3
"""TextGCN trained with PyTorch Geometric on the graph headroom built: a reference for headroom's
own node-level training (issue 27), and a check of headroom's graph (its test accuracy should be
the paper's).

Written for torch 2.11 and torch_geometric 2.8.1 (pure Python; no torch_scatter / torch_sparse).
Usage:

    python bench/pyg_textgcn_bench.py --store stores/r8
        [--configs sparse-embedding,sparse-edgeindex,edge-index] [--seeds 1,2,3]
        [--epochs 200] [--patience 10] [--stopping best|textgcn] [--threads 2] [--memory-cap 12]
        [--tensor-peak counting|off] [--json-out FILE]

The graph is a node-graph store (docs/store-format.md, "Node-graph stores"): CSR arrays of the
normalised adjacency A' = D^-1/2 (A + I) D^-1/2 (self-loops and normalisation already done, so
every layer here runs with normalize=False), node labels and the node split (1 train,
2 validation, 3 test). Nothing of the graph is recomputed or changed.

The model (TextGCN's: Yao, Mao, Luo, AAAI 2019, as its reference code builds it on Kipf's GCN):
identity node features X = I,

    H      = relu(A' (dropout(X)) W1)            W1: [N, 200], no bias
    logits = A' (dropout(H)) W2                  W2: [200, classes], no bias

dropout 0.5 on both layers' inputs (on X it drops whole rows of W1), Glorot-uniform weights,
cross-entropy over the training nodes, Adam lr 0.02, no weight decay, full batch. Each epoch is
one training step, then one evaluation forward (dropout off, no gradients) whose validation loss
drives early stopping. --stopping best (the default): the run stops when the validation loss has
not reached a new minimum for --patience epochs, or after --epochs, and the test accuracy and
macro-F1 (mean over classes of 2TP / (2TP + FP + FN), 0 for a class never true nor predicted) are
those of the evaluation forward of the epoch with the lowest validation loss. --stopping textgcn,
as TextGCN's train.py does it: from epoch --patience + 2 on, the run stops when the validation
loss exceeds the mean of the --patience losses before it, and the test metrics are those of the
last epoch's model.

The configurations (--configs):

  sparse-embedding   The best configuration through GCNConv. The adjacency is a torch.sparse CSR
                     tensor (int64 indices, float32 values). PyG 2.8's GCNConv sees a torch.sparse
                     tensor, takes its "fused" path (message_and_aggregate: one torch.sparse.mm,
                     no per-edge tensor; GCNConv's edge_weight argument is not used there, the
                     weights are the tensor's values). Layer 1 never forms X: A' dropout(X) W1 is
                     torch_geometric.utils.spmm(A', W1 scaled by the dropout mask per row), the
                     call GCNConv's fused path makes; layer 2 is GCNConv(200, classes). Cost of
                     this path: torch's backward of sparse.mm multiplies by A'^T, a CSC view that
                     it converts back to CSR (a sort of all E entries) in every backward, per
                     layer.
  sparse-edgeindex   The same model on a torch_geometric.EdgeIndex (sorted by row): both products
                     are EdgeIndex.matmul(x, input_value=weights), layer 2 on GCNConv's own Linear
                     (GCNConv itself does not fuse an EdgeIndex in 2.8: SUPPORTS_FUSED_EDGE_INDEX
                     is False, so it would pass messages). EdgeIndex sorts the transpose once and
                     caches it (3 x E int64 more), so a backward does not sort.
  edge-index         PyG's default path: GCNConv over edge_index [2, E] (int64) and edge_weight
                     [E]. Message passing gathers one row per edge and multiplies it by the
                     weight before scatter-adding, so each layer holds [E, channels] floats, twice
                     at its peak, forward and backward. X is a sparse COO identity (GCNConv's
                     Linear, F.linear, accepts it; dropout is applied to its N values), so this
                     configuration pays for the messages only.
  edge-index-dense   As edge-index with X a dense torch.eye(N) and F.dropout on it: the identity
                     as most GCN examples write it ([N, N] float32, and dropout's copy). Not in
                     the default list.

For one seed, sparse-embedding, sparse-edgeindex and edge-index draw the same initial weights and
the same dropout masks, so they compute the same model and should agree to float rounding: a
check that they are what they claim (edge-index-dense draws its dropout over N x N and differs
by chance alone).

Measurement. Each (configuration, seed) runs in a forked child, so that its peaks are its own;
the parent has only imported torch and PyG and read the manifest. In the child:
  * load average: os.getloadavg()'s one-minute figure when the run starts and ends (the machine
    this was written on is shared; a loaded machine stretches the times, not the memory).
  * epoch seconds: wall clock of the training step plus the evaluation forward; reported for the
    first epoch alone (it includes first-touch allocation) and as the mean of the others.
  * peak RSS: the child's resource.getrusage(RUSAGE_SELF).ru_maxrss. It includes the interpreter
    and the torch and PyG libraries inherited from the parent (`rss_start_bytes`, the child's
    VmRSS when it starts, is that baseline).
  * peak tensor (--tensor-peak counting, the default): the high-water mark of live CPU tensor
    bytes, by the counting allocator of bench/pyg_reference_bench.py (installed as c10's CPU
    allocator in the child before the graph is loaded; compiled once with g++ and cached). It
    counts what torch allocates: parameters, Adam's state, activations, gradients, and the graph
    tensors torch makes (edge_index's stacked copy, EdgeIndex's cached transpose, the transposes
    and conversions inside sparse products). The store's arrays are copied into memory by numpy
    and wrapped (torch.from_numpy), so they are not counted, as headroom's memory-mapped store is
    not; `graph_bytes` is the size of every graph tensor, those included. "off" or no compiler:
    not measured.
  * memory cap: the child runs under RLIMIT_AS = its address-space size at start (about 3.5 GB of
    mostly unbacked library mappings for torch) + --memory-cap GiB, so a configuration that does
    not fit fails with an allocation error, reported as "out of memory at cap", instead of taking
    the machine down. Before each configuration the parent prints the sizes it will need.

Output: a table per (configuration, seed), a summary per configuration (mean and standard deviation
over seeds), then one JSON line per (configuration, seed) with the store, N, E, classes, threads,
versions and every number above (with --json-out FILE, each line is also appended to FILE as
soon as its run ends).
"""

import argparse
import ctypes
import json
import math
import os
import pathlib
import platform
import re
import resource
import sys
import time
import traceback
import warnings

import numpy as np

from bench_host import cpu_model
import torch
import torch.nn.functional as F
from torch import nn

from pyg_reference_bench import rss_bytes  # same folder: /proc/self/status fields

try:
    import torch_geometric
    from torch_geometric import EdgeIndex
    from torch_geometric.nn import GCNConv
    from torch_geometric.utils import spmm
except ImportError:  # pragma: no cover
    sys.exit("pyg_textgcn_bench: torch_geometric is missing: pip install torch_geometric==2.8.1")

PYG_PIN = "2.8.1"
CONFIGS = ("sparse-embedding", "sparse-edgeindex", "edge-index", "edge-index-dense")
HIDDEN = 200
DROPOUT = 0.5
LEARNING_RATE = 0.02
SPLIT_TRAIN, SPLIT_VALIDATION, SPLIT_TEST = 1, 2, 3
GIB = 1 << 30
MIB = 1 << 20

# --- the store --------------------------------------------------------------------------------


def read_manifest(path):
    manifest_path = pathlib.Path(path) / "manifest.json"
    if not manifest_path.exists():
        raise SystemExit(f"pyg_textgcn_bench: {path} is not a store (no manifest.json)")
    manifest = json.loads(manifest_path.read_text())
    if manifest.get("format") != "headroom-graph-store" or manifest.get("kind") != "node-graph":
        raise SystemExit(f"pyg_textgcn_bench: {path}: not a headroom node-graph store")
    return manifest


def map_arrays(path, manifest):
    """Every array of the store, memory-mapped read-only, shapes and dtypes from the manifest."""
    arrays = {}
    for name, spec in manifest["arrays"].items():
        arrays[name] = np.memmap(pathlib.Path(path) / spec["file"], dtype=spec["dtype"], mode="r",
                                 shape=tuple(spec["shape"]))
    n, e = manifest["num_nodes"], manifest["num_edges"]
    if arrays["row_offsets"].shape != (n + 1,) or int(arrays["row_offsets"][-1]) != e:
        raise SystemExit(f"pyg_textgcn_bench: {path}: row_offsets do not end at num_edges {e}")
    return arrays


class Graph:
    """The store's graph as torch tensors, in the form one configuration needs."""

    def __init__(self, path, manifest, config):
        arrays = map_arrays(path, manifest)
        self.num_nodes = manifest["num_nodes"]
        self.num_classes = len(manifest["classes"])
        row_offsets = torch.from_numpy(np.array(arrays["row_offsets"], dtype=np.int64))
        columns = torch.from_numpy(np.array(arrays["column_index"], dtype=np.int64))
        weights = torch.from_numpy(np.array(arrays["edge_weight"], dtype=np.float32))
        labels = torch.from_numpy(np.array(arrays["node_label"], dtype=np.int64))
        split = torch.from_numpy(np.array(arrays["node_split"], dtype=np.uint8))
        self.train = torch.nonzero(split == SPLIT_TRAIN).flatten()
        self.validation = torch.nonzero(split == SPLIT_VALIDATION).flatten()
        self.test = torch.nonzero(split == SPLIT_TEST).flatten()
        self.labels = labels
        for name, nodes in (("train", self.train), ("validation", self.validation),
                            ("test", self.test)):
            if nodes.numel() == 0 or bool((labels[nodes] < 0).any()):
                raise SystemExit(f"pyg_textgcn_bench: {path}: the {name} split is empty or has "
                                 "unlabelled nodes")
        n = self.num_nodes
        self.edge_weight = weights
        if config == "sparse-embedding":
            self.adjacency = torch.sparse_csr_tensor(row_offsets, columns, weights, (n, n))
            self.tensors = (row_offsets, columns, weights)
            return
        rows = torch.repeat_interleave(torch.arange(n), row_offsets.diff())
        if config == "sparse-edgeindex":
            # Sorted by row: A' as stored; matmul(x) is A' x.
            self.adjacency = EdgeIndex(torch.stack([rows, columns]), sparse_size=(n, n),
                                       sort_order="row")
            self.tensors = (self.adjacency.as_tensor(), weights)
            return
        # Row i's entries are A'[i, j]. Message passing sends from edge_index[0] (source) to
        # edge_index[1] (target); with source j and target i, every layer computes A' x, as the
        # sparse paths do (A' is symmetric anyway).
        self.edge_index = torch.stack([columns, rows])
        self.tensors = (self.edge_index, weights)

    def graph_bytes(self):
        """Bytes of the graph's tensors now (EdgeIndex adds its cached transpose once used)."""
        tensors = list(self.tensors)
        adjacency = getattr(self, "adjacency", None)
        if isinstance(adjacency, EdgeIndex):  # its caches are private attributes in PyG 2.8
            names = ("_T_perm", "_indptr", "_T_indptr")
            cached = [getattr(adjacency, name, None) for name in names]
            cached += list(getattr(adjacency, "_T_index", None) or ())
            tensors += [t for t in cached if isinstance(t, torch.Tensor)]
        seen, total = set(), 0
        for t in tensors:
            if t.untyped_storage().data_ptr() not in seen:
                seen.add(t.untyped_storage().data_ptr())
                total += t.untyped_storage().nbytes()
        return total


# --- the models -------------------------------------------------------------------------------


def input_keep(num_nodes, training):
    """Dropout on X = I: per node, 0 or 1 / (1 - p), one draw of N (as in every configuration
    but edge-index-dense)."""
    return F.dropout(torch.ones(num_nodes), DROPOUT, training)


class SparseEmbeddingGCN(nn.Module):
    """Layer 1 as A' W1 (the identity never formed). A' a torch.sparse CSR tensor: the product is
    torch_geometric.utils.spmm and layer 2 a GCNConv (fused path). A' an EdgeIndex: both products
    are EdgeIndex.matmul with the weights as input_value, layer 2 on GCNConv's own Linear."""

    def __init__(self, num_nodes, num_classes):
        super().__init__()
        # W1 is the weight GCNConv(N, 200) draws for its Linear ([200, N], Glorot), transposed:
        # for one seed, the same initial model as edge-index.
        weight = GCNConv(num_nodes, HIDDEN, normalize=False, bias=False).lin.weight
        self.w1 = nn.Parameter(weight.detach().t().contiguous())
        self.conv2 = GCNConv(HIDDEN, num_classes, normalize=False, bias=False)

    def forward(self, graph):
        w1 = self.w1
        if self.training:
            w1 = w1 * input_keep(graph.num_nodes, True).unsqueeze(1)
        adjacency = graph.adjacency
        if isinstance(adjacency, EdgeIndex):
            h = F.relu(adjacency.matmul(w1, input_value=graph.edge_weight))
            h = F.dropout(h, DROPOUT, self.training)
            return adjacency.matmul(self.conv2.lin(h), input_value=graph.edge_weight)
        h = F.relu(spmm(adjacency, w1))
        h = F.dropout(h, DROPOUT, self.training)
        return self.conv2(h, adjacency)


class EdgeIndexGCN(nn.Module):
    """Two GCNConv over edge_index + edge_weight (per-edge message passing); X a sparse COO
    identity, or with dense_identity a dense torch.eye(N)."""

    def __init__(self, num_nodes, num_classes, dense_identity):
        super().__init__()
        self.conv1 = GCNConv(num_nodes, HIDDEN, normalize=False, bias=False)
        self.conv2 = GCNConv(HIDDEN, num_classes, normalize=False, bias=False)
        self.num_nodes = num_nodes
        self.diagonal = torch.arange(num_nodes).expand(2, num_nodes)
        self.dense_x = torch.eye(num_nodes) if dense_identity else None

    def features(self):
        if self.dense_x is not None:
            return F.dropout(self.dense_x, DROPOUT, self.training)
        keep = input_keep(self.num_nodes, self.training)
        return torch.sparse_coo_tensor(self.diagonal, keep, (self.num_nodes, self.num_nodes),
                                       is_coalesced=True)

    def forward(self, graph):
        h = F.relu(self.conv1(self.features(), graph.edge_index, graph.edge_weight))
        h = F.dropout(h, DROPOUT, self.training)
        return self.conv2(h, graph.edge_index, graph.edge_weight)


def make_model(config, num_nodes, num_classes):
    if config.startswith("sparse-"):
        return SparseEmbeddingGCN(num_nodes, num_classes)
    return EdgeIndexGCN(num_nodes, num_classes, dense_identity=config == "edge-index-dense")


# --- metrics ----------------------------------------------------------------------------------


def accuracy_and_macro_f1(predicted, truth, num_classes):
    accuracy = (predicted == truth).double().mean().item()
    confusion = torch.bincount(truth * num_classes + predicted, minlength=num_classes ** 2)
    confusion = confusion.reshape(num_classes, num_classes).double()
    true_positive = confusion.diag()
    denominator = confusion.sum(0) + confusion.sum(1)  # 2TP + FP + FN
    f1 = torch.where(denominator > 0, 2 * true_positive / denominator.clamp(min=1),
                     torch.zeros_like(true_positive))
    return accuracy, f1.mean().item()


# --- one run ----------------------------------------------------------------------------------


def install_counting_allocator(path):
    if path is None:
        return None
    counting = ctypes.CDLL(str(path))
    counting.hr_peak.restype = ctypes.c_int64
    if counting.hr_install() != 0:
        raise RuntimeError("could not install the counting CPU allocator")
    return counting


def stops(settings, earlier_losses, validation_loss, since_best):
    """Whether training ends after this epoch. "best": no new lowest validation loss for
    --patience epochs. "textgcn" (TextGCN's train.py): from epoch --patience + 2 on, when the loss
    exceeds the mean of the --patience losses before it."""
    if settings.stopping == "best":
        return since_best >= settings.patience
    window = earlier_losses[-settings.patience:]
    return (len(earlier_losses) > settings.patience
            and validation_loss > sum(window) / len(window))


def train(settings, config, seed, counting):
    manifest = read_manifest(settings.store)
    graph = Graph(settings.store, manifest, config)
    torch.manual_seed(seed)
    model = make_model(config, graph.num_nodes, graph.num_classes)
    optimizer = torch.optim.Adam(model.parameters(), lr=LEARNING_RATE, weight_decay=0.0)
    labels = graph.labels

    epoch_seconds, validation_losses = [], []
    best = dict(validation_loss=math.inf, epoch=0)
    reported = None  # the evaluation whose test metrics are reported
    since_best = 0
    for epoch in range(1, settings.epochs + 1):
        start = time.perf_counter()
        model.train()
        optimizer.zero_grad(set_to_none=True)
        logits = model(graph)
        loss = F.cross_entropy(logits[graph.train], labels[graph.train])
        loss.backward()
        optimizer.step()
        del logits
        model.eval()
        with torch.no_grad():
            logits = model(graph)
            validation_loss = F.cross_entropy(logits[graph.validation],
                                              labels[graph.validation]).item()
        epoch_seconds.append(time.perf_counter() - start)
        improved = validation_loss < best["validation_loss"]
        if improved or settings.stopping == "textgcn":
            validation_predicted = logits[graph.validation].argmax(1)
            evaluation = dict(
                validation_loss=validation_loss,
                epoch=epoch,
                train_loss=loss.item(),
                validation_accuracy=(validation_predicted == labels[graph.validation])
                .double().mean().item(),
                test_predicted=logits[graph.test].argmax(1),
            )
            reported = evaluation
            if improved:
                best = evaluation
        since_best = 0 if improved else since_best + 1
        del logits, loss
        if stops(settings, validation_losses, validation_loss, since_best):
            break
        validation_losses.append(validation_loss)

    if reported is None:
        raise RuntimeError("the validation loss was never finite")
    test_accuracy, test_macro_f1 = accuracy_and_macro_f1(
        reported["test_predicted"], labels[graph.test], graph.num_classes)
    later = epoch_seconds[1:]
    return {
        "status": "ok",
        "epochs_run": len(epoch_seconds),
        "stopped_early": len(epoch_seconds) < settings.epochs,
        "stopping": settings.stopping,
        "best_epoch": best["epoch"],
        "best_validation_loss": best["validation_loss"],
        "best_train_loss": best["train_loss"],
        "best_validation_accuracy": best["validation_accuracy"],
        "reported_epoch": reported["epoch"],
        "reported_validation_loss": reported["validation_loss"],
        "reported_validation_accuracy": reported["validation_accuracy"],
        "test_accuracy": test_accuracy,
        "test_macro_f1": test_macro_f1,
        "first_epoch_seconds": epoch_seconds[0],
        "mean_epoch_seconds": sum(later) / len(later) if later else None,
        "epoch_seconds_total": sum(epoch_seconds),
        "graph_bytes": graph.graph_bytes(),
        "parameters": sum(p.numel() for p in model.parameters()),
    }


def is_allocation_failure(error):
    text = str(error)
    return isinstance(error, MemoryError) or (
        isinstance(error, RuntimeError)
        and ("can't allocate memory" in text or "not enough memory" in text
             or "std::bad_alloc" in text))


def child_result(settings, config, seed, counting_allocator):
    """Sets the child up (memory cap, threads, counting allocator), trains, and adds the peaks;
    a failure is a result too."""
    measured = {
        "load_average_start": os.getloadavg()[0],
        "rss_start_bytes": rss_bytes("VmRSS"),
        "address_space_cap_bytes": rss_bytes("VmSize") + int(settings.memory_cap * GIB),
    }
    counting = None
    try:
        cap = measured["address_space_cap_bytes"]
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
        torch.set_num_threads(settings.threads)
        counting = install_counting_allocator(counting_allocator)
        result = train(settings, config, seed, counting)
    except BaseException as error:  # noqa: BLE001 - every failure is a result of the run
        result = {"status": "error", "error": f"{type(error).__name__}: "
                  f"{(str(error).splitlines() or [''])[0][:300]}"}
        if is_allocation_failure(error):
            result["status"] = "out of memory at cap"
            attempted = re.search(r"tried to allocate (\d+) bytes", str(error))
            result["failed_allocation_bytes"] = int(attempted.group(1)) if attempted else None
        else:
            traceback.print_exc()
    result.update(measured)
    result["peak_rss_bytes"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    result["peak_tensor_bytes"] = counting.hr_peak() if counting is not None else None
    result["load_average_end"] = os.getloadavg()[0]
    return result


def run_in_child(settings, config, seed, counting_allocator):
    """Forks, trains in the child, returns the child's result (a dict) through a pipe."""
    sys.stdout.flush()
    sys.stderr.flush()
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_end)
        data = json.dumps(child_result(settings, config, seed, counting_allocator)).encode()
        while data:
            data = data[os.write(write_end, data):]
        os.close(write_end)
        os._exit(0)
    os.close(write_end)
    chunks = []
    while block := os.read(read_end, 65536):
        chunks.append(block)
    os.close(read_end)
    _, status = os.waitpid(pid, 0)
    if not chunks:
        if os.WIFSIGNALED(status):
            reason = f"child killed by signal {os.WTERMSIG(status)}"
        else:
            reason = f"child exited with status {os.waitstatus_to_exitcode(status)}"
        return {"status": "error", "error": reason}
    return json.loads(b"".join(chunks))


# --- reporting --------------------------------------------------------------------------------


def predicted_sizes(config, num_nodes, num_edges, num_classes):
    """The big tensors a configuration makes, in bytes, from N, E and the widths alone."""
    sizes = {"W1 [N, 200]": num_nodes * HIDDEN * 4}
    if config == "sparse-edgeindex":
        sizes["EdgeIndex [2, E] int64, weights, and its cached transpose (3 x E int64)"] = (
            num_edges * 44 + (num_nodes + 1) * 16)
        sizes["layer outputs [N, 200]"] = num_nodes * HIDDEN * 4
    elif config == "sparse-embedding":
        sizes["CSR adjacency (int64 columns and offsets, float32 values)"] = (
            num_edges * 12 + (num_nodes + 1) * 8)
        sizes["layer outputs [N, 200]"] = num_nodes * HIDDEN * 4
    else:
        sizes["edge_index [2, E] int64 + edge_weight"] = num_edges * 20
        sizes["messages of layer 1 [E, 200] (two live at its peak)"] = num_edges * HIDDEN * 4
        sizes["messages of layer 2 [E, classes]"] = num_edges * num_classes * 4
        if config == "edge-index-dense":
            sizes["dense identity [N, N] (and as much for dropout's copy)"] = (
                num_nodes * num_nodes * 4)
    return sizes


def counting_allocator_path(mode):
    if mode == "off":
        return None
    try:
        from pyg_reference_bench import build_counting_allocator  # same folder

        return build_counting_allocator()
    except Exception as error:  # noqa: BLE001 - no compiler: the peak is simply not measured
        print(f"pyg_textgcn_bench: no counting allocator ({str(error)[:200]}); peak tensor "
              "bytes are not measured", file=sys.stderr)
        return None


def mib(value):
    return f"{value / MIB:.0f}" if value is not None else "-"


def format_row(store, config, seed, r):
    head = f"{store:<6} {config:<17} {seed:>4}"
    if r["status"] == "out of memory at cap":
        failed = r.get("failed_allocation_bytes")
        what = f"an allocation of {mib(failed)} MiB failed" if failed else r["error"]
        return (f"{head}  out of memory at cap (+{r['memory_cap_gib']:g} GiB): {what}; peak "
                f"RSS {mib(r['peak_rss_bytes'])} MiB, tensors {mib(r['peak_tensor_bytes'])} MiB")
    if r["status"] != "ok":
        return f"{head}  {r['status']}: {r.get('error', '')}"
    mean = r["mean_epoch_seconds"]
    return (f"{head} {r['epochs_run']:>6} {r['reported_epoch']:>5} "
            f"{r['first_epoch_seconds']:>8.2f} "
            f"{(mean if mean is not None else float('nan')):>8.3f} "
            f"{mib(r['peak_rss_bytes']):>9} {mib(r['peak_tensor_bytes']):>9} "
            f"{r['test_accuracy']:>8.4f} {r['test_macro_f1']:>8.4f}")


def summary(config, runs):
    ok = [r for r in runs if r["status"] == "ok"]
    if not ok:
        return f"{config:<17} no successful run ({runs[0]['status']})"

    def mean_sd(key):
        values = [r[key] for r in ok if r[key] is not None]
        if not values:
            return float("nan"), 0.0
        m = sum(values) / len(values)
        if len(values) == 1:
            return m, 0.0
        return m, math.sqrt(sum((v - m) ** 2 for v in values) / (len(values) - 1))  # sample sd

    acc, f1 = mean_sd("test_accuracy"), mean_sd("test_macro_f1")
    epoch = mean_sd("mean_epoch_seconds")
    rss = max(r["peak_rss_bytes"] for r in ok)
    return (f"{config:<17} {len(ok)} seed(s): test accuracy {acc[0]:.4f} ± {acc[1]:.4f}, macro-F1 "
            f"{f1[0]:.4f} ± {f1[1]:.4f}, epoch {epoch[0]:.3f} ± {epoch[1]:.3f} s, peak RSS up to "
            f"{mib(rss)} MiB")


def main():
    parser = argparse.ArgumentParser(
        description="TextGCN in PyTorch Geometric on a headroom node-graph store (see the "
        f"script's header). Needs torch_geometric=={PYG_PIN}.")
    parser.add_argument("--store", required=True, help="node-graph store, e.g. stores/r8")
    parser.add_argument("--configs", default="sparse-embedding,sparse-edgeindex,edge-index",
                        help=f"comma list of {', '.join(CONFIGS)}")
    parser.add_argument("--seeds", default="1", help="comma list of seeds, one run each")
    parser.add_argument("--epochs", type=int, default=200, help="at most this many epochs")
    parser.add_argument("--patience", type=int, default=10,
                        help="stop after this many epochs without a new lowest validation loss")
    parser.add_argument("--stopping", choices=("best", "textgcn"), default="best",
                        help="early stopping and which epoch's test metrics are reported (see "
                        "the script's header)")
    parser.add_argument("--threads", type=int, default=2, help="torch.set_num_threads")
    parser.add_argument("--memory-cap", type=float, default=12.0,
                        help="GiB of address space a run may add to what it starts with")
    parser.add_argument("--tensor-peak", choices=("counting", "off"), default="counting")
    parser.add_argument("--json-out", default=None,
                        help="also append each run's JSON line to this file as soon as it ends")
    settings = parser.parse_args()
    configs = [c for c in settings.configs.split(",") if c]
    for config in configs:
        if config not in CONFIGS:
            parser.error(f"unknown configuration '{config}' (expected one of {', '.join(CONFIGS)})")
    seeds = [int(s) for s in settings.seeds.split(",") if s]
    if settings.epochs < 1 or settings.patience < 1 or settings.threads < 1 or not seeds:
        parser.error("--epochs, --patience and --threads must be at least 1, --seeds not empty")

    manifest = read_manifest(settings.store)
    n, e = manifest["num_nodes"], manifest["num_edges"]
    classes = len(manifest["classes"])
    store_name = pathlib.Path(settings.store).name
    allocator = counting_allocator_path(settings.tensor_peak)
    machine = {"cpu_model": cpu_model(), "nproc": os.cpu_count(), "platform": platform.platform()}
    versions = {"torch_version": torch.__version__, "pyg_version": torch_geometric.__version__,
                "numpy_version": np.__version__, "python_version": platform.python_version()}
    print(f"store {settings.store}: N {n:,} nodes, E {e:,} stored entries, {classes} classes; "
          f"{settings.threads} threads, memory cap +{settings.memory_cap:g} GiB; PyG "
          f"{torch_geometric.__version__}, torch {torch.__version__}; {machine['cpu_model']}, "
          f"{machine['nproc']} CPUs")
    header = (f"{'store':<6} {'config':<17} {'seed':>4} {'epochs':>6} {'rep.':>5} {'first s':>8} "
              f"{'epoch s':>8} {'RSS MiB':>9} {'tens MiB':>9} {'test acc':>8} {'macro-F1':>8}")
    results = {}
    for config in configs:
        print(f"{config}: predicted sizes: " + "; ".join(
            f"{name} {size / MIB:,.0f} MiB"
            for name, size in predicted_sizes(config, n, e, classes).items()))
        print(header)
        for seed in seeds:
            result = run_in_child(settings, config, seed, allocator)
            result.update({
                "framework": "pyg", "config": config, "seed": seed, "store": settings.store,
                "num_nodes": n, "num_edges": e, "num_classes": classes,
                "threads": settings.threads, "max_epochs": settings.epochs,
                "patience": settings.patience, "memory_cap_gib": settings.memory_cap,
                **versions, **machine,
            })
            results.setdefault(config, []).append(result)
            if settings.json_out:
                with open(settings.json_out, "a") as out:
                    out.write(json.dumps(result, sort_keys=True, separators=(",", ":")) + "\n")
            print(format_row(store_name, config, seed, result), flush=True)
    print("summary:")
    for config, runs in results.items():
        print("  " + summary(config, runs))
    for runs in results.values():
        for result in runs:
            print(json.dumps(result, sort_keys=True, separators=(",", ":")))


if __name__ == "__main__":
    warnings.filterwarnings("ignore", message=".*[Ss]parse.*")
    main()
