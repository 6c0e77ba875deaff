// The SGMP encoder (models/sgmp.hpp): invariant to rotating, translating and renumbering; chunked
// (with and without checkpointing) equal to unchunked, forward and gradients; equal to a per-path
// reference written with plain loops over the module's own weights; every parameter learns; path
// memory bounded by the chunk size; and a few dozen Adam steps on synthetic trees of two classes
// lower the loss clearly.
#include "headroom/models/sgmp.hpp"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <iostream>
#include <numbers>
#include <random>
#include <vector>

#include "headroom/loader/collate.hpp"
#include "headroom/memory/tensor_memory_meter.hpp"
#include "headroom/store/graph_store.hpp"
#include "headroom/synthetic/synthetic_trees.hpp"
#include "test_support.hpp"

namespace headroom::models {
namespace {

// `graphs` random graphs of 4-7 nodes each: a random spanning tree plus a few extra links, every
// link both ways, one edge given twice and one self-loop per graph; positions spread over a few
// units in 3-D, F = 3 features.
GeometricBatch random_batch(unsigned seed, int graphs, at::ScalarType dtype = at::kFloat) {
  std::mt19937 rng(seed);
  std::vector<std::int64_t> source, target, membership;
  std::int64_t first = 0;
  for (int g = 0; g < graphs; ++g) {
    const auto nodes = std::uniform_int_distribution<std::int64_t>(4, 7)(rng);
    const auto link = [&](std::int64_t a, std::int64_t b) {
      source.insert(source.end(), {first + a, first + b});
      target.insert(target.end(), {first + b, first + a});
    };
    for (std::int64_t v = 1; v < nodes; ++v)
      link(std::uniform_int_distribution<std::int64_t>(0, v - 1)(rng), v);
    link(0, nodes - 1);
    source.push_back(first + 1);  // edge 1 -> 0 again (the tree's first link), and a self-loop
    target.push_back(first);
    source.push_back(first + 2);
    target.push_back(first + 2);
    membership.insert(membership.end(), static_cast<std::size_t>(nodes), g);
    first += nodes;
  }
  torch::manual_seed(seed);
  GeometricBatch batch;
  batch.x = torch::randn({first, 3}, dtype);
  batch.pos = torch::randn({first, 3}, dtype) * 1.5;
  batch.edge_index =
      torch::stack({torch::tensor(source, torch::kInt64), torch::tensor(target, torch::kInt64)});
  batch.batch = torch::tensor(membership, torch::kInt64);
  batch.num_graphs = graphs;
  return batch;
}

SgmpOptions small_options() {
  SgmpOptions o;
  o.in_features = 3;
  o.hidden = 16;
  o.outputs = 3;
  o.interactions = 2;
  o.cutoff = 6.0;
  return o;
}

void copy_parameters(const Sgmp& from, Sgmp& to) {
  torch::NoGradGuard no_grad;
  const auto source = from->named_parameters();
  for (auto& item : to->named_parameters()) item.value().copy_(source[item.key()]);
}

TEST(SgmpEncoder, ARotationAndATranslationOfThePositionsChangeNothing) {
  torch::manual_seed(1);
  Sgmp model(small_options());
  const auto batch = random_batch(11, 5);
  auto [q, r] = at::linalg_qr(torch::randn({3, 3}));
  if (at::linalg_det(q).item<float>() < 0) q = q * torch::tensor({-1.0F, 1.0F, 1.0F});
  GeometricBatch moved = batch;
  moved.pos = batch.pos.matmul(q.t()) + torch::tensor({2.0F, -3.0F, 0.7F});
  torch::NoGradGuard no_grad;
  const auto before = model->forward(batch);
  const auto after = model->forward(moved);
  ASSERT_EQ(before.sizes(), (at::IntArrayRef{5, 3}));
  EXPECT_TRUE(torch::allclose(before, after, 1e-4, 1e-4)) << before << after;
  // The control: another shape of the same graphs gives other outputs.
  GeometricBatch stretched = batch;
  stretched.pos = batch.pos * torch::tensor({1.0F, 1.3F, 1.0F});
  EXPECT_FALSE(torch::allclose(before, model->forward(stretched), 1e-2, 1e-2));
}

TEST(SgmpEncoder, RenumberingTheNodesOfEachGraphChangesNothing) {
  torch::manual_seed(2);
  Sgmp model(small_options());
  const auto batch = random_batch(12, 4);
  // new_index[v]: node v's number after shuffling the nodes inside each graph.
  std::vector<std::int64_t> new_index(static_cast<std::size_t>(batch.x.size(0)));
  std::mt19937 rng(3);
  const auto membership = batch.batch.accessor<std::int64_t, 1>();
  std::int64_t begin = 0;
  while (begin < batch.x.size(0)) {
    std::int64_t end = begin;
    while (end < batch.x.size(0) && membership[end] == membership[begin]) ++end;
    std::vector<std::int64_t> block;
    for (std::int64_t v = begin; v < end; ++v) block.push_back(v);
    std::shuffle(block.begin(), block.end(), rng);
    for (std::int64_t v = begin; v < end; ++v)
      new_index[static_cast<std::size_t>(v)] = block[static_cast<std::size_t>(v - begin)];
    begin = end;
  }
  const auto mapping = torch::tensor(new_index, torch::kInt64);
  GeometricBatch renumbered = batch;
  renumbered.x = torch::zeros_like(batch.x).index_copy(0, mapping, batch.x);
  renumbered.pos = torch::zeros_like(batch.pos).index_copy(0, mapping, batch.pos);
  renumbered.edge_index = mapping.index_select(0, batch.edge_index.reshape({-1})).reshape({2, -1});
  ASSERT_FALSE(torch::equal(renumbered.x, batch.x));
  torch::NoGradGuard no_grad;
  const auto before = model->encode(batch);
  const auto after = model->encode(renumbered);
  EXPECT_TRUE(torch::allclose(before.graphs, after.graphs, 1e-4, 1e-4));
  EXPECT_TRUE(torch::allclose(after.nodes.index_select(0, mapping), before.nodes, 1e-4, 1e-4));
  EXPECT_TRUE(torch::allclose(model->forward(batch), model->forward(renumbered), 1e-4, 1e-4));
}

TEST(SgmpEncoder, PlanarPositionsAreTheirPlaneAtZeroHeightAndTurnWithIt) {
  torch::manual_seed(3);
  Sgmp model(small_options());
  GeometricBatch flat = random_batch(17, 3);
  flat.pos = flat.pos.slice(1, 0, 2).contiguous();
  GeometricBatch lifted = flat;
  lifted.pos = torch::cat({flat.pos, torch::zeros({flat.pos.size(0), 1})}, 1);
  const double angle = 0.7;
  const auto rotation =
      torch::tensor({std::cos(angle), -std::sin(angle), std::sin(angle), std::cos(angle)},
                    torch::kFloat)
          .reshape({2, 2});
  GeometricBatch turned = flat;
  turned.pos = flat.pos.matmul(rotation.t()) + torch::tensor({1.5F, -0.5F});
  torch::NoGradGuard no_grad;
  const auto out = model->forward(flat);
  EXPECT_TRUE(torch::allclose(out, model->forward(lifted), 1e-5, 1e-5));
  EXPECT_TRUE(torch::allclose(out, model->forward(turned), 1e-4, 1e-4));
}

struct Result {
  at::Tensor output;
  std::vector<at::Tensor> gradients;
};

Result run(Sgmp& model, const GeometricBatch& batch) {
  model->zero_grad();
  auto output = model->forward(batch);
  const auto weights =
      torch::linspace(-1.0, 2.0, output.numel(), output.options()).reshape(output.sizes());
  (output * weights).sum().backward();
  Result result{output.detach(), {}};
  for (const auto& parameter : model->parameters())
    result.gradients.push_back(parameter.grad().clone());
  return result;
}

TEST(SgmpEncoder, ChunkedEqualsUnchunkedWithAndWithoutCheckpointing) {
  torch::manual_seed(4);
  Sgmp whole(small_options());
  whole->to(torch::kDouble);
  const auto batch = random_batch(13, 3, at::kDouble);
  const Result expected = run(whole, batch);
  for (const std::int64_t chunk : {1, 5, 17, 64}) {
    for (const bool checkpointed : {false, true}) {
      auto options = small_options();
      options.max_paths_per_chunk = chunk;
      options.checkpoint_chunks = checkpointed;
      Sgmp chunked(options);
      chunked->to(torch::kDouble);
      copy_parameters(whole, chunked);
      const Result got = run(chunked, batch);
      EXPECT_TRUE(torch::allclose(got.output, expected.output, 1e-5, 1e-5))
          << "chunk " << chunk << " checkpointed " << checkpointed;
      ASSERT_EQ(got.gradients.size(), expected.gradients.size());
      for (std::size_t p = 0; p < got.gradients.size(); ++p) {
        EXPECT_TRUE(torch::allclose(got.gradients[p], expected.gradients[p], 1e-5, 1e-5))
            << "parameter " << p << " chunk " << chunk << " checkpointed " << checkpointed;
      }
    }
  }
}

// --- a per-path reference with plain loops --------------------------------------------------

using Vec = std::vector<double>;
using Point = std::array<double, 3>;

Vec linear(const torch::nn::Linear& layer, const Vec& in) {
  const auto w = layer->weight.accessor<double, 2>();
  const auto b = layer->bias.accessor<double, 1>();
  Vec out(static_cast<std::size_t>(w.size(0)));
  for (std::int64_t o = 0; o < w.size(0); ++o) {
    double sum = b[o];
    for (std::int64_t i = 0; i < w.size(1); ++i) sum += w[o][i] * in[static_cast<std::size_t>(i)];
    out[static_cast<std::size_t>(o)] = sum;
  }
  return out;
}

Vec relu(Vec v) {
  for (auto& x : v) x = std::max(x, 0.0);
  return v;
}

Vec mlp(const SgmpMlp& m, const Vec& in) {
  return linear(m->second(), relu(linear(m->first(), in)));
}

void append_gaussians(Vec& out, double x, const nn::GaussianBasis& basis) {
  const double width = (basis.stop - basis.start) / static_cast<double>(basis.centres - 1);
  for (std::int64_t c = 0; c < basis.centres; ++c) {
    const double z = (x - basis.start - static_cast<double>(c) * width) / width;
    out.push_back(std::exp(-0.5 * z * z));
  }
}

Point sub(const Point& a, const Point& b) { return {a[0] - b[0], a[1] - b[1], a[2] - b[2]}; }
double dot3(const Point& a, const Point& b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
Point cross3(const Point& a, const Point& b) {
  return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}
double norm3(const Point& a) { return std::sqrt(dot3(a, a)); }
double bend(const Point& a, const Point& b) { return std::atan2(norm3(cross3(a, b)), dot3(a, b)); }

// The dihedral as the angle from c to d about b, both projected onto the plane normal to b.
double turn(const Point& b, const Point& c, const Point& d) {
  const double bb = dot3(b, b);
  const auto project = [&](const Point& v) {
    const double s = dot3(v, b) / bb;
    return Point{v[0] - s * b[0], v[1] - s * b[1], v[2] - s * b[2]};
  };
  const Point u = project(c);
  const Point w = project(d);
  const double angle = std::atan2(dot3(b, cross3(u, w)) / std::sqrt(bb), dot3(u, w));
  return angle < 0 ? angle + 2 * std::numbers::pi : angle;
}

// The three smeared inputs of path (i, j, k, p); a degenerate path (one node) is all zeros.
std::array<Vec, 3> path_inputs(const std::vector<Point>& pos, const std::array<std::int64_t, 4>& q,
                               const SgmpBases& bases) {
  const auto at = [&pos](std::int64_t v) { return pos[static_cast<std::size_t>(v)]; };
  const Point b = sub(at(q[1]), at(q[0]));
  const Point c = sub(at(q[2]), at(q[1]));
  const Point d = sub(at(q[3]), at(q[1]));
  const bool degenerate = q[0] == q[1];
  std::array<Vec, 3> in;
  append_gaussians(in[0], norm3(b), bases.distance);
  append_gaussians(in[1], norm3(c), bases.distance);
  append_gaussians(in[1], degenerate ? 0.0 : bend(b, c), bases.angle);
  append_gaussians(in[2], norm3(d), bases.distance);
  append_gaussians(in[2], degenerate ? 0.0 : bend(b, d), bases.angle);
  append_gaussians(in[2], degenerate ? 0.0 : turn(b, c, d), bases.dihedral);
  return in;
}

// Every (i, j, k, p) along three chained edges, none a self-loop, four distinct nodes; then
// v -> v -> v -> v for every node.
std::vector<std::array<std::int64_t, 4>> loop_paths(const at::Tensor& edge_index,
                                                    std::int64_t nodes) {
  const auto e = edge_index.accessor<std::int64_t, 2>();
  std::vector<std::array<std::int64_t, 4>> paths;
  for (std::int64_t a = 0; a < e.size(1); ++a)
    for (std::int64_t m = 0; m < e.size(1); ++m)
      for (std::int64_t c = 0; c < e.size(1); ++c) {
        const std::array<std::int64_t, 4> q{e[0][a], e[1][a], e[1][m], e[1][c]};
        const bool chained = e[1][a] == e[0][m] && e[1][m] == e[0][c];
        const bool distinct = q[0] != q[1] && q[0] != q[2] && q[0] != q[3] && q[1] != q[2] &&
                              q[1] != q[3] && q[2] != q[3];
        if (chained && distinct) paths.push_back(q);
      }
  for (std::int64_t v = 0; v < nodes; ++v) paths.push_back({v, v, v, v});
  return paths;
}

Vec interaction_step(const SgmpInteraction& layer, const std::vector<Vec>& h,
                     const std::array<std::int64_t, 4>& q, const std::array<Vec, 3>& in) {
  Vec joined;
  for (const auto v : q)
    joined.insert(joined.end(), h[static_cast<std::size_t>(v)].begin(),
                  h[static_cast<std::size_t>(v)].end());
  for (std::size_t order = 1; order <= 3; ++order) {
    const Vec g = mlp(layer->encoding(order), in[order - 1]);
    joined.insert(joined.end(), g.begin(), g.end());
  }
  return linear(layer->combine(2),
                relu(linear(layer->combine(1), relu(linear(layer->combine(0), joined)))));
}

std::vector<Vec> reference_output(const Sgmp& model, const GeometricBatch& batch) {
  const std::int64_t n = batch.x.size(0);
  const auto x = batch.x.accessor<double, 2>();
  const auto p = batch.pos.accessor<double, 2>();
  std::vector<Point> pos;
  std::vector<Vec> h;
  for (std::int64_t v = 0; v < n; ++v) {
    pos.push_back({p[v][0], p[v][1], p[v][2]});
    h.push_back(mlp(model->embedding(), {x[v][0], x[v][1], x[v][2]}));
  }
  const auto paths = loop_paths(batch.edge_index, n);
  for (std::int64_t l = 0; l < model->options().interactions; ++l) {
    std::vector<Vec> next = h;
    for (const auto& q : paths) {
      const Vec message = interaction_step(model->interaction(static_cast<std::size_t>(l)), h, q,
                                           path_inputs(pos, q, model->bases()));
      auto& target = next[static_cast<std::size_t>(q[0])];
      for (std::size_t c = 0; c < message.size(); ++c) target[c] += message[c];
    }
    h = next;
  }
  std::vector<Vec> graphs(static_cast<std::size_t>(batch.num_graphs), Vec(h[0].size(), 0.0));
  const auto membership = batch.batch.accessor<std::int64_t, 1>();
  for (std::int64_t v = 0; v < n; ++v)
    for (std::size_t c = 0; c < h[0].size(); ++c)
      graphs[static_cast<std::size_t>(membership[v])][c] += h[static_cast<std::size_t>(v)][c];
  std::vector<Vec> out;
  for (const auto& g : graphs) out.push_back(mlp(model->head(), g));
  return out;
}

TEST(SgmpEncoder, EqualsAPerPathReferenceWrittenWithLoops) {
  auto options = small_options();
  options.hidden = 6;
  options.distance_centres = 7;
  options.angle_centres = 4;
  options.dihedral_centres = 5;
  options.max_paths_per_chunk = 9;
  torch::manual_seed(6);
  Sgmp model(options);
  model->to(torch::kDouble);
  const auto batch = random_batch(14, 2, at::kDouble);
  torch::NoGradGuard no_grad;
  const auto got = model->forward(batch);
  const auto expected = reference_output(model, batch);
  ASSERT_EQ(got.size(0), 2);
  for (std::int64_t g = 0; g < 2; ++g) {
    for (std::int64_t c = 0; c < options.outputs; ++c) {
      const double want = expected[static_cast<std::size_t>(g)][static_cast<std::size_t>(c)];
      EXPECT_NEAR(got[g][c].item<double>(), want, 1e-9 * (1.0 + std::abs(want))) << g << " " << c;
    }
  }
}

TEST(SgmpEncoder, EveryParameterGetsAGradient) {
  torch::manual_seed(7);
  Sgmp model(small_options());
  const auto batch = random_batch(15, 4);
  model->forward(batch).pow(2).sum().backward();
  std::size_t checked = 0;
  for (const auto& item : model->named_parameters()) {
    ASSERT_TRUE(item.value().grad().defined()) << item.key();
    EXPECT_GT(item.value().grad().abs().sum().item<double>(), 0.0) << item.key();
    ++checked;
  }
  // embedding 4, head 4, per interaction 3 MLPs (12) and 3 combine layers (6).
  EXPECT_EQ(checked, 8U + 2U * 18U);
}

TEST(SgmpEncoder, WeightsAreXavierUniformAndBiasesZero) {
  torch::manual_seed(10);
  Sgmp model(small_options());
  for (const auto& item : model->named_parameters()) {
    const auto& value = item.value();
    if (value.dim() == 1) {
      EXPECT_EQ(value.abs().max().item<float>(), 0.0F) << item.key();
      continue;
    }
    // U(-a, a) with a = sqrt(6 / (fan_in + fan_out)): every weight inside, the largest near a.
    const double bound = std::sqrt(6.0 / static_cast<double>(value.size(0) + value.size(1)));
    const double largest = value.abs().max().item<double>();
    EXPECT_LE(largest, bound + 1e-6) << item.key();
    EXPECT_GT(largest, 0.8 * bound) << item.key();
  }
}

TEST(SgmpEncoder, RefusesBadOptionsAndABatchWithoutPositions) {
  auto options = small_options();
  options.hidden = 1;
  EXPECT_THROW(Sgmp{options}, std::invalid_argument);
  options = small_options();
  options.max_paths_per_chunk = -1;
  EXPECT_THROW(Sgmp{options}, std::invalid_argument);
  Sgmp model(small_options());
  auto batch = random_batch(16, 2);
  batch.pos = at::Tensor();
  EXPECT_THROW(model->forward(batch), c10::Error);
  batch = random_batch(16, 2);
  batch.x = torch::randn({batch.x.size(0), 5});
  EXPECT_THROW(model->forward(batch), c10::Error);
}

// --- memory ------------------------------------------------------------------------------------

// One graph of 90 nodes, each linked both ways to 3 random others: ~15,000 paths.
GeometricBatch many_paths() {
  std::mt19937 rng(17);
  std::vector<std::int64_t> source, target;
  std::uniform_int_distribution<std::int64_t> node(0, 89);
  for (std::int64_t v = 0; v < 90; ++v)
    for (int k = 0; k < 3; ++k) {
      const auto u = node(rng);
      source.insert(source.end(), {v, u});
      target.insert(target.end(), {u, v});
    }
  torch::manual_seed(17);
  return {
      torch::randn({90, 3}), torch::randn({90, 3}) * 2,
      torch::stack({torch::tensor(source, torch::kInt64), torch::tensor(target, torch::kInt64)}),
      torch::zeros({90}, torch::kInt64), 1};
}

std::int64_t peak_step_bytes(Sgmp& model, const GeometricBatch& batch, bool train) {
  model->zero_grad();
  memory::reset_peak();
  const auto before = memory::cpu_tensor_memory().current_bytes;
  if (train) {
    model->forward(batch).sum().backward();
  } else {
    torch::NoGradGuard no_grad;
    model->forward(batch);
  }
  return memory::cpu_tensor_memory().peak_bytes - before;
}

TEST(SgmpEncoder, ChunksBoundThePathMemory) {
  memory::install_counting_cpu_allocator();
  const auto batch = many_paths();
  auto options = small_options();
  options.hidden = 32;
  torch::manual_seed(8);
  Sgmp whole(options);
  options.max_paths_per_chunk = 256;
  Sgmp chunked(options);
  options.checkpoint_chunks = true;
  Sgmp checkpointed(options);
  const auto inference_whole = peak_step_bytes(whole, batch, false);
  const auto inference_chunked = peak_step_bytes(chunked, batch, false);
  const auto training_whole = peak_step_bytes(whole, batch, true);
  const auto training_chunked = peak_step_bytes(chunked, batch, true);
  const auto training_checkpointed = peak_step_bytes(checkpointed, batch, true);
  std::cout << "peak bytes: inference " << inference_whole << " -> " << inference_chunked
            << ", training " << training_whole << " -> chunked " << training_chunked
            << " -> checkpointed " << training_checkpointed << "\n";
  // Per path a layer holds ~1 KB of gathered embeddings, encodings and combine activations:
  // ~15,000 paths are ~15 MB at once; a 256-path chunk ~0.3 MB.
  EXPECT_LT(inference_chunked, inference_whole / 8);
  EXPECT_LT(training_checkpointed, training_whole / 8);
  // Chunks without checkpointing keep every chunk's activations for backward: no bound.
  EXPECT_GT(training_chunked, training_whole / 2);
}

// --- learning -----------------------------------------------------------------------------------

TEST(SgmpEncoder, AdamStepsOnTwoClassesOfTreesLowerTheLoss) {
  testing::TempDir dir;
  synthetic::SyntheticTreeOptions trees;
  trees.trees = 40;
  trees.min_nodes = 8;
  trees.max_nodes = 12;
  trees.test_fraction = 0.0;
  trees.validation_fraction = 0.0;
  synthetic::generate_synthetic_trees(dir / "trees", trees);
  const auto store = store::GraphStore::open(dir / "trees");
  const auto graphs = loader::collate(store, store.train_ids());
  ASSERT_EQ(graphs.num_graphs, 40);
  const auto labels = graphs.y;
  ASSERT_GT(labels.sum().item<std::int64_t>(), 5);
  ASSERT_LT(labels.sum().item<std::int64_t>(), 35);
  const GeometricBatch batch{graphs.x, graphs.pos, graphs.edge_index, graphs.batch,
                             graphs.num_graphs};
  SgmpOptions options;
  options.in_features = graphs.x.size(1);
  options.hidden = 32;
  options.outputs = 2;
  options.interactions = 2;
  options.max_paths_per_chunk = 300;
  options.checkpoint_chunks = true;
  torch::manual_seed(9);
  Sgmp model(options);
  torch::optim::Adam adam(model->parameters(), torch::optim::AdamOptions(2e-3));
  std::vector<double> losses;
  for (int step = 0; step < 40; ++step) {
    adam.zero_grad();
    const auto loss = torch::nn::functional::cross_entropy(model->forward(batch), labels);
    loss.backward();
    adam.step();
    losses.push_back(loss.item<double>());
  }
  std::cout << "loss " << losses.front() << " -> " << losses.back() << "\n";
  EXPECT_TRUE(std::isfinite(losses.back()));
  EXPECT_LT(losses.back(), 0.5 * losses.front());
  EXPECT_LT(losses.back(), 0.45);  // below what guessing the larger class would give (~0.69)
}

}  // namespace
}  // namespace headroom::models
