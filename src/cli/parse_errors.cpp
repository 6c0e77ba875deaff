#include "headroom/cli/parse_errors.hpp"

#include <iostream>

#include "headroom/util/printable_text.hpp"

namespace headroom::cli {

int report_parse_error(const CLI::App& app, const CLI::ParseError& error) {
  if (error.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(error);
  std::cerr << "headroom: error: " << util::printable(error.what())
            << "\nRun with --help for more information.\n";
  return error.get_exit_code();
}

int report_error(std::string_view message) {
  // Long enough for any message headroom writes (each input it quotes is bounded on its own).
  constexpr std::size_t kMaxErrorBytes = 8192;
  // A message that names headroom itself (a library error also met outside the CLI, such as
  // LibTorch's out-of-memory error from the counting allocator) is not prefixed twice.
  constexpr std::string_view kProgramPrefix = "headroom: ";
  if (message.starts_with(kProgramPrefix)) message.remove_prefix(kProgramPrefix.size());
  std::cerr << "headroom: error: " << util::printable(message, kMaxErrorBytes) << '\n';
  return 1;
}

}  // namespace headroom::cli
