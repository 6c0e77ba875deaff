#!/usr/bin/env python3
"""Trains upstream's GAT classifier (GATConv blocks with jumping knowledge, as KD-GAT defines it)
in plain PyTorch Geometric on a headroom graph store, inside a memory budget:

  1. headroom.Store opens the store; graphs are views of its mapped files (no loading step);
  2. headroom.fit_step_cost measures *this* PyG step's peak at a few batch sizes and fits it;
  3. headroom.BytePackedBatchSampler packs every epoch's batches under the budget;
  4. the training peak is measured and printed beside the budget.

    ~/.cache/headroom/venv/bin/python examples/pyg_train.py stores/hcrl_sa --budget 64MB --epochs 2
    ~/.cache/headroom/venv/bin/python examples/pyg_train.py stores/hcrl_sa --full

The default is sized for a CPU: upstream's student, step cost probed on batches of up to 128
graphs (about a minute on two cores on hcrl_sa). --full (or --device cuda) trains upstream's
teacher, probed up to 512 graphs, under 512MB unless --budget says otherwise: many minutes on a CPU.

Runs on CPU (tensor bytes counted by headroom's allocator) or CUDA (--device cuda; the caching
allocator's peak). Prints one line per epoch (loss, the epoch's tensor peak against the budget,
elapsed time, validation accuracy), then the test accuracy, and last whether the budget held:
the training's tensor peak against the budget, and the process's peak RSS beside it (what a
SLURM --mem must cover on top of the budget: docs/python.md, "What the budget covers").
"""

import argparse
import sys
import time

import torch
import torch.nn.functional as F
from torch import nn

import headroom  # before the model is built, so that its parameters are counted on CPU
from torch_geometric.data import Batch
from torch_geometric.nn import GATConv, global_mean_pool

PRESETS = {  # upstream's teacher and student (docs/detection.md)
    "teacher": dict(embedding_dim=16, hidden=48, layers=3, heads=8, fc_layers=2, dropout=0.2),
    "student": dict(embedding_dim=8, hidden=24, layers=2, heads=4, fc_layers=3, dropout=0.1),
}


class GATWithJK(nn.Module):
    """CAN-ID embedding + node features, GATConv blocks (ReLU, dropout), jumping knowledge by
    concatenation, global mean pool, a fully connected head."""

    def __init__(self, num_ids, in_features, embedding_dim, hidden, layers, heads, fc_layers,
                 dropout, num_classes=2):
        super().__init__()
        self.dropout = dropout
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

    def forward(self, batch):
        x = batch.x
        h = torch.cat([self.id_embedding(x[:, 0].long()), x[:, 1:]], dim=1)
        outputs = []
        for conv in self.convs:
            h = F.dropout(F.relu(conv(h, batch.edge_index)), self.dropout, self.training)
            outputs.append(h)
        pooled = global_mean_pool(torch.cat(outputs, dim=1), batch.batch, size=batch.num_graphs)
        return self.head(pooled)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("store", help="a headroom graph store (headroom preprocess ...)")
    parser.add_argument("--budget", default=None,
                        help="peak tensor bytes a step may use (default 64MB; 512MB with --full or "
                             "on CUDA)")
    parser.add_argument("--full", action="store_true",
                        help="upstream's full size: the teacher preset, probes up to 512 graphs")
    parser.add_argument("--preset", choices=sorted(PRESETS), default=None,
                        help="default: student on CPU, teacher with --full or on CUDA")
    parser.add_argument("--probe-graphs", type=int, default=None,
                        help="largest probe batch of the step-cost fit (default 128; 512 with "
                             "--full or on CUDA)")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    sys.stdout.reconfigure(line_buffering=True)  # each line as it comes, into a pipe or a log too

    device = torch.device(args.device)
    full = args.full or device.type == "cuda"
    preset = args.preset or ("teacher" if full else "student")
    probe_graphs = args.probe_graphs or (512 if full else 128)
    budget_text = args.budget or ("512MB" if full else "64MB")
    started = time.perf_counter()
    import_rss = headroom.tensor_memory()["rss_bytes"]
    torch.manual_seed(args.seed)
    store = headroom.Store(args.store)
    model = GATWithJK(store.identity_classes, store.metadata["node_feature_count"],
                      **PRESETS[preset]).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)

    def collate(ids):
        return Batch.from_data_list([store.to_pyg(i) for i in ids]).to(device)

    def step(ids):
        batch = collate(ids)
        optimizer.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(batch), batch.y)
        loss.backward()
        optimizer.step()
        return loss.item()

    @torch.no_grad()
    def accuracy(ids, sampler_budget):
        model.eval()
        sampler = headroom.BytePackedBatchSampler(store, sampler_budget, cost, ids=ids,
                                                  shuffle=False)
        correct = sum(int((model(b).argmax(1) == b.y).sum()) for b in map(collate, sampler))
        model.train()
        return correct / max(1, len(ids))

    print(f"{store}: {len(store.split('train'))} training graphs, {preset} preset on {device}, "
          f"budget {budget_text}, {args.epochs} epochs; RSS after the imports "
          f"{import_rss / 2**20:.0f} MiB")
    fitting = time.perf_counter()
    cost = headroom.fit_step_cost(step, store, device=device, max_graphs=probe_graphs,
                                  seed=args.seed)
    print(f"step cost fitted in {time.perf_counter() - fitting:.1f} s from {len(cost.samples)} "
          f"probes (max error {cost.max_relative_error:.1%}): {cost.fixed_bytes / 2**20:.1f} MiB "
          f"+ {cost.bytes_per_node:.0f} B/node + {cost.bytes_per_edge:.0f} B/edge "
          f"+ {cost.bytes_per_graph:.0f} B/graph")

    sampler = headroom.BytePackedBatchSampler(store, budget_text, cost, seed=args.seed)
    budget = sampler.budget_bytes
    mib = lambda size: f"{size / 2**20:.1f} MiB"
    peak = 0  # the highest epoch peak: training steps and validation, everything alive included
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        epoch_started = time.perf_counter()
        with headroom.measure_peak(device) as measured:
            losses = [step(ids) for ids in sampler]
            validation = accuracy(store.split("validation"), budget)
        peak = max(peak, measured.peak_bytes)
        print(f"epoch {epoch + 1}/{args.epochs}: loss {sum(losses) / len(losses):.4f}, "
              f"tensor peak {mib(measured.peak_bytes)} of {mib(budget)} budget "
              f"({measured.peak_bytes / budget:.0%}), {len(losses)} batches, "
              f"{time.perf_counter() - epoch_started:.1f} s (elapsed "
              f"{time.perf_counter() - started:.1f} s), validation accuracy {validation:.4f}")
    print(f"test accuracy {accuracy(store.split('test'), budget):.4f}")
    rss = headroom.tensor_memory()["peak_rss_bytes"]
    held = peak <= budget
    outside = f" = tensor peak + {(rss - peak) / 2**20:.0f} MiB outside the budget"
    print(f"budget {'held' if held else 'EXCEEDED'}: tensor peak {mib(peak)} "
          f"{'<=' if held else '>'} budget {mib(budget)}; process peak RSS {rss / 2**20:.0f} MiB"
          f"{outside if device.type == 'cpu' else ''}; elapsed "
          f"{time.perf_counter() - started:.1f} s")
    if not held:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
