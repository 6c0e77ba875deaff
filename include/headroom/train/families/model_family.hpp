// Model families: everything headroom knows about one kind of model, in one place. A family
// builds its model from the stage's options, names its checkpoint kind (its name), its default
// learning rate and undistilled loss, its static memory estimate, and — for a classifier — how
// evaluation scores a graph. The stages, checkpoints, `headroom plan` and evaluation ask the
// family instead of branching on the kind.
//
// Adding a kind: its module in models/, one family file in src/train/families/, and one line in
// src/train/families/registry.cpp. GAT and GCN are classifier families (curriculum, normal,
// evaluation); the VGAE is the autoencoder family (autoencoder stage, curriculum difficulty).
// Families are stateless singletons: thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "headroom/memory/peak_model.hpp"
#include "headroom/memory/peak_probe.hpp"
#include "headroom/models/graph_autoencoder.hpp"
#include "headroom/models/graph_classifier.hpp"
#include "headroom/models/model_config.hpp"
#include "headroom/models/model_inputs.hpp"
#include "headroom/store/graph_store.hpp"
#include "headroom/train/families/model_options.hpp"
#include "headroom/train/step/step_probe.hpp"

namespace headroom::train {

enum class FamilyRole { kClassifier, kAutoencoder };

class ModelFamily {
 public:
  virtual ~ModelFamily() = default;
  // "gat", "vgae", "gcn": the MODEL of --preset MODEL,SIZE and the kind stored in best.pt.
  virtual std::string_view name() const = 0;
  virtual FamilyRole role() const = 0;
  // The learning rate when --learning-rate is not given.
  virtual double default_learning_rate(models::ModelSize size) const = 0;
  // The model configuration a stage trains: the preset of config.model.size for the store's
  // `inputs` with the command-line overrides that apply to this kind. What best.pt stores.
  virtual nlohmann::json resolve_config(const ModelOptions& options,
                                        const models::ModelInputs& inputs) const = 0;
  // Whether resolve_config reads the ModelOptions override `option` ("hidden", "latent",
  // "gradient_checkpointing", ...: the field's name): a command refuses an override flag that the
  // family it trains would ignore.
  virtual bool reads_option(std::string_view option) const = 0;
  // A fresh module of `model_config` (parameters drawn from torch's global generator). Throws
  // std::invalid_argument for an invalid configuration.
  virtual std::shared_ptr<torch::nn::Module> build(const nlohmann::json& model_config) const = 0;
  // The undistilled training loss on a fresh module: what `headroom plan` measures and what a
  // stage without a teacher trains.
  virtual ProbeSubject plain_subject(const nlohmann::json& model_config) const = 0;
  // The parameters (weights and biases) a module of `model_config` has, counted from the
  // configuration without building it: stages check the model's training state against the
  // memory budget before they allocate it (stages/stage_preconditions.hpp). A double: an absurd
  // configuration gives a huge count, never an overflow.
  virtual double parameter_count(const nlohmann::json& model_config) const = 0;
  // The analytic peak estimate of one training step (headroom plan --mode static), or nullopt
  // when the family has none.
  virtual std::optional<memory::PeakFit> static_estimate(const nlohmann::json& model_config,
                                                         bool reduced_precision) const = 0;
};

// A family whose models map graphs to class logits: trained by the curriculum and normal stages,
// distilled through their logits, and evaluated by P(attack) = softmax(logits)[:, 1].
class ClassifierFamily : public ModelFamily {
 public:
  FamilyRole role() const final { return FamilyRole::kClassifier; }
  virtual models::GraphClassifier build_classifier(const nlohmann::json& model_config) const = 0;
  std::shared_ptr<torch::nn::Module> build(const nlohmann::json& model_config) const final {
    return build_classifier(model_config);
  }
  // Cross-entropy on the graph labels.
  ProbeSubject plain_subject(const nlohmann::json& model_config) const final;
};

// What an autoencoder gives of one batch, per node: its latent [nodes, latent width] and its
// reconstruction of the node features [nodes, reconstruction width]. What a distilled student
// matches (through a projection of its latent) and what the teacher output cache keeps.
struct AutoencoderEncoding {
  at::Tensor latent;
  at::Tensor reconstruction;
};

// One training pass of an autoencoder: its objective (a scalar, averaged per node) and, from the
// same forward pass, its encoding.
struct AutoencoderPass {
  at::Tensor loss;
  AutoencoderEncoding encoding;
};

// What fusion reads of an autoencoder on one batch (from one forward pass): the anomaly score per
// graph [graphs] and its error terms per node [nodes], float32. A term the family's model has no
// counterpart of is zeros.
struct AutoencoderEvidence {
  at::Tensor graph_score;
  at::Tensor feature_error;      // squared error of the reconstructed node features
  at::Tensor identity_error;     // cross-entropy of the node's predicted identity
  at::Tensor neighbour_error;    // error of the predicted neighbourhood
  at::Tensor latent_divergence;  // the latent's divergence from its prior (KL)
};

// A family whose models reconstruct graphs: trained on normal graphs by the autoencoder stage,
// distilled through their encoding, and scored per graph as anomaly detectors (the curriculum's
// difficulty, evaluation, fusion). The family runs the models it builds: each method takes a
// model that this family built (or loaded from its checkpoint).
class AutoencoderFamily : public ModelFamily {
 public:
  FamilyRole role() const final { return FamilyRole::kAutoencoder; }
  virtual models::GraphAutoencoder build_autoencoder(const nlohmann::json& model_config) const = 0;
  std::shared_ptr<torch::nn::Module> build(const nlohmann::json& model_config) const final {
    return build_autoencoder(model_config);
  }
  // The training objective on `batch`, with the encoding of the same forward pass.
  virtual AutoencoderPass training_pass(models::GraphAutoencoderImpl& model,
                                        const loader::GraphBatch& batch) const = 0;
  // The encoding alone (a teacher's, for distillation).
  virtual AutoencoderEncoding encode(models::GraphAutoencoderImpl& model,
                                     const loader::GraphBatch& batch) const = 0;
  // The anomaly score of each graph of the batch, float32 [graphs]: higher is more anomalous.
  virtual at::Tensor graph_scores(models::GraphAutoencoderImpl& model,
                                  const loader::GraphBatch& batch) const = 0;
  virtual AutoencoderEvidence evidence(models::GraphAutoencoderImpl& model,
                                       const loader::GraphBatch& batch) const = 0;
  // The widths of a model's encoding (its configuration's).
  virtual std::int64_t latent_width(const nlohmann::json& model_config) const = 0;
  virtual std::int64_t reconstruction_width(const nlohmann::json& model_config) const = 0;
  // training_pass's loss on a fresh module, averaged per node.
  ProbeSubject plain_subject(const nlohmann::json& model_config) const final;
};

// A model of a family, as probes, a peak fit's cache key and checkpoints identify it.
struct ModelSpec {
  std::string family;     // a registered family's name
  nlohmann::json config;  // its model configuration
};
// The preset of `family` at `size` for `store`'s inputs, without overrides: what the memory
// benchmarks and the planner's tests probe. Throws std::invalid_argument for an unknown family.
ModelSpec preset_model(const store::GraphStore& store, std::string_view family,
                       models::ModelSize size);

// The family named `name`; throws std::invalid_argument listing the known names.
const ModelFamily& model_family(std::string_view name);

// What `store`'s graphs give a model: identity classes and node features (store metadata).
models::ModelInputs model_inputs(const store::GraphStore& store);

// Throws std::runtime_error naming the checkpoint, the store and both shapes when the model saved
// in `checkpoint` (its configuration `model_config`) was trained on graphs of another kind than
// `store` holds: other node features or another identity (--node-features, --node-identity).
void require_store_inputs(const nlohmann::json& model_config, const store::GraphStore& store,
                          const std::filesystem::path& checkpoint);
// The same, and throws std::invalid_argument when it is not a classifier family.
const ClassifierFamily& classifier_family(std::string_view name);
// The same, and throws std::invalid_argument when it is not an autoencoder family.
const AutoencoderFamily& autoencoder_family(std::string_view name);
// Every registered family's name, in registration order.
std::vector<std::string_view> model_family_names();
// Those of the families of `role`, in registration order (what errors list as the choices).
std::vector<std::string_view> model_family_names(FamilyRole role);

// P(attack) of each graph of a batch from a classifier's logits [graphs, classes] (class 1 is the
// attack), float32 on the logits' device: what distillation and fusion take as the probability.
at::Tensor attack_probability(const at::Tensor& logits);

// log(P(attack) / P(not attack)) of each graph, float32 on the logits' device: the score that
// validation and evaluation rank, threshold and report for every classifier. P(attack) in float32
// rounds to exactly 1 once the attack logit leads by ~17, which a well-trained model reaches on
// many windows; the ranking among those windows, and every threshold above them, would be lost.
// Even odds (P = 0.5) is log-odds 0.
at::Tensor attack_log_odds(const at::Tensor& logits);
inline constexpr double kEvenOdds = 0.0;  // the log-odds of P(attack) = 0.5

}  // namespace headroom::train
