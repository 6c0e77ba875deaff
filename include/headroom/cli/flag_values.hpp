// Checks every flag of a kind gets alike, whatever command it belongs to, installed once on the
// finished app rather than flag by flag, so that a flag added later is covered too.
//
// Whole numbers: CLI11 2.1 reads an integer flag with strtoull/strtoll in base 0, so "010" was 8
// and "0x10" 16, a value past 2^64 - 1 became 2^64 - 1 without a word, and "2e4" was either "not
// in range" or "Could not convert", depending on the flag. Every INT and UINT flag now takes
// decimal digits only, and says "FLAG: '2e4' is not a whole number" or names the range of its own
// type ("--window: '5000000000' is out of range: a whole number from 0 to 4294967295", where
// CLI11 said "Could not convert" for a value past a 32-bit type). A FLOAT or BOOLEAN flag given
// what does not convert says "FLAG: 'abc' is not a number" or "is not true or false".
//
// Lists: CLI11 drops the empty entries of a comma-separated value before any check sees them:
// `--models ,` left the flag without a value, so it took the next arguments (`--threads 1`) as
// its entries and the error blamed --threads; `--exclude a,,b` silently meant `a,b`. The
// arguments are checked before CLI11 parses them instead.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace headroom::cli {

// Puts the whole-number check first on every INT and UINT option (and list of them) of `app` and
// its subcommands, makes a value past the option's own type name that type's range, and refuses an
// empty value of a required TEXT option or one with a default
// (`--out ''` named nothing: "cannot make absolute path: Invalid argument []"). Idempotent: an
// option already checked is left as it is.
void check_flag_values(CLI::App& app);

// Why `text` is not a whole number an INT (`is_signed`) or UINT flag takes, or nullopt when it is;
// `text` is rewritten without surrounding blanks, a '+' and leading zeros (so "010" is ten).
std::optional<std::string> whole_number_problem(std::string& text, bool is_signed);

// "'TEXT' is out of range: a whole number from MIN to MAX", as every integer flag says it.
std::string out_of_range_problem(std::string_view text, std::int64_t min, std::uint64_t max);

// Why one value of a comma-separated list flag has a blank entry ("a,,b", ",", "a, ", " "), or
// nullopt. An empty value is no list but the flag's "none" (`--exclude ""`), and passes.
std::optional<std::string> blank_list_entry_problem(std::string_view value);

// Throws CLI::ValidationError naming the flag when an argument given to a comma-separated list
// flag of the chosen subcommand (`--models ,`, `--exclude=a,,b`) holds a blank entry. `args` are
// the command line without the program name.
void refuse_blank_list_entries(const CLI::App& app, const std::vector<std::string>& args);

}  // namespace headroom::cli
