#include <gtest/gtest.h>
#include <torch/torch.h>

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "headroom/models/gat_with_jk.hpp"
#include "headroom/models/model_config.hpp"
#include "headroom/models/vgae.hpp"
#include "test_support.hpp"

namespace headroom::models {
namespace {

struct Graphs {
  at::Tensor x;
  at::Tensor edge_index;
  at::Tensor batch;
  std::int64_t num_graphs = 0;
};

// Graphs of the given sizes, each a bidirectional chain; features = ID index then 10 values.
Graphs make_graphs(const std::vector<std::int64_t>& sizes, std::int64_t num_ids) {
  std::vector<std::int64_t> sources;
  std::vector<std::int64_t> targets;
  std::vector<std::int64_t> batch;
  std::int64_t offset = 0;
  for (std::size_t g = 0; g < sizes.size(); ++g) {
    for (std::int64_t i = 0; i + 1 < sizes[g]; ++i) {
      sources.insert(sources.end(), {offset + i, offset + i + 1});
      targets.insert(targets.end(), {offset + i + 1, offset + i});
    }
    for (std::int64_t i = 0; i < sizes[g]; ++i) batch.push_back(static_cast<std::int64_t>(g));
    offset += sizes[g];
  }
  Graphs graphs;
  graphs.edge_index = torch::stack({torch::tensor(sources), torch::tensor(targets)});
  graphs.batch = torch::tensor(batch);
  graphs.num_graphs = static_cast<std::int64_t>(sizes.size());
  auto ids = torch::randint(0, num_ids, {offset, 1}).to(torch::kFloat);
  graphs.x = torch::cat({ids, torch::rand({offset, 10})}, 1);
  return graphs;
}

std::int64_t count_parameters(const torch::nn::Module& module) {
  std::int64_t total = 0;
  for (const auto& p : module.parameters()) total += p.numel();
  return total;
}

// GATConv(in -> heads x out, concatenated or averaged): projection, two attention vectors, bias.
std::int64_t gat_conv_parameters(std::int64_t in, std::int64_t out, std::int64_t heads,
                                 bool concat) {
  return in * heads * out + 2 * heads * out + (concat ? heads * out : out);
}
std::int64_t linear_parameters(std::int64_t in, std::int64_t out) { return in * out + out; }

std::int64_t expected_gat_parameters(const GatConfig& c) {
  std::int64_t total = c.num_ids * c.embedding_dim;
  std::int64_t in = c.embedding_dim + c.in_features - 1;
  for (std::int64_t i = 0; i < c.layers; ++i) {
    total += gat_conv_parameters(in, c.hidden, c.heads, true);
    in = c.hidden * c.heads;
  }
  const auto jk = c.layers * c.hidden * c.heads;
  total += (c.fc_layers - 1) * linear_parameters(jk, jk) + linear_parameters(jk, c.num_classes);
  return total;
}

// --- configuration ---------------------------------------------------------------------------

TEST(ModelConfigTest, PresetsHoldTheKdGatShapes) {
  auto teacher = gat_preset(ModelSize::kTeacher, 100);
  EXPECT_EQ(teacher.num_ids, 100);
  EXPECT_EQ(teacher.hidden, 48);
  EXPECT_EQ(teacher.layers, 3);
  EXPECT_EQ(teacher.heads, 8);
  EXPECT_EQ(teacher.embedding_dim, 16);
  EXPECT_EQ(teacher.fc_layers, 2);
  EXPECT_DOUBLE_EQ(teacher.dropout, 0.2);
  auto student = gat_preset(ModelSize::kStudent, 100);
  EXPECT_EQ(student.hidden, 24);
  EXPECT_EQ(student.layers, 2);
  EXPECT_EQ(student.heads, 4);
  EXPECT_EQ(student.embedding_dim, 8);
  EXPECT_EQ(student.fc_layers, 3);
  EXPECT_DOUBLE_EQ(student.dropout, 0.1);

  auto vt = vgae_preset(ModelSize::kTeacher, 100);
  EXPECT_EQ(vt.hidden, (std::vector<std::int64_t>{480, 240}));
  EXPECT_EQ(vt.layout, VgaeLayout::kKdGat);
  EXPECT_EQ(vt.decoder_heads, 4);
  EXPECT_EQ(vt.latent, 48);
  EXPECT_EQ(vt.heads, 4);
  EXPECT_EQ(vt.embedding_dim, 32);
  EXPECT_DOUBLE_EQ(vt.dropout, 0.15);
  auto vs = vgae_preset(ModelSize::kStudent, 100);
  EXPECT_EQ(vs.hidden, (std::vector<std::int64_t>{80, 40}));
  EXPECT_EQ(vs.decoder_heads, 4);  // upstream's decoder keeps its 4 heads in every preset
  EXPECT_EQ(vs.latent, 16);
  EXPECT_EQ(vs.heads, 1);
  EXPECT_EQ(vs.embedding_dim, 4);
  EXPECT_DOUBLE_EQ(vs.dropout, 0.1);
  EXPECT_EQ(vs.num_ids, 100);
}

// (Model kinds are the model families' registry: ModelFamilyRegistry.* in tests/train.)
TEST(ModelConfigTest, ParsesSizesAndNamesBadValues) {
  EXPECT_EQ(parse_model_size("teacher"), ModelSize::kTeacher);
  EXPECT_EQ(parse_model_size("student"), ModelSize::kStudent);
  EXPECT_EQ(to_string(ModelSize::kStudent), "student");
  try {
    parse_model_size("Teacher");
    FAIL() << "no exception";
  } catch (const std::invalid_argument& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("Teacher"), std::string::npos);
    EXPECT_NE(message.find("student"), std::string::npos);
  }
}

TEST(ModelConfigTest, JsonRoundTripKeepsEveryField) {
  GatConfig gat;
  gat.num_ids = 77;
  gat.in_features = 9;
  gat.embedding_dim = 5;
  gat.hidden = 7;
  gat.layers = 4;
  gat.heads = 3;
  gat.fc_layers = 5;
  gat.num_classes = 6;
  gat.dropout = 0.33;
  gat.gradient_checkpointing = false;
  nlohmann::json json = gat;
  EXPECT_EQ(json.size(), 10u);
  auto back = json.get<GatConfig>();
  EXPECT_EQ(back.num_ids, 77);
  EXPECT_EQ(back.in_features, 9);
  EXPECT_EQ(back.embedding_dim, 5);
  EXPECT_EQ(back.hidden, 7);
  EXPECT_EQ(back.layers, 4);
  EXPECT_EQ(back.heads, 3);
  EXPECT_EQ(back.fc_layers, 5);
  EXPECT_EQ(back.num_classes, 6);
  EXPECT_DOUBLE_EQ(back.dropout, 0.33);
  EXPECT_FALSE(back.gradient_checkpointing);

  VgaeConfig vgae;
  vgae.num_ids = 55;
  vgae.in_features = 8;
  vgae.embedding_dim = 3;
  vgae.hidden = {12, 6};
  vgae.latent = 5;
  vgae.heads = 3;
  vgae.dropout = 0.05;
  vgae.logvar_clamp = 7.5;
  vgae.gradient_checkpointing = false;
  vgae.decoder_heads = 2;
  vgae.layout = VgaeLayout::kMirrored;
  nlohmann::json vjson = vgae;
  EXPECT_EQ(vjson.size(), 11u);
  auto vback = nlohmann::json::parse(vjson.dump()).get<VgaeConfig>();
  EXPECT_EQ(vback.num_ids, 55);
  EXPECT_EQ(vback.in_features, 8);
  EXPECT_EQ(vback.embedding_dim, 3);
  EXPECT_EQ(vback.hidden, (std::vector<std::int64_t>{12, 6}));
  EXPECT_EQ(vback.latent, 5);
  EXPECT_EQ(vback.heads, 3);
  EXPECT_DOUBLE_EQ(vback.dropout, 0.05);
  EXPECT_DOUBLE_EQ(vback.logvar_clamp, 7.5);
  EXPECT_FALSE(vback.gradient_checkpointing);
  EXPECT_EQ(vback.decoder_heads, 2);
  EXPECT_EQ(vback.layout, VgaeLayout::kMirrored);

  // A checkpoint written before layouts existed holds headroom's first, mirrored VGAE, whose
  // decoder used the encoder's heads.
  auto old = vjson;
  old.erase("layout");
  old.erase("decoder_heads");
  EXPECT_EQ(old.get<VgaeConfig>().layout, VgaeLayout::kMirrored);
  EXPECT_EQ(old.get<VgaeConfig>().decoder_heads, 3);
  old["layout"] = "transformer";
  EXPECT_THROW(old.get<VgaeConfig>(), std::invalid_argument);

  vjson.erase("latent");
  EXPECT_THROW(vjson.get<VgaeConfig>(), nlohmann::json::exception);
}

// --- GATWithJK -------------------------------------------------------------------------------

TEST(GATWithJKTest, PresetParameterCountsFollowTheLayerFormulas) {
  for (auto size : {ModelSize::kTeacher, ModelSize::kStudent}) {
    auto config = gat_preset(size, 57);
    GATWithJK model(config);
    EXPECT_EQ(count_parameters(*model), expected_gat_parameters(config)) << to_string(size);
  }
  // The teacher by hand: embedding 57*16; GATConv 26 -> 8x48: 26*384 + 2*384 + 384; two more
  // 384 -> 8x48; head 1152 -> 1152 -> 2.
  const std::int64_t teacher = 57 * 16 + (26 * 384 + 3 * 384) + 2 * (384 * 384 + 3 * 384) +
                               (1152 * 1152 + 1152) + (1152 * 2 + 2);
  EXPECT_EQ(count_parameters(*GATWithJK(gat_preset(ModelSize::kTeacher, 57))), teacher);
}

TEST(GATWithJKTest, NamesEveryParameterStably) {
  GATWithJK model(gat_preset(ModelSize::kStudent, 20));
  auto named = model->named_parameters();
  for (const auto* name : {"id_embedding.weight", "convs.0.weight", "convs.0.att_src",
                           "convs.1.att_dst", "convs.1.bias", "head.0.weight", "head.6.bias"}) {
    EXPECT_TRUE(named.contains(name)) << name;
  }
}

TEST(GATWithJKTest, OutputShapeAndEvalDeterminism) {
  torch::manual_seed(31);
  auto config = gat_preset(ModelSize::kStudent, 20);
  GATWithJK model(config);
  auto graphs = make_graphs({4, 6, 3, 5}, 20);
  model->eval();
  auto a = model->forward(graphs.x, graphs.edge_index, graphs.batch, graphs.num_graphs);
  auto b = model->forward(graphs.x, graphs.edge_index, graphs.batch, graphs.num_graphs);
  EXPECT_EQ(a.sizes(), (std::vector<std::int64_t>{4, 2}));
  EXPECT_TRUE(torch::equal(a, b));
  model->train();
  auto c = model->forward(graphs.x, graphs.edge_index, graphs.batch, graphs.num_graphs);
  auto d = model->forward(graphs.x, graphs.edge_index, graphs.batch, graphs.num_graphs);
  EXPECT_FALSE(torch::equal(c, d));  // dropout is active in training mode
}

TEST(GATWithJKTest, SaveAndLoadReproduceTheOutputs) {
  testing::TempDir dir;
  auto config = gat_preset(ModelSize::kStudent, 20);
  auto graphs = make_graphs({4, 6}, 20);
  torch::manual_seed(32);
  GATWithJK saved(config);
  saved->eval();
  auto expected = saved->forward(graphs.x, graphs.edge_index, graphs.batch, graphs.num_graphs);
  torch::save(saved, (dir / "gat.pt").string());

  torch::manual_seed(33);
  GATWithJK loaded(config);
  loaded->eval();
  auto before = loaded->forward(graphs.x, graphs.edge_index, graphs.batch, graphs.num_graphs);
  EXPECT_FALSE(torch::equal(before, expected));
  torch::load(loaded, (dir / "gat.pt").string());
  auto actual = loaded->forward(graphs.x, graphs.edge_index, graphs.batch, graphs.num_graphs);
  EXPECT_TRUE(torch::equal(actual, expected));
}

TEST(GATWithJKTest, RejectsBadConfigurations) {
  auto config = gat_preset(ModelSize::kStudent, 0);
  EXPECT_THROW(GATWithJK{config}, std::invalid_argument);
  config = gat_preset(ModelSize::kStudent, 10);
  config.fc_layers = 0;
  EXPECT_THROW(GATWithJK{config}, std::invalid_argument);
}

// --- VGAE ------------------------------------------------------------------------------------

// Upstream's GraphAutoencoderNeighborhood with the same presets, counted with PyG's layers
// (GATConv: in x out + 3 x out over all heads; BatchNorm: 2 x width) at 2049 IDs: the teacher has
// 448,320 parameters and the student 85,908. headroom's first (mirrored) teacher had 559,296.
TEST(VGAETest, PresetParameterCountsEqualUpstreams) {
  EXPECT_EQ(count_parameters(*VGAE(vgae_preset(ModelSize::kTeacher, 2049))), 448320);
  EXPECT_EQ(count_parameters(*VGAE(vgae_preset(ModelSize::kStudent, 2049))), 85908);
  auto mirrored = vgae_preset(ModelSize::kTeacher, 2049);
  mirrored.layout = VgaeLayout::kMirrored;
  mirrored.hidden = {480, 240, 48};
  EXPECT_EQ(count_parameters(*VGAE(mirrored)), 559296);
}

TEST(VGAETest, StudentLayersByHand) {
  // Embedding 57x4; encoder 14 -> 80 (1 head) -> 40 (1 head) with BatchNorm; mu/logvar 40 -> 16;
  // decoder 16 -> 4x10 with BatchNorm, then 40 -> 10; classifier 16 -> 57; neighbour decoder
  // 16 -> 16 -> 16 -> 57.
  auto conv = [](std::int64_t in, std::int64_t out) { return in * out + 3 * out; };
  const std::int64_t student = 57 * 4 + conv(14, 80) + 160 + conv(80, 40) + 80 +
                               2 * (40 * 16 + 16) + conv(16, 40) + 80 + conv(40, 10) +
                               (16 * 57 + 57) + 2 * (16 * 16 + 16) + (16 * 57 + 57);
  VGAE model(vgae_preset(ModelSize::kStudent, 57));
  EXPECT_EQ(count_parameters(*model), student);
  // Only the first encoder layer has the preset's heads; the decoder block has 4.
  const auto parameters = model->named_parameters();
  EXPECT_EQ(parameters["decoder.0.att_src"].numel(), 40);
  EXPECT_EQ(parameters["decoder.0.att_src"].size(1), 4);
  EXPECT_EQ(parameters["encoder.1.att_src"].size(1), 1);
}

TEST(VGAETest, OutputShapesRangesAndEvalDeterminism) {
  torch::manual_seed(41);
  auto config = vgae_preset(ModelSize::kStudent, 20);
  VGAE model(config);
  auto graphs = make_graphs({5, 7}, 20);
  const std::int64_t nodes = 12;
  auto out = model->forward(graphs.x, graphs.edge_index);
  EXPECT_EQ(out.reconstruction.sizes(), (std::vector<std::int64_t>{nodes, 10}));
  EXPECT_EQ(out.id_logits.sizes(), (std::vector<std::int64_t>{nodes, 20}));
  EXPECT_EQ(out.neighbour_logits.sizes(), (std::vector<std::int64_t>{nodes, 20}));
  EXPECT_EQ(out.mu.sizes(), (std::vector<std::int64_t>{nodes, 16}));
  EXPECT_EQ(out.logvar.sizes(), (std::vector<std::int64_t>{nodes, 16}));
  EXPECT_EQ(out.z.sizes(), (std::vector<std::int64_t>{nodes, 16}));
  EXPECT_GT(out.reconstruction.min().item<double>(), 0.0);
  EXPECT_LT(out.reconstruction.max().item<double>(), 1.0);
  EXPECT_FALSE(torch::equal(out.z, out.mu));  // sampled in training mode

  model->eval();
  auto a = model->forward(graphs.x, graphs.edge_index);
  auto b = model->forward(graphs.x, graphs.edge_index);
  EXPECT_TRUE(torch::equal(a.z, a.mu));
  EXPECT_TRUE(torch::equal(a.reconstruction, b.reconstruction));
  EXPECT_TRUE(torch::equal(a.id_logits, b.id_logits));
  EXPECT_TRUE(torch::equal(a.neighbour_logits, b.neighbour_logits));
}

TEST(VGAETest, LogvarIsClamped) {
  torch::manual_seed(42);
  auto config = vgae_preset(ModelSize::kStudent, 20);
  config.logvar_clamp = 3.0;
  VGAE model(config);
  auto graphs = make_graphs({6}, 20);
  model->eval();
  auto bias = model->named_parameters()["logvar.bias"];
  for (double shift : {100.0, -100.0}) {
    {
      torch::NoGradGuard no_grad;
      bias.fill_(shift);
    }
    auto out = model->forward(graphs.x, graphs.edge_index);
    const double bound = shift > 0 ? 3.0 : -3.0;
    EXPECT_TRUE(torch::all(out.logvar == bound).item<bool>()) << shift;
  }
}

TEST(VGAETest, SaveAndLoadReproduceTheOutputsIncludingBatchNormStatistics) {
  testing::TempDir dir;
  auto config = vgae_preset(ModelSize::kStudent, 20);
  auto graphs = make_graphs({5, 4}, 20);
  torch::manual_seed(43);
  VGAE saved(config);
  saved->forward(graphs.x, graphs.edge_index);  // moves the running statistics off their defaults
  saved->eval();
  auto expected = saved->forward(graphs.x, graphs.edge_index);
  torch::save(saved, (dir / "vgae.pt").string());

  torch::manual_seed(44);
  VGAE loaded(config);
  loaded->eval();
  torch::load(loaded, (dir / "vgae.pt").string());
  auto actual = loaded->forward(graphs.x, graphs.edge_index);
  EXPECT_TRUE(torch::equal(actual.reconstruction, expected.reconstruction));
  EXPECT_TRUE(torch::equal(actual.mu, expected.mu));
  EXPECT_TRUE(torch::equal(actual.id_logits, expected.id_logits));
  EXPECT_TRUE(torch::equal(actual.neighbour_logits, expected.neighbour_logits));
  EXPECT_TRUE(torch::equal(loaded->named_buffers()["encoder_norms.0.running_mean"],
                           saved->named_buffers()["encoder_norms.0.running_mean"]));
}

TEST(VGAETest, HiddenWidthsMustBeDivisibleByHeads) {
  auto config = vgae_preset(ModelSize::kTeacher, 20);
  config.hidden = {482, 240};  // the first layer's 4 heads do not divide 482
  try {
    VGAE model(config);
    FAIL() << "no exception";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("482"), std::string::npos);
  }
  config.hidden = {480, 242};  // nor do the decoder's 4 heads divide 242
  EXPECT_THROW(VGAE{config}, std::invalid_argument);
}

}  // namespace
}  // namespace headroom::models
