// The `headroom` subcommands. Each add_*_command registers one subcommand and its callback on the
// root app; callbacks report failure by throwing (main prints the one-line message, exits 1).
#pragma once

namespace CLI {
class App;
}

namespace headroom::cli {

void add_generate_command(CLI::App& app);
void add_preprocess_command(CLI::App& app);
void add_inspect_command(CLI::App& app);
void add_run_command(CLI::App& app);
// autoencoder, curriculum, normal, evaluation
void add_training_commands(CLI::App& app);
void add_plan_command(CLI::App& app);

}  // namespace headroom::cli
