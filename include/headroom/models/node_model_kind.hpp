// The node model registry: everything headroom knows about one node-classification model, in one
// place — its name, its defaults (learning rate included) and the command-line overrides it reads,
// how it validates a configuration, its parameter count, what its memory plan must know, and how to
// build it. Stage `node`, `plan`, `run --node-model` and checkpoints ask the kind instead of
// branching on the architecture.
//
// Adding a node model: its module (models/node_NAME.hpp, src/models/node_NAME.cpp, which also
// defines its kind), and one line in src/models/node_model_registry.cpp. A sibling of the graph
// model families (train/families/model_family.hpp), not one of their roles: a family resolves a
// configuration from a graph store's inputs and builds a graph classifier or autoencoder, a node
// model from one graph's node and class counts; the two share no method but the name.
// Kinds are stateless singletons: thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "headroom/models/node_model.hpp"

namespace headroom::models {

// What the command line sets of a node model (--hidden, --heads, --layers, --dropout); unset:
// the kind's default.
struct NodeModelOverrides {
  std::optional<std::int64_t> hidden;
  std::optional<std::int64_t> heads;
  std::optional<std::int64_t> layers;
  std::optional<double> dropout;
};

class NodeModelKind {
 public:
  virtual ~NodeModelKind() = default;
  // "gcn": --node-model and plan's --preset, and NodeModelConfig::architecture in checkpoints.
  virtual std::string_view name() const = 0;
  // What --help says of it: "TextGCN's", "8 heads × 8 channels".
  virtual std::string_view summary() const = 0;
  // Adam's learning rate when --learning-rate is not given.
  virtual double default_learning_rate() const = 0;
  // Whether configure reads the override `option` ("hidden", "heads", "layers", "dropout"): a
  // command refuses an override that the model it trains would ignore.
  virtual bool reads_option(std::string_view option) const = 0;
  // The configuration it trains on a graph of `num_nodes` nodes and `num_classes` classes: its
  // defaults with the overrides it reads (others are not looked at). Not validated.
  virtual NodeModelConfig configure(std::int64_t num_nodes, std::int64_t num_classes,
                                    const NodeModelOverrides& given) const = 0;
  // Throws std::invalid_argument for what this model cannot be (NodeModelConfig::validate has
  // checked the sizes and the dropout already).
  virtual void validate(const NodeModelConfig& config) const = 0;
  // Float32 parameters of a module of `config`, counted without building it.
  virtual std::int64_t parameter_count(const NodeModelConfig& config) const = 0;
  // Whether a step's (and an inference block's) bytes grow with the adjacency entries it reads,
  // not only with its rows: the GAT's attention graph and values do, the GCN's products read Â
  // in place. Sampled inference caps a block's entries only for a model whose cost grows with
  // them.
  virtual bool cost_grows_with_entries() const = 0;
  // Its shape in words, for logs and `plan`: "GAT (8 heads × 8 channels, dropout 0.5)".
  virtual std::string describe(const NodeModelConfig& config) const = 0;
  // A fresh module of `config` (validated), its weights drawn from torch's default generator.
  virtual NodeModel build(const NodeModelConfig& config) const = 0;
};

// The kind named `name`; throws std::invalid_argument listing the known names.
const NodeModelKind& node_model_kind(std::string_view name);
// Every registered node model's name, in registration order (the default, "gcn", first).
std::vector<std::string_view> node_model_names();

}  // namespace headroom::models
