"""A PyG training loop on a headroom store: the step's cost fitted by headroom, batches packed by
the sampler, the measured peak inside the budget, and the model learning."""

import torch
import torch.nn.functional as F

import headroom


def make_model(store):
    from torch_geometric.nn import GATConv, global_mean_pool

    features = store.metadata["node_feature_count"]

    class Classifier(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = GATConv(features, 16, heads=2)
            self.conv2 = GATConv(32, 16, heads=1)
            self.head = torch.nn.Linear(16, 2)

        def forward(self, batch):
            h = F.elu(self.conv1(batch.x, batch.edge_index))
            h = F.elu(self.conv2(h, batch.edge_index))
            return self.head(global_mean_pool(h, batch.batch))

    return Classifier()


def test_a_pyg_loop_trains_inside_the_budget_the_sampler_packs_for(synthetic_store):
    from torch_geometric.data import Batch

    torch.manual_seed(0)
    store = headroom.Store(synthetic_store)
    model = make_model(store)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)

    def collate(ids):
        return Batch.from_data_list([store.to_pyg(i) for i in ids])

    def step(ids):
        batch = collate(ids)
        optimizer.zero_grad()
        loss = F.cross_entropy(model(batch), batch.y)
        loss.backward()
        optimizer.step()
        return loss.item()

    # Whether it learned: the loss on a fixed set of graphs before and after, not epoch means
    # (those average over batches the epoch order deals differently each epoch).
    held = list(range(min(len(store), 256)))

    def loss_on_held():
        with torch.no_grad():
            batch = collate(held)
            return F.cross_entropy(model(batch), batch.y).item()

    before = loss_on_held()
    cost = headroom.fit_step_cost(step, store, max_graphs=64)
    assert len(cost.samples) >= 10 and cost.bytes_per_node > 0
    budget = 24 * 2**20
    sampler = headroom.BytePackedBatchSampler(store, budget=budget, cost=cost, seed=0)
    with headroom.measure_peak("cpu") as measured:
        for epoch in range(4):
            sampler.set_epoch(epoch)
            for ids in sampler:
                step(ids)
    assert len(sampler) > 1
    assert measured.peak_bytes <= budget, (measured.peak_bytes, budget)
    assert loss_on_held() < before
