// The headroom-train command line as a value, for the binary and for callers inside a process (the
// Python module's stage functions): one definition of every subcommand and flag, so that a
// keyword argument is named, parsed and validated exactly as the flag is.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace CLI {
class App;
}

namespace headroom::cli {

// Registers every subcommand, data side and training side, on `app` (headroom-train's app).
void configure_training_app(CLI::App& app);

// headroom-train's main: sets up the memory meter and the allocators, parses `argv` and runs the
// subcommand; errors are printed as one line on stderr. Returns the exit status. Call once per
// process, before any tensor exists (the Python module runs it in a child process).
int run_training_app(int argc, const char* const* argv);

// Parses `args` (a subcommand and its arguments, e.g. {"normal", "--store", "stores/x"}) as
// headroom-train does, without running anything. Throws CLI::ParseError whose message names the
// flag and the reason (an unknown flag, a value out of range, a missing required flag).
void check_training_arguments(const std::vector<std::string>& args);

// One long flag of a subcommand, as the Python stage functions map keyword arguments onto it.
struct CommandFlag {
  std::string name;         // without dashes: "max-epochs"
  bool takes_value = true;  // false: a flag given or not (--force)
  bool repeats = false;     // takes several values (--models a b)
  std::string description;
};

// The long flags of `command`, in the order its --help lists them. Throws std::invalid_argument
// for a name that is not a subcommand.
std::vector<CommandFlag> training_command_flags(std::string_view command);

// Where a stage command (args[0]: autoencoder, curriculum, normal, fusion or evaluation) writes its
// run: the arguments parsed and the configuration resolved exactly as the command does before it
// trains (so every check that comes before training runs here too); nothing is run or written.
// Throws CLI::ParseError, and std::invalid_argument for a configuration the command refuses.
std::filesystem::path stage_run_directory(const std::vector<std::string>& args);

// Where `headroom run` with `args` ({"run", DATASET, flags...}) writes its run manifest
// (report/run_manifest.hpp): {runs dir}/{dataset name}/run_manifest.json, resolved as the command
// resolves it; nothing is run or written (the synthetic default is not generated). Throws
// CLI::ParseError for arguments the command refuses.
std::filesystem::path run_manifest_path(const std::vector<std::string>& args);

}  // namespace headroom::cli
