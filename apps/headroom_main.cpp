// headroom: trains GNNs on CAN-bus intrusion data inside a memory budget. This binary is the data
// side (generate, preprocess, inspect) and does not link LibTorch, so those commands start in
// milliseconds; the subcommands that train, plan or evaluate are handed to `headroom-train`
// (cli/training_handover.hpp). Subcommands live in src/cli/; this file only assembles them and
// turns exceptions into one-line errors.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "headroom/cli/commands.hpp"
#include "headroom/cli/flag_values.hpp"
#include "headroom/cli/parse_errors.hpp"
#include "headroom/cli/training_handover.hpp"

int main(int argc, char** argv) {
  try {
    if (!headroom::cli::training_command_in(argc, argv).empty())
      headroom::cli::exec_training_binary(argc, argv);
  } catch (const std::exception& e) {
    return headroom::cli::report_error(e.what());
  }
  CLI::App app{"headroom: memory-planned GNN training for CAN-bus intrusion detection"};
  headroom::cli::configure_app_with_data_commands(app);
  // Listed for --help; never parsed here (handed over above).
  for (const auto& command : headroom::cli::kTrainingCommands)
    app.add_subcommand(std::string(command.name), std::string(command.summary));
  try {
    headroom::cli::refuse_blank_list_entries(
        app, std::vector<std::string>(argv + std::min(argc, 1), argv + argc));
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return headroom::cli::report_parse_error(app, e);
  } catch (const std::exception& e) {
    return headroom::cli::report_error(e.what());
  }
  return 0;
}
