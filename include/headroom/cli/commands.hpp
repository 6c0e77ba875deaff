// The data-side `headroom` subcommands (no tensor library): each add_*_command registers one
// subcommand and its callback on the root app; callbacks report failure by throwing (main prints
// the one-line message, exits 1). The training-side subcommands live in train_cli/ and run in the
// `headroom-train` binary; this header only names them, so that `headroom` can list them in its
// help and hand them over.
#pragma once

#include <array>
#include <string_view>

namespace CLI {
class App;
}

namespace headroom::cli {

// Both binaries' root app settings (name, --version, --config TOML sections, one subcommand
// required) with the data-side subcommands registered on it.
void configure_app_with_data_commands(CLI::App& app);

void add_generate_command(CLI::App& app);
// `headroom generate-trees --out STORE` (synthetic/synthetic_trees.hpp).
void add_generate_trees_command(CLI::App& app);
void add_preprocess_command(CLI::App& app);
void add_inspect_command(CLI::App& app);
// `headroom import-graphs TABLES --out STORE` (graph_tables/import_graph_tables.hpp).
void add_import_graphs_command(CLI::App& app);
// `headroom import-qm9 MOLECULES --out STORE` (graph_tables/import_qm9.hpp).
void add_import_qm9_command(CLI::App& app);
// `headroom report RUN_DIR [--out FILE]` (report/html_report.hpp).
void add_report_command(CLI::App& app);

// The subcommands that need LibTorch, with their one-line help (the same text train_cli gives
// them). `headroom NAME ...` re-executes as `headroom-train NAME ...`.
struct TrainingCommandName {
  std::string_view name;
  std::string_view summary;
};
inline constexpr std::array<TrainingCommandName, 8> kTrainingCommands{{
    {"run", "Run the pipeline on a dataset (default: the embedded synthetic one)"},
    {"autoencoder", "Train the VGAE on normal graphs (stage 1)"},
    {"curriculum", "Train the GAT classifier with the VGAE-guided curriculum (stage 2)"},
    {"normal", "Train the GAT classifier on all training graphs (supervised)"},
    {"fusion", "Learn to fuse a classifier's and a VGAE's scores per graph (DQN or logistic)"},
    {"evaluation", "Evaluate trained models per split and attack type"},
    {"geometric", "Train SGMP on a geometric store (trees: classes; QM9: its target)"},
    {"plan", "Measure a model's training-step memory and print the budget breakdown"},
}};

// The one-line help of training command `name` (empty for a name not in the list).
constexpr std::string_view training_command_summary(std::string_view name) {
  for (const auto& command : kTrainingCommands)
    if (command.name == name) return command.summary;
  return {};
}

}  // namespace headroom::cli
