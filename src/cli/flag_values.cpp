#include "headroom/cli/flag_values.hpp"

#include <fmt/format.h>
#include <cstdint>
#include <limits>

#include "headroom/util/printable_text.hpp"

namespace headroom::cli {
namespace {

constexpr const char* kWholeNumberCheck = "whole-number";
constexpr const char* kNotEmptyCheck = "not-empty";

bool is_blank(char c) { return c == ' ' || c == '\t'; }

std::string_view trimmed(std::string_view text) {
  while (!text.empty() && is_blank(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_blank(text.back())) text.remove_suffix(1);
  return text;
}

// Whether `digits` (decimal, no leading zeros) is above `limit` (also decimal digits).
bool above(std::string_view digits, std::string_view limit) {
  if (digits.size() != limit.size()) return digits.size() > limit.size();
  return digits > limit;
}

// "INT", "UINT", ...: the option's type without its checks ("UINT:NONNEGATIVE").
std::string base_type(const CLI::Option& option) {
  const std::string type = option.get_type_name();
  return type.substr(0, type.find(':'));
}

bool has_check(CLI::Option& option, const char* name) {
  try {
    option.get_validator(name);
    return true;
  } catch (const CLI::OptionNotFound&) {
    return false;
  }
}

// A required TEXT option (--out, --store, DATASET_DIR), or one with a default (--runs-dir runs),
// given "" named nothing: "filesystem error: cannot make absolute path: Invalid argument []", or
// the current directory. An empty list value keeps its meaning (`--exclude ""`).
bool takes_no_empty_value(const CLI::Option& option) {
  return base_type(option) == "TEXT" && option.get_items_expected_max() == 1 &&
         (option.get_required() || !option.get_default_str().empty());
}

void check_flag_values_in(CLI::App& command) {
  for (CLI::Option* option : command.get_options()) {
    if (option->get_expected_min() == 0) continue;  // a switch: true/false, not a number
    if (takes_no_empty_value(*option) && !has_check(*option, kNotEmptyCheck))
      option->transform(CLI::Validator(
                            [](std::string& text) -> std::string {
                              if (!trimmed(text).empty()) return {};
                              return "an empty value names nothing; give one (see --help)";
                            },
                            ""),
                        kNotEmptyCheck);
    const std::string type = base_type(*option);
    if ((type != "INT" && type != "UINT") || has_check(*option, kWholeNumberCheck)) continue;
    const bool is_signed = type == "INT";
    // No description: the help keeps showing the type as it was.
    option->transform(CLI::Validator(
                          [is_signed](std::string& text) -> std::string {
                            return whole_number_problem(text, is_signed).value_or("");
                          },
                          ""),
                      kWholeNumberCheck);
  }
  for (CLI::App* subcommand : command.get_subcommands({})) check_flag_values_in(*subcommand);
}

// The subcommand `args` choose: the first argument that names one of `app`'s.
const CLI::App* chosen_subcommand(const CLI::App& app, const std::vector<std::string>& args) {
  for (const auto& arg : args) {
    if (arg.starts_with("-")) continue;
    for (const CLI::App* subcommand : app.get_subcommands({}))
      if (subcommand->check_name(arg)) return subcommand;
  }
  return nullptr;
}

}  // namespace

std::optional<std::string> whole_number_problem(std::string& text, bool is_signed) {
  std::string_view number = trimmed(text);
  const bool negative = !number.empty() && number.front() == '-';
  if (!number.empty() && (negative || number.front() == '+')) number.remove_prefix(1);
  const bool digits_only =
      !number.empty() && number.find_first_not_of("0123456789") == std::string_view::npos;
  if (!digits_only)
    return fmt::format("'{}' is not a whole number (decimal digits, such as 42)",
                       util::printable(text));
  if (negative && !is_signed)
    return fmt::format("must be a whole number, 0 or more, not '{}'", util::printable(text));
  while (number.size() > 1 && number.front() == '0') number.remove_prefix(1);
  const std::string limit =
      is_signed
          ? std::to_string(
                negative ? static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) + 1
                         : static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
          : std::to_string(std::numeric_limits<std::uint64_t>::max());
  if (above(number, limit))
    return is_signed ? fmt::format("'{}' is out of range: a whole number from {} to {}",
                                   util::printable(text), std::numeric_limits<std::int64_t>::min(),
                                   std::numeric_limits<std::int64_t>::max())
                     : fmt::format("'{}' is out of range: a whole number from 0 to {}",
                                   util::printable(text), limit);
  text = (negative ? "-" : "") + std::string(number);
  return std::nullopt;
}

std::optional<std::string> blank_list_entry_problem(std::string_view value) {
  // A value with nothing in it reaches the option as one empty entry (`--exclude ""`: leave out
  // nothing); only a separator around nothing is dropped without a word.
  if (value.empty()) return std::nullopt;
  std::size_t start = 0;
  for (;;) {
    const auto end = value.find(',', start);
    if (trimmed(value.substr(start, end - start)).empty())
      return fmt::format(
          "'{}' has an empty entry; give the values separated by commas, none of them blank",
          util::printable(value));
    if (end == std::string_view::npos) return std::nullopt;
    start = end + 1;
  }
}

void check_flag_values(CLI::App& app) { check_flag_values_in(app); }

void refuse_blank_list_entries(const CLI::App& app, const std::vector<std::string>& args) {
  const CLI::App* command = chosen_subcommand(app, args);
  if (command == nullptr) return;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (!arg.starts_with("--")) continue;
    if (arg == "--") break;  // what follows is positional
    const auto equals = arg.find('=');
    const std::string name = arg.substr(0, equals);
    const CLI::Option* option = command->get_option_no_throw(name);
    if (option == nullptr || option->get_delimiter() != ',') continue;
    std::string_view value;
    if (equals != std::string::npos)
      value = std::string_view(arg).substr(equals + 1);
    else if (i + 1 < args.size())
      value = args[i + 1];
    else
      continue;  // no value at all: CLI11 says so
    if (const auto problem = blank_list_entry_problem(value))
      throw CLI::ValidationError(name, *problem);
  }
}

}  // namespace headroom::cli
