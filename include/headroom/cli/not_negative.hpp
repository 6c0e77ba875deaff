// The check of every unsigned count and seed flag. CLI11 2.1 reads "-1" into an unsigned option as
// 2^64 - 1 (strtoull wraps it), so `--seed -1` became 18446744073709551615; this check refuses a
// negative value first. A --config value goes through the same option, so a config file and the
// command line refuse it alike.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "headroom/util/printable_text.hpp"

namespace headroom::cli {

inline CLI::Validator not_negative() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        const auto first = text.find_first_not_of(" \t");
        if (first == std::string::npos || text[first] != '-') return {};
        return "must be a whole number, 0 or more, not " + util::printable(text);
      },
      "NONNEGATIVE");
}

}  // namespace headroom::cli
