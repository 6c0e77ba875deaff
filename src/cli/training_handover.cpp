#include "headroom/cli/training_handover.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

#include "headroom/cli/commands.hpp"

namespace headroom::cli {

std::string_view training_command_in(int argc, const char* const* argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--config") {
      ++i;  // its value
      continue;
    }
    if (arg.empty() || arg.front() == '-') continue;
    for (const auto& command : kTrainingCommands)
      if (command.name == arg) return command.name;
    return {};  // the first positional argument is the subcommand: a data-side one
  }
  return {};
}

std::filesystem::path training_binary() {
  if (const char* configured = std::getenv("HEADROOM_TRAIN_BINARY");
      configured != nullptr && *configured != '\0')
    return configured;
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec)
    throw std::runtime_error("cannot locate this executable (/proc/self/exe): " + ec.message());
  return self.parent_path() / "headroom-train";
}

void exec_training_binary(int /*argc*/, char** argv) {
  const auto binary = training_binary();
  ::execv(binary.c_str(), argv);
  const int error = errno;
  throw std::runtime_error(binary.string() + ": cannot start the training binary (" +
                           std::strerror(error) +
                           "); build it with scripts/build.sh, or set HEADROOM_TRAIN_BINARY");
}

}  // namespace headroom::cli
