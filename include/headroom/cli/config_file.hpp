// `--config FILE`: every subcommand's flags from a TOML file, read strictly. A file that is not
// TOML, a section or key that names nothing, a value of the wrong kind, or a file with no section
// for the command being run is an error naming the file, the line and the key, never a run with
// defaults. docs/configuration.md describes the file.
#pragma once

#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>

namespace CLI {
class App;
}

namespace headroom::cli {

// What is wrong with a config file. The message is "FILE:LINE: [SECTION] 'KEY': REASON" (the
// line, section and key where known), with the quoted input escaped and bounded
// (util/printable_text.hpp).
class ConfigFileError : public std::runtime_error {
 public:
  // `line` is 1-based, 0 for the file as a whole; `section` and `key` may be empty.
  ConfigFileError(const std::filesystem::path& file, std::uint64_t line, const std::string& section,
                  const std::string& key, const std::string& reason);

  std::uint64_t line() const noexcept { return line_; }
  const std::string& key() const noexcept { return key_; }

 private:
  std::uint64_t line_;
  std::string key_;  // as printed (escaped)
};

// Adds `--config FILE` to the root `app`, whose subcommands must all be registered before parse().
// At parse time, after the command line, the file is read as TOML (1.0) and:
//  - every top-level table must name a subcommand of `app` (keys outside a table are refused);
//  - the table of the subcommand being run must exist (an empty file, or one written for another
//    command, is refused rather than ignored);
//  - each of its keys must be a flag of that subcommand, without the leading dashes; a misspelt
//    key is refused with the nearest valid one suggested;
//  - a value must fit its flag: true/false for switches, one value unless the flag takes a list,
//    and what the flag's own parsing and checks accept;
// and its values are applied where the command line left a flag unset (the command line wins).
// Tables of other subcommands are only checked for their names: a file may serve several commands.
// A ConfigFileError propagates out of app.parse(); a missing file is CLI11's FileError.
void add_config_file_option(CLI::App& app);

}  // namespace headroom::cli
