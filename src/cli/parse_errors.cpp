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

}  // namespace headroom::cli
