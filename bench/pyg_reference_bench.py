#!/usr/bin/env python3
"""The upstream KD-GAT models in PyTorch Geometric, trained on the graphs of a headroom graph store
and measured like bench/training_bench.cpp, so that headroom and PyG are compared in one run on
one machine.

Written for torch 2.11 and torch_geometric 2.8.1 (`pip install torch_geometric==2.8.1`; pure
Python, no torch_scatter / torch_sparse needed). Usage:

    python bench/pyg_reference_bench.py [--store DIR] [--batch-sizes 256,1024,4096]
        [--models 'gat,teacher;gat,student;vgae,teacher;vgae,student'] [--batches 12]
        [--threads 2] [--device cpu] [--checkpointing false] [--edge-attr false]
        [--cpu-peak counting|profiler|both] [--isolation auto|fork|spawn]

It prints the columns of training_bench (model, size, batch, steps, graphs/s, peak tensor MiB,
peak RSS MiB, wait s/epoch), then one JSON line per case with training_bench's keys plus
`framework`, `collate_seconds`, `parameters`, `peak_tensor_method` and the versions.

What a case does, as training_bench does it: the store's training ids (the GAT: all of them; the
VGAE: the label-0 graphs only), shuffled with headroom's SplitMix64 shuffle (seed 1, epoch 0, the
same order as loader::shuffled), chunked into batches of --batch-sizes, at most --batches + 1 of
them. The first batch is a warm-up step (not timed; the memory peak is reset after it). Each case
runs in a child process, so that its memory peak is its own: forked like training_bench's on CPU,
spawned on CUDA (--isolation; a fork after CUDA initialisation is unsafe). A step:
zero_grad(set_to_none), forward, loss (cross-entropy per graph for the GAT; for the VGAE
headroom's objective, MSE of features 1..10 + 0.1 CE of the node IDs + 0.05 BCE of the
neighbourhood ID sets + 0.01 KL, as src/train/step/losses.cpp computes it), backward,
clip_grad_norm_(1.0), Adam(lr 1e-3, weight_decay 1e-4); fp32. Self-check: `parameters` holds the
PyG model's parameter count and headroom's, computed from headroom's layer formulas
(tests/models/models_test.cpp); a mismatch is printed as a warning.

Timing: wall clock from the end of the warm-up step to the end of the last step (CUDA synchronised
at both ends). The graphs are torch_geometric.data.Data objects (x, edge_index, y; edge_attr only
with --edge-attr) held in memory, collated by PyG's DataLoader (num_workers=0, so collation runs
inline in the loop, as upstream trains). Collation of every timed batch is inside the timed wall
clock and is also reported alone as `collate_seconds`; since the loop waits for it, it is also the
`batch_wait_seconds` (training_bench: the wait for its background prefetcher, batches 2..N).

Peak memory:
  * CUDA: torch.cuda.max_memory_allocated after reset_peak_memory_stats (what training_bench
    reads from the caching allocator).
  * CPU, --cpu-peak counting (default): the same counting CPU allocator as training_bench's
    (src/memory/counting_cpu_allocator.cpp: every c10 CPU allocation counted with its requested
    size; peak of the live total). A small C++ shared library (source below) is compiled once with
    g++ against the installed torch, cached under ~/.cache/headroom/pyg_bench, loaded with ctypes
    and installed in the child before the model is built. The graphs (Data objects) are made before
    it is installed and are therefore not counted, as headroom's memory-mapped store is not.
  * CPU, --cpu-peak profiler (the fallback when no compiler is available): one extra, untimed step
    on the timed batch with the most edges under torch.profiler (profile_memory=True): the live
    bytes at the step's start (parameters, Adam state, the batch; gradients set to none) plus the
    peak of the running sum of the profiler's CPU allocation events. `both` reports the counting
    peak and this one as `peak_tensor_bytes_profiler`.
  * Peak RSS: the child's VmHWM (/proc/self/status), as training_bench reports it; it includes the
    Python interpreter, torch and the graphs held in memory. `rss_before_timed_bytes` is the RSS
    when the timed steps start.

Differences from training_bench: no prefetch thread (upstream's loop); gradient checkpointing off
by default (upstream's behaviour; training_bench's default is on); with --checkpointing true the
recomputed BatchNorm of the VGAE updates its running statistics a second time (harmless for
timing); precision is fp32 only; on CUDA batches are pinned and copied non_blocking like
headroom's, and global_mean_pool gets the number of graphs (no host read of batch.max()).

Run it on an otherwise idle machine: with more runnable threads than cores, two OpenMP threads
per step can run many times slower than one (the same holds for training_bench).
"""

import argparse
import ctypes
import gc
import hashlib
import json
import multiprocessing
import os
import pathlib
import subprocess
import sys
import time
import traceback
import warnings

# torch.cuda.is_available() through NVML: it does not initialise the CUDA driver in this process,
# whose children may be forked (see run_isolated).
os.environ.setdefault("PYTORCH_NVML_BASED_CUDA_CHECK", "1")

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.checkpoint import checkpoint

try:
    import torch_geometric
    from torch_geometric.data import Batch, Data
    from torch_geometric.loader import DataLoader
    from torch_geometric.nn import GATConv, global_mean_pool
except ImportError:  # pragma: no cover
    sys.exit("pyg_reference_bench: torch_geometric is missing: pip install torch_geometric==2.8.1")

PYG_PIN = "2.8.1"
MASK64 = (1 << 64) - 1
GOLDEN_GAMMA = 0x9E3779B97F4A7C15

# --- the graph store (docs/store-format.md) ---------------------------------------------------


class Store:
    """A headroom graph store, every array memory-mapped read-only."""

    def __init__(self, path):
        path = pathlib.Path(path)
        manifest_path = path / "manifest.json"
        if not manifest_path.exists():
            raise SystemExit(f"pyg_reference_bench: {path} is not a graph store (no manifest.json)")
        self.manifest = json.loads(manifest_path.read_text())
        if self.manifest.get("format") != "headroom-graph-store":
            raise SystemExit(f"pyg_reference_bench: {path}: not a headroom graph store")
        self.arrays = {}
        for name, a in self.manifest["arrays"].items():
            shape = tuple(a["shape"])
            self.arrays[name] = (
                np.memmap(path / a["file"], dtype=a["dtype"], mode="r", shape=shape)
                if a["bytes"] > 0
                else np.zeros(shape, dtype=a["dtype"])
            )
        # The embedded identity's classes (graph/node_features.hpp, identity_classes): under
        # can-id the vocabulary index, len(vocabulary) being the out-of-vocabulary ID; under the
        # ID-agnostic identities a fixed number of ranks or hash buckets.
        identity = self.manifest.get("node_identity", "can-id")
        self.num_ids = {"frequency-rank": 32, "hashed-id": 256}.get(
            identity, len(self.manifest["vocabulary"]) + 1
        )
        # Node features per node, feature 0 being the identity (as float).
        self.in_features = int(self.manifest.get("node_feature_count", 11))
        self.path = path

    def graph(self, g, edge_attr=False):
        a = self.arrays
        n0, n1 = (int(v) for v in a["node_offsets"][g : g + 2])
        e0, e1 = (int(v) for v in a["edge_offsets"][g : g + 2])
        data = Data(
            x=torch.from_numpy(np.array(a["node_features"][n0:n1], dtype=np.float32)),
            edge_index=torch.from_numpy(
                np.ascontiguousarray(a["edge_index"][e0:e1].T, dtype=np.int64)
            ),
            y=torch.tensor([int(a["graph_label"][g])], dtype=torch.long),
        )
        if edge_attr:
            data.edge_attr = torch.from_numpy(np.array(a["edge_features"][e0:e1], dtype=np.float32))
        return data


# --- headroom's epoch order (util/split_mix.hpp, loader/epoch_order.cpp) -----------------------


class SplitMix64:
    def __init__(self, state):
        self.state = state & MASK64

    @staticmethod
    def for_epoch(seed, epoch):
        return SplitMix64(SplitMix64(seed ^ ((epoch * GOLDEN_GAMMA) & MASK64)).next())

    def next(self):
        self.state = (self.state + GOLDEN_GAMMA) & MASK64
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        return z ^ (z >> 31)

    def below(self, bound):
        threshold = ((1 << 64) - bound) % bound
        while True:
            r = self.next()
            if r >= threshold:
                return r % bound


def shuffled(ids, seed, epoch):
    out = [int(i) for i in ids]
    rng = SplitMix64.for_epoch(seed, epoch)
    for i in range(len(out), 1, -1):
        j = rng.below(i)
        out[i - 1], out[j] = out[j], out[i - 1]
    return out


def chunk(ids, batch_size):
    return [ids[i : i + batch_size] for i in range(0, len(ids), batch_size)]


# --- the models (docs/detection.md, models/model_config.cpp, models/vgae_layout.cpp) ----------

GAT_PRESETS = {
    "teacher": dict(embedding_dim=16, hidden=48, layers=3, heads=8, fc_layers=2, dropout=0.2),
    "student": dict(embedding_dim=8, hidden=24, layers=2, heads=4, fc_layers=3, dropout=0.1),
}
VGAE_PRESETS = {
    "teacher": dict(embedding_dim=32, hidden=(480, 240), latent=48, heads=4, dropout=0.15),
    "student": dict(embedding_dim=4, hidden=(80, 40), latent=16, heads=1, dropout=0.1),
}
DECODER_HEADS = 4
LOGVAR_CLAMP = 20.0


def embed_ids(embedding, x):
    return torch.cat([embedding(x[:, 0].long()), x[:, 1:]], dim=1)


def run_block(block, checkpointed, *args):
    if checkpointed:
        return checkpoint(block, *args, use_reentrant=False)
    return block(*args)


class GATWithJK(nn.Module):
    """ID embedding + features, GATConv blocks (ReLU, dropout), jumping knowledge by
    concatenation, global mean pool, fully connected head."""

    def __init__(self, num_ids, in_features, embedding_dim, hidden, layers, heads, fc_layers,
                 dropout, checkpointing, num_classes=2):
        super().__init__()
        self.dropout = dropout
        self.checkpointing = checkpointing
        self.id_embedding = nn.Embedding(num_ids, embedding_dim)
        width = embedding_dim + in_features - 1
        self.convs = nn.ModuleList()
        for _ in range(layers):
            self.convs.append(GATConv(width, hidden, heads=heads, concat=True))
            width = hidden * heads
        jk = layers * hidden * heads
        head = []
        for _ in range(fc_layers - 1):
            head += [nn.Linear(jk, jk), nn.ReLU(), nn.Dropout(dropout)]
        head.append(nn.Linear(jk, num_classes))
        self.head = nn.Sequential(*head)

    def _block(self, conv, h, edge_index):
        return F.dropout(F.relu(conv(h, edge_index)), self.dropout, self.training)

    def forward(self, x, edge_index, batch, num_graphs):
        checkpointed = self.checkpointing and self.training and torch.is_grad_enabled()
        h = embed_ids(self.id_embedding, x)
        outputs = []
        for conv in self.convs:
            h = run_block(self._block, checkpointed, conv, h, edge_index)
            outputs.append(h)
        pooled = global_mean_pool(torch.cat(outputs, dim=1), batch, size=num_graphs)
        return self.head(pooled)


class VGAE(nn.Module):
    """Upstream's GraphAutoencoderNeighborhood (headroom's kd-gat layout): GATConv encoder blocks
    (GATConv, BatchNorm, ReLU, dropout; the first with `heads` heads, the others one), mu and
    log sigma^2, one decoder block of hidden[-1] channels in 4 heads, a single-head GATConv to the
    10 features (sigmoid), an ID classifier and the neighbourhood MLP latent -> latent -> latent ->
    IDs."""

    def __init__(self, num_ids, in_features, embedding_dim, hidden, latent, heads, dropout,
                 checkpointing):
        super().__init__()
        self.dropout = dropout
        self.checkpointing = checkpointing
        self.id_embedding = nn.Embedding(num_ids, embedding_dim)
        width = embedding_dim + in_features - 1
        self.encoder = nn.ModuleList()
        self.encoder_norms = nn.ModuleList()
        for i, out in enumerate(hidden):
            h = heads if i == 0 else 1
            self.encoder.append(GATConv(width, out // h, heads=h, concat=True))
            self.encoder_norms.append(nn.BatchNorm1d(out))
            width = out
        self.mu = nn.Linear(width, latent)
        self.logvar = nn.Linear(width, latent)
        self.decoder = GATConv(latent, hidden[-1] // DECODER_HEADS, heads=DECODER_HEADS,
                               concat=True)
        self.decoder_norm = nn.BatchNorm1d(hidden[-1])
        self.reconstruction = GATConv(hidden[-1], in_features - 1, heads=1, concat=True)
        self.id_classifier = nn.Linear(latent, num_ids)
        self.neighbour_decoder = nn.Sequential(
            nn.Linear(latent, latent), nn.ReLU(), nn.Dropout(dropout),
            nn.Linear(latent, latent), nn.ReLU(), nn.Dropout(dropout),
            nn.Linear(latent, num_ids),
        )

    def _block(self, conv, norm, h, edge_index):
        return F.dropout(F.relu(norm(conv(h, edge_index))), self.dropout, self.training)

    def forward(self, x, edge_index):
        checkpointed = self.checkpointing and self.training and torch.is_grad_enabled()
        h = embed_ids(self.id_embedding, x)
        for conv, norm in zip(self.encoder, self.encoder_norms):
            h = run_block(self._block, checkpointed, conv, norm, h, edge_index)
        mu = self.mu(h)
        logvar = self.logvar(h).clamp(-LOGVAR_CLAMP, LOGVAR_CLAMP)
        z = mu + torch.randn_like(mu) * torch.exp(0.5 * logvar) if self.training else mu
        d = run_block(self._block, checkpointed, self.decoder, self.decoder_norm, z, edge_index)
        return dict(
            mu=mu,
            logvar=logvar,
            reconstruction=torch.sigmoid(self.reconstruction(d, edge_index)),
            id_logits=self.id_classifier(z),
            neighbour_logits=self.neighbour_decoder(z),
        )


def neighbourhood_targets(x, edge_index, num_ids):
    """Per node, the multi-hot set of its out-neighbours' ID classes (train/step/losses.cpp)."""
    classes = x[:, 0].long()
    targets = torch.zeros(x.size(0), num_ids, device=x.device)
    cells = edge_index[0] * num_ids + classes.index_select(0, edge_index[1])
    targets.view(-1).index_fill_(0, cells, 1.0)
    return targets


def vgae_loss(out, x, edge_index, num_ids):
    reconstruction = F.mse_loss(out["reconstruction"], x[:, 1:])
    ids = F.cross_entropy(out["id_logits"], x[:, 0].long())
    neighbour = F.binary_cross_entropy_with_logits(
        out["neighbour_logits"], neighbourhood_targets(x, edge_index, num_ids)
    )
    mu, logvar = out["mu"], out["logvar"]
    kl = -0.5 * (1.0 + logvar - mu.pow(2) - logvar.exp()).mean()
    return reconstruction + 0.1 * ids + 0.05 * neighbour + 0.01 * kl


# headroom's parameter counts, from its layer formulas (tests/models/models_test.cpp), computed
# independently of the PyG modules above: the self-check compares the two.
def headroom_gat_parameters(
    num_ids, in_features, embedding_dim, hidden, layers, heads, fc_layers, **_
):
    total = num_ids * embedding_dim
    width = embedding_dim + in_features - 1
    for _ in range(layers):
        total += width * heads * hidden + 3 * heads * hidden  # projection, att_src, att_dst, bias
        width = heads * hidden
    jk = layers * hidden * heads
    return total + (fc_layers - 1) * (jk * jk + jk) + (jk * 2 + 2)


def headroom_vgae_parameters(num_ids, in_features, embedding_dim, hidden, latent, **_):
    def conv(n_in, n_out):  # over all heads: projection, att_src, att_dst, bias
        return n_in * n_out + 3 * n_out

    total = num_ids * embedding_dim
    width = embedding_dim + in_features - 1
    for out in hidden:
        total += conv(width, out) + 2 * out  # + BatchNorm
        width = out
    total += 2 * (width * latent + latent)  # mu, log sigma^2
    total += conv(latent, hidden[-1]) + 2 * hidden[-1] + conv(hidden[-1], in_features - 1)
    total += latent * num_ids + num_ids  # ID classifier
    total += 2 * (latent * latent + latent) + latent * num_ids + num_ids  # neighbourhood MLP
    return total


# --- CPU tensor memory: training_bench's counting allocator ------------------------------------

COUNTING_ALLOCATOR_SOURCE = r"""
// Counts every c10 CPU allocation with its requested size, like headroom's
// src/memory/counting_cpu_allocator.cpp: the size sits in a header of c10's alignment in front of
// the data, so data == context and the free path finds it.
#include <c10/core/Allocator.h>
#include <c10/core/CPUAllocator.h>
#include <c10/core/alignment.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>

namespace {
constexpr std::size_t kHeader = c10::gAlignment;
std::atomic<std::int64_t> g_current{0};
std::atomic<std::int64_t> g_peak{0};
std::atomic<c10::DeleterFnPtr> g_inner_deleter{nullptr};

void raise_peak(std::int64_t value) {
  auto peak = g_peak.load(std::memory_order_relaxed);
  while (peak < value && !g_peak.compare_exchange_weak(peak, value, std::memory_order_relaxed)) {
  }
}

void release(void* data) {
  if (data == nullptr) return;
  auto* base = static_cast<std::byte*>(data) - kHeader;
  std::size_t bytes = 0;
  std::memcpy(&bytes, base, sizeof bytes);
  g_current.fetch_sub(static_cast<std::int64_t>(bytes), std::memory_order_relaxed);
  g_inner_deleter.load(std::memory_order_acquire)(base);
}

class Counting final : public c10::Allocator {
 public:
  explicit Counting(c10::Allocator* inner) : inner_(inner) {}
  c10::DataPtr allocate(std::size_t n) override {
    const c10::Device cpu(c10::DeviceType::CPU);
    if (n == 0) return {nullptr, nullptr, &release, cpu};
    void* base = inner_->raw_allocate(n + kHeader);
    const auto bytes = static_cast<std::int64_t>(n);
    raise_peak(g_current.fetch_add(bytes, std::memory_order_relaxed) + bytes);
    std::memcpy(base, &n, sizeof n);
    void* data = static_cast<std::byte*>(base) + kHeader;
    return {data, data, &release, cpu};
  }
  c10::DeleterFnPtr raw_deleter() const override { return &release; }
  void copy_data(void* dest, const void* src, std::size_t count) const override {
    default_copy_data(dest, src, count);
  }

 private:
  c10::Allocator* inner_;
};

Counting* g_allocator = nullptr;
}  // namespace

extern "C" {
int hr_install() {
  if (g_allocator != nullptr) return 0;
  c10::Allocator* inner = c10::GetCPUAllocator();
  if (inner->raw_deleter() == nullptr) return 2;
  g_inner_deleter.store(inner->raw_deleter(), std::memory_order_release);
  g_allocator = new Counting(inner);  // never destroyed: storages keep a pointer to it
  c10::SetCPUAllocator(g_allocator, std::numeric_limits<std::uint8_t>::max());
  return c10::GetCPUAllocator() == g_allocator ? 0 : 1;
}
std::int64_t hr_current() { return g_current.load(); }
std::int64_t hr_peak() { return g_peak.load(); }
void hr_reset_peak() { g_peak.store(g_current.load()); }
}
"""


def build_counting_allocator():
    """Path of the compiled counting allocator (built once per torch version), or raises."""
    from torch.utils import cpp_extension

    key = hashlib.sha256(
        (COUNTING_ALLOCATOR_SOURCE + torch.__version__ + str(torch._C._GLIBCXX_USE_CXX11_ABI))
        .encode()
    ).hexdigest()[:16]
    cache = pathlib.Path(os.environ.get("XDG_CACHE_HOME", pathlib.Path.home() / ".cache"))
    directory = cache / "headroom" / "pyg_bench"
    library = directory / f"counting_allocator-{key}.so"
    if library.exists():
        return library
    directory.mkdir(parents=True, exist_ok=True)
    source = directory / f"counting_allocator-{key}.cpp"
    source.write_text(COUNTING_ALLOCATOR_SOURCE)
    lib_dir = cpp_extension.library_paths()[0]
    temporary = library.with_suffix(f".tmp-{os.getpid()}")
    command = [os.environ.get("CXX", "g++"), "-O2", "-std=c++20", "-shared", "-fPIC",
               f"-D_GLIBCXX_USE_CXX11_ABI={int(torch._C._GLIBCXX_USE_CXX11_ABI)}"]
    command += [f"-I{p}" for p in cpp_extension.include_paths()]
    command += [str(source), f"-L{lib_dir}", "-lc10", f"-Wl,-rpath,{lib_dir}", "-o", str(temporary)]
    subprocess.run(command, check=True, capture_output=True, text=True)
    os.replace(temporary, library)
    return library


# --- one case --------------------------------------------------------------------------------


def rss_bytes(field):
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    return 0


def live_bytes(tensors):
    """Bytes of the distinct storages behind `tensors` (CPU)."""
    seen, total = set(), 0
    for t in tensors:
        if isinstance(t, torch.Tensor) and t.numel() > 0:
            storage = t.untyped_storage()
            if storage.data_ptr() not in seen:
                seen.add(storage.data_ptr())
                total += storage.nbytes()
    return total


def profiled_step_peak(step, batch, module, optimizer):
    """Peak CPU tensor bytes of one step by torch.profiler's allocation events."""
    from torch.profiler import ProfilerActivity, profile

    optimizer.zero_grad(set_to_none=True)
    gc.collect()
    state = [t for s in optimizer.state.values() for t in s.values()]
    batch_tensors = [batch[k] for k in batch.keys() if isinstance(batch[k], torch.Tensor)]
    baseline = live_bytes(
        list(module.parameters()) + list(module.buffers()) + state + batch_tensors)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
            step(batch)
    events = sorted(
        (e.start_ns(), e.nbytes())
        for e in prof.profiler.kineto_results.events()
        if e.name() == "[memory]" and str(e.device_type()).endswith("CPU")
    )
    running = peak = 0
    for _, nbytes in events:
        running += nbytes
        peak = max(peak, running)
    return baseline + peak


def run_case(settings, kind, size, batch_size, allocator_path):
    torch.manual_seed(1)
    torch.set_num_threads(settings.threads)
    device = torch.device(settings.device)
    store = Store(settings.store)
    num_ids = store.num_ids
    labels = store.arrays["graph_label"]
    ids = [int(g) for g in store.arrays["split_train"] if kind == "gat" or labels[g] == 0]
    batches = chunk(shuffled(ids, 1, 0), batch_size)[: settings.batches + 1]
    graphs_in_order = [g for b in batches for g in b]
    data = [store.graph(g, settings.edge_attr) for g in graphs_in_order]

    counting = None
    if device.type == "cpu" and allocator_path is not None:
        counting = ctypes.CDLL(str(allocator_path))
        counting.hr_current.restype = ctypes.c_int64
        counting.hr_peak.restype = ctypes.c_int64
        if counting.hr_install() != 0:
            raise RuntimeError("could not install the counting CPU allocator")

    if kind == "gat":
        preset = GAT_PRESETS[size]
        module = GATWithJK(
            num_ids, store.in_features, checkpointing=settings.checkpointing, **preset
        )
        expected = headroom_gat_parameters(num_ids, store.in_features, **preset)

        def loss_of(b):
            logits = module(b.x, b.edge_index, b.batch, b.num_graphs)
            return F.cross_entropy(logits, b.y)
    else:
        preset = VGAE_PRESETS[size]
        module = VGAE(num_ids, store.in_features, checkpointing=settings.checkpointing, **preset)
        expected = headroom_vgae_parameters(num_ids, store.in_features, **preset)

        def loss_of(b):
            return vgae_loss(module(b.x, b.edge_index), b.x, b.edge_index, num_ids)

    module.to(device)
    module.train()
    parameters = list(module.parameters())
    optimizer = torch.optim.Adam(parameters, lr=1e-3, weight_decay=1e-4)

    def step(b):
        optimizer.zero_grad(set_to_none=True)
        loss = loss_of(b)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(parameters, max_norm=1.0)
        optimizer.step()

    cuda = device.type == "cuda"
    loader = DataLoader(data, batch_size=batch_size, shuffle=False, num_workers=0, pin_memory=cuda)
    it = iter(loader)
    warmup = next(it)
    step(warmup.to(device, non_blocking=True))
    del warmup
    gc.collect()
    if cuda:
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
    elif counting is not None:
        counting.hr_reset_peak()
    rss_before = rss_bytes("VmRSS")

    graphs = nodes = edges = steps = 0
    collate = 0.0
    largest = (-1, -1, 0)  # (edges, nodes, batch index) of the largest timed batch
    start = time.perf_counter()
    while True:
        t = time.perf_counter()
        try:
            host = next(it)
        except StopIteration:
            break
        collate += time.perf_counter() - t
        step(host.to(device, non_blocking=True))
        steps += 1
        graphs += host.num_graphs
        nodes += host.num_nodes
        edges += host.num_edges
        largest = max(largest, (host.num_edges, host.num_nodes, steps))
        del host
    if cuda:
        torch.cuda.synchronize()
    seconds = time.perf_counter() - start

    result = {}
    if cuda:
        peak, method = torch.cuda.max_memory_allocated(), "torch.cuda.max_memory_allocated"
    elif counting is not None:
        peak, method = counting.hr_peak(), "counting CPU allocator"
    else:
        peak, method = None, "torch.profiler (largest timed batch, extra step)"
    if not cuda and steps > 0 and (counting is None or settings.cpu_peak == "both"):
        batch = Batch.from_data_list(data[largest[2] * batch_size : (largest[2] + 1) * batch_size])
        profiled = profiled_step_peak(step, batch, module, optimizer)
        if peak is None:
            peak = profiled
        else:
            result["peak_tensor_bytes_profiler"] = profiled

    epoch_graphs = len(ids)
    pyg_parameters = sum(p.numel() for p in parameters)
    result.update({
        "model": kind,
        "size": size,
        "batch_size": batch_size,
        "steps_timed": steps,
        "graphs": graphs,
        "nodes": nodes,
        "edges": edges,
        "seconds": seconds,
        "graphs_per_second": graphs / seconds if seconds > 0 else 0.0,
        "peak_tensor_bytes": peak,
        "peak_rss_bytes": rss_bytes("VmHWM"),
        "rss_before_timed_bytes": rss_before,
        "batch_wait_seconds": collate,
        "batch_wait_seconds_per_epoch": collate * epoch_graphs / graphs if graphs > 0 else 0.0,
        "collate_seconds": collate,
        "epoch_graphs": epoch_graphs,
        "peak_tensor_method": method,
        "parameters": {"pyg": pyg_parameters, "headroom": expected},
        "parameters_match": pyg_parameters == expected,
    })
    return result


def case_json(*args):
    try:
        return json.dumps(run_case(*args))
    except BaseException as e:  # noqa: BLE001 - report anything, as training_bench does
        traceback.print_exc()
        return json.dumps({"error": f"{type(e).__name__}: {e}"})


def spawned_case(connection, args):
    connection.send(case_json(*args))
    connection.close()


def run_isolated(settings, kind, size, batch_size, allocator_path):
    """Runs the case in a child process; its JSON comes back through a pipe. Forked like
    training_bench's children, or spawned (--isolation spawn, the default on CUDA: a fork after
    the CUDA driver has been initialised is not safe)."""
    sys.stdout.flush()
    sys.stderr.flush()
    args = (settings, kind, size, batch_size, allocator_path)
    if settings.isolation == "spawn":
        context = multiprocessing.get_context("spawn")
        receiver, sender = context.Pipe(duplex=False)
        child = context.Process(target=spawned_case, args=(sender, args))
        child.start()
        sender.close()
        try:
            text = receiver.recv()
        except EOFError:
            text = None
        child.join()
        if text is None:
            return {"error": f"child exited with status {child.exitcode}"}
        return json.loads(text)
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_end)
        data = case_json(*args).encode()
        while data:
            data = data[os.write(write_end, data):]
        os.close(write_end)
        os._exit(0)
    os.close(write_end)
    chunks = []
    while True:
        block = os.read(read_end, 65536)
        if not block:
            break
        chunks.append(block)
    os.close(read_end)
    _, status = os.waitpid(pid, 0)
    if not chunks:
        return {"error": f"child exited with status {status}"}
    return json.loads(b"".join(chunks))


# --- command line ----------------------------------------------------------------------------


def parse_bool(text):
    value = text.strip().lower()
    if value in ("true", "1", "on", "yes"):
        return True
    if value in ("false", "0", "off", "no"):
        return False
    raise argparse.ArgumentTypeError(f"expected true or false, got '{text}'")


def default_store():
    for candidate in ("stores/hcrl_sa", "build/bench-data/synthetic-store"):
        if (pathlib.Path(candidate) / "manifest.json").exists():
            return candidate
    raise SystemExit("pyg_reference_bench: no store: pass --store DIR (stores/hcrl_sa, or the "
                     "synthetic store training_bench builds under build/bench-data)")


def main():
    parser = argparse.ArgumentParser(
        description="Upstream KD-GAT models in PyTorch Geometric, measured like training_bench. "
        f"Needs torch_geometric (pip install torch_geometric=={PYG_PIN}).",
    )
    parser.add_argument("--store", default=None, help="graph store (default: stores/hcrl_sa)")
    parser.add_argument("--batch-sizes", default="256,1024,4096")
    parser.add_argument("--models", default="gat,teacher;gat,student;vgae,teacher;vgae,student",
                        help="MODEL,SIZE presets separated by ';'")
    parser.add_argument("--batches", type=int, default=12, help="timed batches per case at most")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--checkpointing", type=parse_bool, default=False,
                        help="torch.utils.checkpoint per GATConv block (default false: upstream)")
    parser.add_argument("--edge-attr", type=parse_bool, default=False,
                        help="keep edge features in the Data objects (collated, never read)")
    parser.add_argument("--isolation", choices=("auto", "fork", "spawn"), default="auto",
                        help="how each case's child process starts (auto: fork on CPU, spawn "
                        "on CUDA)")
    parser.add_argument("--cpu-peak", choices=("counting", "profiler", "both"), default="counting",
                        help="how CPU peak tensor memory is measured (see the script's header)")
    settings = parser.parse_args()
    settings.store = settings.store or default_store()
    if settings.isolation == "auto":
        settings.isolation = "fork" if settings.device.startswith("cpu") else "spawn"
    batch_sizes = [int(b) for b in settings.batch_sizes.split(",") if b]
    presets = []
    for preset in settings.models.split(";"):
        if not preset:
            continue
        kind, _, size = preset.partition(",")
        if kind not in ("gat", "vgae") or size not in ("teacher", "student"):
            parser.error(f"unknown preset '{preset}' (expected gat|vgae,teacher|student)")
        presets.append((kind, size))

    allocator_path = None
    if settings.device.startswith("cpu") and settings.cpu_peak != "profiler":
        try:
            allocator_path = build_counting_allocator()
        except (OSError, subprocess.CalledProcessError) as e:
            detail = getattr(e, "stderr", "") or str(e)
            print("pyg_reference_bench: cannot build the counting allocator "
                  f"({detail.strip()[:300]}); measuring CPU peaks with torch.profiler",
                  file=sys.stderr)

    checkpointing = "true" if settings.checkpointing else "false"
    print(f"store {settings.store}, {settings.threads} threads, device {settings.device}, "
          f"precision 32, checkpointing {checkpointing} "
          f"(PyG {torch_geometric.__version__}, torch {torch.__version__})")
    print(f"{'model':<6} {'size':<8} {'batch':>6} {'steps':>6} {'graphs/s':>12} "
          f"{'peak tensor MiB':>16} {'peak RSS MiB':>14} {'wait s/epoch':>16}")
    sys.stdout.flush()
    results = []
    for kind, size in presets:
        for batch in batch_sizes:
            result = run_isolated(settings, kind, size, batch, allocator_path)
            result.update({
                "framework": "pyg",
                "attention": "pyg",  # training_bench's attention key: fused / reference / pyg
                "threads": settings.threads,
                "device": settings.device,
                "precision": "32",
                "checkpointing": settings.checkpointing,
                "edge_attr": settings.edge_attr,
                "torch_version": torch.__version__,
                "pyg_version": torch_geometric.__version__,
            })
            if "error" in result:
                print(f"{kind + ',' + size:<14} {batch:>6}  error: {result['error']}")
            else:
                print(f"{kind:<6} {size:<8} {batch:>6} {result['steps_timed']:>6} "
                      f"{result['graphs_per_second']:>12.0f} "
                      f"{result['peak_tensor_bytes'] / (1 << 20):>16.1f} "
                      f"{result['peak_rss_bytes'] / (1 << 20):>14.1f} "
                      f"{result['batch_wait_seconds_per_epoch']:>16.4f}")
                if not result["parameters_match"]:
                    print(f"  warning: {result['parameters']['pyg']} parameters, headroom's "
                          f"formula gives {result['parameters']['headroom']}", file=sys.stderr)
            sys.stdout.flush()
            results.append(result)
    for result in results:
        print(json.dumps(result, sort_keys=True, separators=(",", ":")))


if __name__ == "__main__":
    main()
