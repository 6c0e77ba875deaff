// How a command-line parse error reaches the user. CLI11's messages quote what was typed
// ("Could not convert: --threads = ..."), and what was typed may hold control bytes or be
// megabytes long: the message is printed through util::printable (escaped and bounded), as every
// other error that quotes input is. --help and --version, which CLI11 signals as parse errors with
// exit code 0, print as CLI11 prints them. Both binaries' main() end here. Thread-safe (writes to
// std::cerr / std::cout only).
#pragma once

#include <CLI/CLI.hpp>
#include <string_view>

namespace headroom::cli {

// Prints `error` for `app` and returns the process exit code to use.
int report_parse_error(const CLI::App& app, const CLI::ParseError& error);

// Prints a command's error as "headroom: error: MESSAGE" on one line and returns 1. The message
// goes through util::printable as a whole (bounded generously): whatever a thrower forgot to
// escape, no control byte of it reaches the terminal. A MESSAGE that starts "headroom: " loses
// it: the prefix is printed once.
int report_error(std::string_view message);

}  // namespace headroom::cli
