// How the light `headroom` binary hands training subcommands to `headroom-train`. The data side
// (generate, preprocess, inspect, --version, --help) never loads LibTorch; a command that trains,
// plans or evaluates replaces the process with the training binary on the same arguments, so the
// user sees one `headroom` command. Stateless; call from main() before anything else runs.
#pragma once

#include <filesystem>
#include <string_view>

namespace headroom::cli {

// The training subcommand that `argv` names (its first argument that is not an option or the
// value of --config), or an empty view when it names a data-side one, or none.
std::string_view training_command_in(int argc, const char* const* argv);

// The training binary: $HEADROOM_TRAIN_BINARY when set, else `headroom-train` beside this
// executable (/proc/self/exe).
std::filesystem::path training_binary();

// Replaces this process with training_binary() on the same arguments (argv[0] kept). Returns
// only on failure, by throwing std::runtime_error naming the binary and the reason.
[[noreturn]] void exec_training_binary(int argc, char** argv);

}  // namespace headroom::cli
