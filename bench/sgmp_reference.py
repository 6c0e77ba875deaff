#!/usr/bin/env python3
"""PyG reference of SGMP (spatial graph message passing over 3rd-order paths) and GT-SSL
(self-supervised pretraining on geometric trees), issue 48: the same encoder and losses as
headroom's, trained on the same geometric graph store (bench/geometric_store.py), so that accuracy,
speed and memory can be compared side by side in one run.

Written for torch 2.11 and torch_geometric 2.8.1; torch and torch_geometric.utils only (no
torch_scatter / torch_cluster). Our own code: it reproduces the behaviour of the public reference
(YutongHu-Natalie/OCTA, Tree_Project/models/SGMP.py, models/gtssl.py, pretrain_gtssl.py,
finetune_sgmp_classifier.py) where issue 48's specification follows it, and says below where it
does not.

Usage:
    python bench/sgmp_reference.py --store STORE --task {classify,regress}
        [--pretrain-epochs N] --epochs N --batch-size B --labels-fraction F --seed S
        --threads T --json OUT [--hidden 64] [--lr 1e-3] [--weight-decay 5e-4] [--device cpu]

Encoder (the specification headroom's C++ encoder follows as well):
  * embedding Linear(F, H)-ReLU-Linear(H, H), H = 64 by default; F = the store's node features as
    stored (feature 0, the identity class, included as a number).
  * paths: every i->j->k->p over the stored directed edges (source -> target) with the four nodes
    pairwise distinct (an edge given twice counts twice, self-loop edges ignored), plus one
    degenerate v->v->v->v per node: exactly the store's graph_num_paths third column
    (`third_order_paths`, vectorised with torch ops, enumerated per batch inside the timed loop as
    the reference does).
  * geometry per path (2-D positions padded with z = 0, `path_geometry`): d_ij, d_jk, d_jp;
    theta_ijk = angle(b1, b2), theta_ijp = angle(b1, b3) with b1 = pos_j - pos_i,
    b2 = pos_k - pos_j, b3 = pos_p - pos_j and angle(a, b) = atan2(|a x b|, a.b); the dihedral
    phi = angle(n1, n2) * sign((n1 x n2).b1), n1 = b1 x b2, n2 = b1 x b3, negatives + 2 pi, so in
    [0, 2 pi). sign(0) is taken as +1: the trans case (n1 x n2 = 0, angle pi) is pi, as the
    specification's hand-worked case asks; the reference's torch.sign gives 0 there, and it feeds
    the negative angles to the [0, 2 pi] smearing as they are (they fall below its first centre).
  * Gaussian smearing exp(-0.5 ((x - c) / (c1 - c0))^2) over linspace centres: distances over
    [0, cutoff] (10.0) with 50, theta over [0, pi] with 6, phi over [0, 2 pi] with 12.
  * 3 interaction layers: g1 = MLP(rbf_d(d_ij)), g2 = MLP([rbf_d(d_jk), rbf_theta(theta_ijk)]),
    g3 = MLP([rbf_d(d_jp), rbf_theta(theta_ijp), rbf_phi(phi)]) (Linear-ReLU-Linear to H each);
    [h_i, h_j, h_k, h_p, g1, g2, g3] through Linear(7H, 4H)-ReLU-Linear(4H, 2H)-ReLU-Linear(2H, H),
    summed into node i; h = h + that.
  * sum readout per graph; head Linear(H, H/2)-ReLU-Linear(H/2, outputs).
  * every Linear: Xavier-uniform weight, zero bias (the reference initialises only some layers so
    and leaves the embedding and each geometry MLP's second layer at PyTorch's default).

GT-SSL, as the paper means it (differences from the reference code in brackets):
  * partial order on the node embeddings h (after the interaction layers, before the readout):
    for every tree edge (child c, parent v, from the store's node_parent) the hinge
    sum_d max(0, h_c[d] - h_v[d]), averaged over the edges; for sampled non-related pairs (a, b)
    the hinge max(0, delta - ||h_a - h_b||_2), averaged over the pairs, delta = 1.0; the sum of
    both. [The reference takes its "parent-child" pairs from edge_index, both directions of every
    edge, so each pair asks h_c <= h_v and h_v <= h_c at once; it draws its negatives from the
    whole batch, across graphs, excluding only pairs joined by an edge. Here a non-related pair is
    two nodes of one tree neither of which is an ancestor of the other, drawn within a graph; as
    many as the batch has tree edges, at most 100 per batch (the reference's cap). The reference's
    docstring squares the norm, its code does not; its code is followed.]
  * subtree growth: each node's segment (to its parent) has a length and a bend, the angle between
    its parent's segment and its own (0 at a root and its children: no segment before them). For
    every node v with children, the target is the RBF histogram of its children's lengths and
    bends (20 centres each, distances over [0, 10], angles over [0, pi], exp(-(x - mu)^2): the
    reference's constants), each normalised to sum 1. The prediction is
    MLP([h_v, mean over v's ancestors (root .. v, v's own segment included) of the RBF-encoded
    length and bend]) with a softmax over each histogram's 20 bins. The loss is the 1-D Wasserstein
    distance per histogram, the L1 distance between the cumulative distributions (in bins), summed
    over the two histograms and averaged over the nodes with children. [The reference predicts from
    zeros (the ancestors' aggregation left as a placeholder, so the loss never reaches the encoder),
    takes the angle to the x axis in the x-y plane, L1-normalises the raw MLP output (which may be
    negative) and compares the two distributions by plain L1.]
  * total = subtree growth + 1.0 * partial order; Adam(lr 1e-3, weight decay 5e-4), the
    reference's pretraining settings; the pretraining keeps the epoch with the lowest validation
    GT-SSL loss, as the reference does.
  * fine-tuning: the pretrained embedding and interaction layers with a fresh head, all trained
    (the reference's default: no freezing); classification by cross-entropy, regression by L1 on
    the standardised target (train-split mean and standard deviation); model selection on the
    validation split (accuracy; MAE), test metric of the selected epoch. [The reference fine-tunes
    with lr 1e-4 and ReduceLROnPlateau; here --lr for both stages, no schedule, so that a few
    epochs learn something.]

Reported (JSON): test accuracy (classify) or test MAE in meV (regress; the store's target unit from
its manifest, QM9 hartree: 1 hartree = 27,211.386 meV), the training throughput in graphs/s (wall
clock of the training steps of every epoch, collation and path enumeration included, evaluation
excluded) for each stage, for regression the test MAE of predicting the training mean (for
scale), the peak RSS of the process (getrusage ru_maxrss) and on CUDA
torch.cuda.max_memory_allocated, and the largest number of 3rd-order paths in a batch.
"""

import argparse
import copy
import json
import math
import os
import pathlib
import platform
import resource
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

import torch_geometric
from torch_geometric.loader import DataLoader
from torch_geometric.utils import scatter

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from geometric_store import GeometricStore  # noqa: E402

UNIT_TO_MEV = {"hartree": 27211.386245988, "ev": 1000.0, "mev": 1.0}


# ---------------------------------------------------------------------------------------------
# Paths and geometry
# ---------------------------------------------------------------------------------------------

def third_order_paths(edge_index, num_nodes):
    """[4, P] rows i, j, k, p: every i->j->k->p over the directed edges with four pairwise distinct
    nodes, then one v->v->v->v per node. Vectorised: the edges grouped by source (CSR), each
    path extended by all out-edges of its last node with repeat_interleave, then filtered."""
    device = edge_index.device
    src, dst = edge_index[0], edge_index[1]
    keep = src != dst
    src, dst = src[keep], dst[keep]
    order = torch.argsort(src, stable=True)
    src, dst = src[order], dst[order]
    out_degree = torch.bincount(src, minlength=num_nodes)
    first_edge = torch.cumsum(out_degree, 0) - out_degree  # CSR row start per node

    def extend(last):
        """(row, next): each path's index repeated once per out-edge of its last node, and that
        edge's target."""
        counts = out_degree[last]
        rows = torch.repeat_interleave(torch.arange(last.numel(), device=device), counts)
        starts = torch.cumsum(counts, 0) - counts
        within = torch.arange(rows.numel(), device=device) - starts[rows]
        return rows, dst[first_edge[last[rows]] + within]

    i, j = src, dst
    rows, k = extend(j)
    i, j = i[rows], j[rows]
    keep = k != i
    i, j, k = i[keep], j[keep], k[keep]
    rows, p = extend(k)
    i, j, k = i[rows], j[rows], k[rows]
    keep = (p != j) & (p != i)
    nodes = torch.arange(num_nodes, device=device)
    return torch.stack([torch.cat([i[keep], nodes]), torch.cat([j[keep], nodes]),
                        torch.cat([k[keep], nodes]), torch.cat([p[keep], nodes])])


def angle(a, b):
    """atan2(|a x b|, a.b) row by row; 0 when either vector is zero."""
    return torch.atan2(torch.linalg.cross(a, b, dim=1).norm(dim=1), (a * b).sum(dim=1))


def padded_3d(pos):
    return F.pad(pos, (0, 3 - pos.size(1))) if pos.size(1) < 3 else pos


def path_geometry(pos, paths):
    """d_ij, d_jk, d_jp, theta_ijk, theta_ijp, phi (in [0, 2 pi)) per path, as the module doc
    says."""
    pos = padded_3d(pos)
    i, j, k, p = paths
    b1 = pos[j] - pos[i]
    b2 = pos[k] - pos[j]
    b3 = pos[p] - pos[j]
    n1 = torch.linalg.cross(b1, b2, dim=1)
    n2 = torch.linalg.cross(b1, b3, dim=1)
    phi = angle(n1, n2)
    orientation = (torch.linalg.cross(n1, n2, dim=1) * b1).sum(dim=1)
    phi = torch.where(orientation < 0, -phi, phi)  # sign(0) = +1
    phi = torch.where(phi < 0, phi + 2 * math.pi, phi)
    return {"d_ij": b1.norm(dim=1), "d_jk": b2.norm(dim=1), "d_jp": b3.norm(dim=1),
            "theta_ijk": angle(b1, b2), "theta_ijp": angle(b1, b3), "phi": phi}


class GaussianSmearing(nn.Module):
    """exp(-0.5 ((x - c) / (c1 - c0))^2) over `count` centres linspace(start, stop)."""

    def __init__(self, start, stop, count):
        super().__init__()
        self.register_buffer("centres", torch.linspace(start, stop, count))
        self.width = (stop - start) / (count - 1)

    def forward(self, x):
        return torch.exp(-0.5 * ((x.view(-1, 1) - self.centres.view(1, -1)) / self.width) ** 2)


# ---------------------------------------------------------------------------------------------
# The encoder
# ---------------------------------------------------------------------------------------------

def mlp(*sizes):
    layers = []
    for n, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
        if n:
            layers.append(nn.ReLU())
        layers.append(nn.Linear(a, b))
    return nn.Sequential(*layers)


def xavier_zero(module):
    for m in module.modules():
        if isinstance(m, nn.Linear):
            nn.init.xavier_uniform_(m.weight)
            nn.init.zeros_(m.bias)


class Interaction(nn.Module):
    def __init__(self, hidden, gaussians):
        super().__init__()
        kd, kt, kp = gaussians
        self.g1 = mlp(kd, hidden, hidden)
        self.g2 = mlp(kd + kt, hidden, hidden)
        self.g3 = mlp(kd + kt + kp, hidden, hidden)
        self.combine = mlp(7 * hidden, 4 * hidden, 2 * hidden, hidden)

    def forward(self, h, paths, rbf1, rbf2, rbf3):
        i, j, k, p = paths
        message = self.combine(torch.cat(
            [h[i], h[j], h[k], h[p], self.g1(rbf1), self.g2(rbf2), self.g3(rbf3)], dim=-1))
        return scatter(message, i, dim=0, dim_size=h.size(0), reduce="sum")


class SGMP(nn.Module):
    def __init__(self, in_features, hidden=64, outputs=1, layers=3, cutoff=10.0,
                 gaussians=(50, 6, 12)):
        super().__init__()
        self.hidden = hidden
        self.rbf_d = GaussianSmearing(0.0, cutoff, gaussians[0])
        self.rbf_theta = GaussianSmearing(0.0, math.pi, gaussians[1])
        self.rbf_phi = GaussianSmearing(0.0, 2 * math.pi, gaussians[2])
        self.embedding = mlp(in_features, hidden, hidden)
        self.interactions = nn.ModuleList(Interaction(hidden, gaussians) for _ in range(layers))
        self.head = mlp(hidden, hidden // 2, outputs)
        xavier_zero(self)

    def reset_head(self):
        xavier_zero(self.head)

    def node_embeddings(self, x, pos, paths):
        with torch.no_grad():  # positions are data: no gradient flows into the geometry
            g = path_geometry(pos, paths)
        rbf1 = self.rbf_d(g["d_ij"])
        rbf2 = torch.cat([self.rbf_d(g["d_jk"]), self.rbf_theta(g["theta_ijk"])], dim=-1)
        rbf3 = torch.cat([self.rbf_d(g["d_jp"]), self.rbf_theta(g["theta_ijp"]),
                          self.rbf_phi(g["phi"])], dim=-1)
        h = self.embedding(x)
        for layer in self.interactions:
            h = h + layer(h, paths, rbf1, rbf2, rbf3)
        return h

    def forward(self, x, pos, paths, batch, num_graphs):
        h = self.node_embeddings(x, pos, paths)
        return self.head(scatter(h, batch, dim=0, dim_size=num_graphs, reduce="sum"))


# ---------------------------------------------------------------------------------------------
# GT-SSL
# ---------------------------------------------------------------------------------------------

def wasserstein_1d(p, q, bin_width=1.0):
    """1-D Wasserstein-1 distance between histograms over the same evenly spaced bins (last dim):
    the L1 distance between their cumulative distributions, times the bin width."""
    return (torch.cumsum(p, -1) - torch.cumsum(q, -1)).abs().sum(-1) * bin_width


def partial_order_loss(h, child, parent, neg_a, neg_b, delta=1.0):
    """Mean over tree edges of sum_d max(0, h_child - h_parent), plus the mean over non-related
    pairs of max(0, delta - ||h_a - h_b||_2)."""
    zero = h.new_zeros(())
    order = F.relu(h[child] - h[parent]).sum(dim=1).mean() if child.numel() else zero
    apart = (F.relu(delta - (h[neg_a] - h[neg_b]).norm(dim=1)).mean()
             if neg_a.numel() else zero)
    return order + apart


def global_parents(batch):
    """The batch's parents as batch-wide node indices (-1 for roots)."""
    parent = batch.parent
    return torch.where(parent >= 0, parent + batch.ptr[batch.batch], parent)


def ancestor_mask(anc, node, parent):
    """True where anc is a strict ancestor of node."""
    found = torch.zeros_like(node, dtype=torch.bool)
    cur = parent[node]
    while bool((cur >= 0).any()):
        found |= cur == anc
        cur = torch.where(cur >= 0, parent[cur.clamp(min=0)], cur)
    return found


def sample_unrelated_pairs(parent, batch_vector, ptr, count, generator):
    """Up to `count` pairs (a, b) of one tree, a != b, neither an ancestor of the other."""
    n = parent.numel()
    if count <= 0 or n < 2:
        empty = torch.zeros(0, dtype=torch.long, device=parent.device)
        return empty, empty
    candidates = 4 * count
    a = torch.randint(0, n, (candidates,), generator=generator).to(parent.device)
    g = batch_vector[a]
    size = ptr[g + 1] - ptr[g]
    offset = (torch.rand(candidates, generator=generator).to(parent.device) * size).long()
    b = ptr[g] + torch.minimum(offset, size - 1)
    ok = (a != b) & ~ancestor_mask(a, b, parent) & ~ancestor_mask(b, a, parent)
    return a[ok][:count], b[ok][:count]


def segment_geometry(pos, parent):
    """Per node: its segment's length (to its parent; 0 at a root) and bend (the angle between its
    parent's segment and its own; 0 where either is missing)."""
    pos = padded_3d(pos)
    has_parent = (parent >= 0).unsqueeze(1)
    up = parent.clamp(min=0)
    segment = torch.where(has_parent, pos - pos[up], torch.zeros_like(pos))
    parent_segment = torch.where(has_parent, segment[up], torch.zeros_like(pos))
    return segment.norm(dim=1), angle(parent_segment, segment)


class GTSSL(nn.Module):
    def __init__(self, encoder, centres=20, delta=1.0, lambda_order=1.0, max_negatives=100):
        super().__init__()
        self.encoder = encoder
        self.centres = centres
        self.delta = delta
        self.lambda_order = lambda_order
        self.max_negatives = max_negatives
        self.register_buffer("distance_centres", torch.linspace(0.0, 10.0, centres))
        self.register_buffer("angle_centres", torch.linspace(0.0, math.pi, centres))
        hidden = encoder.hidden
        self.predictor = mlp(hidden + 2 * centres, hidden, hidden, 2 * centres)
        xavier_zero(self.predictor)

    def rbf(self, length, bend):
        """The reference's RBF, exp(-(x - mu)^2) (gamma 1), for lengths and bends: [n, 2K]."""
        return torch.cat([torch.exp(-(length.view(-1, 1) - self.distance_centres) ** 2),
                          torch.exp(-(bend.view(-1, 1) - self.angle_centres) ** 2)], dim=1)

    def subtree_growth_loss(self, h, pos, parent):
        with torch.no_grad():
            length, bend = segment_geometry(pos, parent)
            encoded = self.rbf(length, bend)  # [n, 2K]
            n = parent.numel()
            # The ancestors' aggregation: mean of the chain root .. v (v's own segment included).
            total = torch.zeros_like(encoded)
            count = torch.zeros(n, device=h.device)
            cur = torch.arange(n, device=h.device)
            while bool((cur >= 0).any()):
                live = cur >= 0
                total[live] += encoded[cur[live]]
                count[live] += 1
                cur = torch.where(live, parent[cur.clamp(min=0)], cur)
            ancestors = total / count.unsqueeze(1)
            # The children's histograms, per parent.
            child = torch.nonzero(parent >= 0).view(-1)
            histogram = scatter(encoded[child], parent[child], dim=0, dim_size=n, reduce="sum")
            has_children = torch.bincount(parent[child], minlength=n) > 0
            K = self.centres
            target_d = histogram[has_children, :K]
            target_a = histogram[has_children, K:]
            target_d = target_d / target_d.sum(1, keepdim=True)
            target_a = target_a / target_a.sum(1, keepdim=True)
        if not bool(has_children.any()):
            return h.new_zeros(())
        logits = self.predictor(torch.cat([h[has_children], ancestors[has_children]], dim=1))
        pred_d = torch.softmax(logits[:, :self.centres], dim=1)
        pred_a = torch.softmax(logits[:, self.centres:], dim=1)
        return (wasserstein_1d(pred_d, target_d) + wasserstein_1d(pred_a, target_a)).mean()

    def forward(self, batch, paths, generator):
        h = self.encoder.node_embeddings(batch.x, batch.pos, paths)
        parent = global_parents(batch)
        child = torch.nonzero(parent >= 0).view(-1)
        neg_a, neg_b = sample_unrelated_pairs(parent, batch.batch, batch.ptr,
                                              min(child.numel(), self.max_negatives), generator)
        order = partial_order_loss(h, child, parent[child], neg_a, neg_b, self.delta)
        growth = self.subtree_growth_loss(h, batch.pos, parent)
        return growth + self.lambda_order * order, order.detach(), growth.detach()


# ---------------------------------------------------------------------------------------------
# Training
# ---------------------------------------------------------------------------------------------

def peak_memory(device):
    peak = {"peak_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}
    if device.type == "cuda":
        peak["cuda_max_memory_allocated_bytes"] = torch.cuda.max_memory_allocated(device)
    return peak


def sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


class Runner:
    def __init__(self, args, store, device):
        self.args = args
        self.store = store
        self.device = device
        self.max_paths = 0
        self.generator = torch.Generator().manual_seed(args.seed)

    def loader(self, graphs, shuffle):
        return DataLoader(graphs, batch_size=self.args.batch_size, shuffle=shuffle,
                          generator=self.generator if shuffle else None)

    def paths_of(self, batch):
        paths = third_order_paths(batch.edge_index, batch.num_nodes)
        self.max_paths = max(self.max_paths, paths.size(1))
        return paths

    # -- supervised / fine-tuning ----------------------------------------------------------------

    def supervised_loss(self, model, batch, paths):
        out = model(batch.x, batch.pos, paths, batch.batch, batch.num_graphs)
        if self.args.task == "classify":
            return F.cross_entropy(out, batch.y), out
        target = (batch.target - self.target_mean) / self.target_std
        return F.l1_loss(out.view(-1), target), out

    @torch.no_grad()
    def evaluate(self, model, graphs):
        model.eval()
        correct, abs_error, count = 0, 0.0, 0
        for batch in self.loader(graphs, shuffle=False):
            batch = batch.to(self.device)
            out = model(batch.x, batch.pos, self.paths_of(batch), batch.batch, batch.num_graphs)
            if self.args.task == "classify":
                correct += int((out.argmax(dim=1) == batch.y).sum())
            else:
                pred = out.view(-1).double() * self.target_std + self.target_mean
                abs_error += float((pred - batch.target.double()).abs().sum())
            count += batch.num_graphs
        if self.args.task == "classify":
            return {"accuracy": correct / max(count, 1)}
        return {"mae": abs_error / max(count, 1),
                "mae_mev": abs_error / max(count, 1) * self.mev_per_unit
                if self.mev_per_unit else None}

    def train_supervised(self, model, train, validation, test):
        args = self.args
        if args.task == "regress":
            t = torch.cat([g.target for g in train]).double()
            self.target_mean = float(t.mean())
            self.target_std = float(t.std()) if t.numel() > 1 and float(t.std()) > 0 else 1.0
        optimizer = torch.optim.Adam(model.parameters(), lr=args.lr,
                                     weight_decay=args.weight_decay)
        history, best, best_state, best_epoch = [], None, None, 0
        train_seconds, train_graphs = 0.0, 0
        for epoch in range(1, args.epochs + 1):
            model.train()
            total, graphs = 0.0, 0
            sync(self.device)
            start = time.perf_counter()
            for batch in self.loader(train, shuffle=True):
                batch = batch.to(self.device)
                paths = self.paths_of(batch)
                optimizer.zero_grad(set_to_none=True)
                loss, _ = self.supervised_loss(model, batch, paths)
                loss.backward()
                optimizer.step()
                total += float(loss) * batch.num_graphs
                graphs += batch.num_graphs
            sync(self.device)
            seconds = time.perf_counter() - start
            train_seconds += seconds
            train_graphs += graphs
            val = self.evaluate(model, validation)
            score = val["accuracy"] if args.task == "classify" else -val["mae"]
            if best is None or score > best:
                best, best_state, best_epoch = score, copy.deepcopy(model.state_dict()), epoch
            history.append({"epoch": epoch, "train_loss": total / max(graphs, 1),
                            "seconds": seconds, "validation": val})
            print(f"[{args.stage_name}] epoch {epoch}: loss {total / max(graphs, 1):.4f}, "
                  f"validation {val}, {graphs / seconds:.1f} graphs/s", flush=True)
        model.load_state_dict(best_state)
        return {"best_epoch": best_epoch, "validation": self.evaluate(model, validation),
                "test": self.evaluate(model, test), "history": history,
                "train_seconds": train_seconds, "train_graphs": train_graphs,
                "graphs_per_second": train_graphs / train_seconds if train_seconds else None}

    # -- GT-SSL pretraining ----------------------------------------------------------------------

    @torch.no_grad()
    def gtssl_validation(self, ssl, graphs):
        ssl.eval()
        total, count = 0.0, 0
        generator = torch.Generator().manual_seed(self.args.seed + 1)  # the same pairs each epoch
        for batch in self.loader(graphs, shuffle=False):
            batch = batch.to(self.device)
            loss, _, _ = ssl(batch, self.paths_of(batch), generator)
            total += float(loss) * batch.num_graphs
            count += batch.num_graphs
        return total / max(count, 1)

    def pretrain(self, model, train, validation):
        args = self.args
        ssl = GTSSL(model).to(self.device)
        optimizer = torch.optim.Adam(ssl.parameters(), lr=args.lr,
                                     weight_decay=args.weight_decay)
        history, best, best_state = [], None, None
        seconds_all, graphs_all = 0.0, 0
        for epoch in range(1, args.pretrain_epochs + 1):
            ssl.train()
            totals, graphs = np.zeros(3), 0
            sync(self.device)
            start = time.perf_counter()
            for batch in self.loader(train, shuffle=True):
                batch = batch.to(self.device)
                paths = self.paths_of(batch)
                optimizer.zero_grad(set_to_none=True)
                loss, order, growth = ssl(batch, paths, self.generator)
                loss.backward()
                optimizer.step()
                totals += np.array([float(loss.detach()), float(order), float(growth)]) * batch.num_graphs
                graphs += batch.num_graphs
            sync(self.device)
            seconds = time.perf_counter() - start
            seconds_all += seconds
            graphs_all += graphs
            val = self.gtssl_validation(ssl, validation)
            if best is None or val < best:
                best, best_state = val, copy.deepcopy(model.state_dict())
            means = totals / max(graphs, 1)
            history.append({"epoch": epoch, "loss": means[0], "partial_order": means[1],
                            "subtree_growth": means[2], "validation_loss": val,
                            "seconds": seconds})
            print(f"[pretrain] epoch {epoch}: loss {means[0]:.4f} (order {means[1]:.4f}, "
                  f"growth {means[2]:.4f}), validation {val:.4f}, {graphs / seconds:.1f} graphs/s",
                  flush=True)
        model.load_state_dict(best_state)
        model.reset_head()  # the reference fine-tunes a freshly initialised head
        return {"best_validation_loss": best, "history": history, "train_seconds": seconds_all,
                "train_graphs": graphs_all,
                "graphs_per_second": graphs_all / seconds_all if seconds_all else None}


def labelled_subset(graphs, fraction, seed):
    if not 0 < fraction <= 1:
        raise SystemExit(f"--labels-fraction {fraction}: must be in (0, 1]")
    count = max(1, int(round(fraction * len(graphs))))
    order = np.random.default_rng(seed).permutation(len(graphs))[:count]
    return [graphs[i] for i in sorted(order)]


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--store", required=True, help="a geometric graph store")
    parser.add_argument("--task", required=True, choices=["classify", "regress"])
    parser.add_argument("--pretrain-epochs", type=int, default=0,
                        help="GT-SSL epochs before fine-tuning (0: supervised only; needs parents)")
    parser.add_argument("--epochs", type=int, required=True)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--labels-fraction", type=float, default=1.0,
                        help="fraction of the train split whose labels the supervised stage uses")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--json", help="write the result here (and print it)")
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--layers", type=int, default=3)
    parser.add_argument("--cutoff", type=float, default=10.0)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--weight-decay", type=float, default=5e-4)
    parser.add_argument("--device", default="cpu")
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    device = torch.device(args.device)
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)
    wall_start = time.perf_counter()
    store = GeometricStore(args.store)
    if args.task == "regress" and store.target is None:
        raise SystemExit(f"{args.store}: --task regress needs a graph_target; the store has none")
    if args.pretrain_epochs > 0 and not store.has_parents:
        raise SystemExit(f"{args.store}: GT-SSL pretraining needs each node's parent "
                         "(geometry.parents); the store has none")
    train_all = store.dataset("train")
    validation = store.dataset("validation")
    test = store.dataset("test")
    if not validation:
        raise SystemExit(f"{args.store}: the validation split is empty; model selection needs it")
    train = labelled_subset(train_all, args.labels_fraction, args.seed)
    if args.task == "classify":
        outputs = int(max(int(g.y) for g in train_all + validation + test)) + 1
        outputs = max(outputs, 2)
    else:
        outputs = 1
    model = SGMP(store.num_node_features, hidden=args.hidden, outputs=outputs, layers=args.layers,
                 cutoff=args.cutoff).to(device)
    runner = Runner(args, store, device)
    unit = (store.target or {}).get("unit", "")
    runner.mev_per_unit = UNIT_TO_MEV.get(unit.lower())
    result = {
        "framework": "pyg-reference", "model": "sgmp", "store": str(args.store),
        "task": args.task, "config": {k: v for k, v in vars(args).items() if k != "json"},
        "graphs": {"train_split": len(train_all), "train_labelled": len(train),
                   "validation": len(validation), "test": len(test)},
        "node_features": store.num_node_features, "outputs": outputs,
        "parameters": sum(p.numel() for p in model.parameters()),
        "versions": {"python": platform.python_version(), "torch": torch.__version__,
                     "torch_geometric": torch_geometric.__version__},
        "device": str(device), "machine": platform.machine(), "cpu_count": os.cpu_count(),
    }
    if args.pretrain_epochs > 0:
        args.stage_name = "fine-tune"
        result["pretrain"] = runner.pretrain(model, train_all, validation)
    else:
        args.stage_name = "supervised"
    stage = runner.train_supervised(model, train, validation, test)
    result["supervised"] = stage
    if args.task == "classify":
        result["test_accuracy"] = stage["test"]["accuracy"]
        result["validation_accuracy"] = stage["validation"]["accuracy"]
    else:
        result["target"] = store.target
        result["test_mae"] = stage["test"]["mae"]
        result["test_mae_mev"] = stage["test"]["mae_mev"]
        result["validation_mae_mev"] = stage["validation"]["mae_mev"]
        # For scale: the test MAE of predicting the training targets' mean for every graph.
        baseline = sum(abs(float(g.target) - runner.target_mean) for g in test) / max(len(test), 1)
        result["mean_predictor_test_mae_mev"] = (baseline * runner.mev_per_unit
                                                 if runner.mev_per_unit else None)
    result["train_graphs_per_second"] = stage["graphs_per_second"]
    if "pretrain" in result:
        result["pretrain_graphs_per_second"] = result["pretrain"]["graphs_per_second"]
    result["max_paths_per_batch"] = runner.max_paths
    result.update(peak_memory(device))
    result["wall_seconds"] = time.perf_counter() - wall_start
    summary = {k: v for k, v in result.items() if k not in ("pretrain", "supervised")}
    print(json.dumps(summary, indent=1))
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(result, indent=1) + "\n")
    return result


if __name__ == "__main__":
    main()
