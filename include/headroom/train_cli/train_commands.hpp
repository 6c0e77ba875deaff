// The training-side subcommands (they load LibTorch): registered on the `headroom-train` app
// beside the data-side ones (cli/commands.hpp). Their names and one-line help are listed in
// cli::kTrainingCommands, which the light `headroom` binary uses to hand them over.
#pragma once

namespace CLI {
class App;
}

namespace headroom::cli {

void add_run_command(CLI::App& app);
// autoencoder, curriculum, normal, evaluation
void add_training_commands(CLI::App& app);
void add_plan_command(CLI::App& app);

}  // namespace headroom::cli
