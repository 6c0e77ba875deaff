#include "headroom/cli/flag_values.hpp"

#include <fmt/format.h>
#include <array>
#include <charconv>
#include <cstdint>
#include <exception>
#include <limits>

#include "headroom/util/printable_text.hpp"

namespace headroom::cli {
namespace {

constexpr const char* kWholeNumberCheck = "whole-number";
constexpr const char* kNotEmptyCheck = "not-empty";
// Marks a FLOAT or BOOLEAN option whose conversion already names a value it cannot take.
constexpr const char* kNamedConversionCheck = "named-conversion";

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

// CLI11 2.1 converts a value into the option's own type (a 32-bit --threads, --window) only in
// the option's callback, and a value that fits 64 bits but not that type gets the bare "Could not
// convert: --window = 5000000000". The callback is the protected Option::callback_, with no
// accessor; a pointer to it named through a derived class is the one way CLI11 leaves to reach it.
struct OptionConversion : CLI::Option {
  static CLI::callback_t& of(CLI::Option& option) { return option.*(&OptionConversion::callback_); }
};

// The whole numbers an option's type holds.
struct WholeNumberRange {
  std::int64_t min = 0;
  std::uint64_t max = 0;
};

// Whether `conversion` takes `value` as one result. It writes the option's variable: only called
// once the conversion has failed, so the command line is refused and the variable is never read.
bool converts(const CLI::callback_t& conversion, const std::string& value) {
  try {
    return conversion(CLI::results_t{value});
  } catch (const std::exception&) {
    return false;  // a setter behind the conversion that refuses the value itself
  }
}

// The range of the option's type, found as the widest integer type's maximum its conversion
// takes; nullopt when it takes none (something other than the value's size is wrong).
std::optional<WholeNumberRange> range_of(const CLI::callback_t& conversion, bool is_signed) {
  constexpr std::array<std::uint64_t, 4> kSignedMaxima = {
      std::numeric_limits<std::int64_t>::max(), std::numeric_limits<std::int32_t>::max(),
      std::numeric_limits<std::int16_t>::max(), std::numeric_limits<std::int8_t>::max()};
  constexpr std::array<std::uint64_t, 4> kUnsignedMaxima = {
      std::numeric_limits<std::uint64_t>::max(), std::numeric_limits<std::uint32_t>::max(),
      std::numeric_limits<std::uint16_t>::max(), std::numeric_limits<std::uint8_t>::max()};
  for (const std::uint64_t max : is_signed ? kSignedMaxima : kUnsignedMaxima)
    if (converts(conversion, std::to_string(max)))
      return WholeNumberRange{.min = is_signed ? -static_cast<std::int64_t>(max) - 1 : 0,
                              .max = max};
  return std::nullopt;
}

// Whether the whole number `text` (decimal, as whole_number_problem leaves it) lies in `range`.
bool within(const std::string& text, const WholeNumberRange& range) {
  if (text.starts_with('-')) {
    std::int64_t value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    return error == std::errc{} && end == text.data() + text.size() && value >= range.min;
  }
  std::uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return error == std::errc{} && end == text.data() + text.size() && value <= range.max;
}

// Makes a value the option's type cannot hold say so, with the type's range, instead of CLI11's
// "Could not convert". The whole-number check has already run, so each value fits 64 bits.
void name_the_range_of_the_type(CLI::Option& option, bool is_signed) {
  CLI::callback_t& conversion = OptionConversion::of(option);
  if (!conversion) return;
  conversion = [original = conversion, is_signed,
                name = option.get_name()](const CLI::results_t& results) {
    if (original(results)) return true;
    const auto range = range_of(original, is_signed);
    if (!range) return false;  // CLI11's own error
    for (const std::string& value : results)
      if (!within(value, *range))
        throw CLI::ValidationError(name, out_of_range_problem(value, range->min, range->max));
    return false;
  };
}

// Why `value` is not one a FLOAT or BOOLEAN option takes.
std::string conversion_problem(std::string_view type, std::string_view value) {
  if (type == "FLOAT")
    return fmt::format("'{}' is not a number (such as 0.5 or 1e-3)", util::printable(value));
  return fmt::format("'{}' is not true or false", util::printable(value));
}

// Makes a value a FLOAT or BOOLEAN option cannot convert (`--dropout abc`, `--use-kd maybe`) say
// what it should be, naming the value, instead of CLI11's "Could not convert: --dropout = abc".
// What converts is what CLI11 takes, unchanged.
void name_what_does_not_convert(CLI::Option& option, const std::string& type) {
  if (has_check(option, kNamedConversionCheck)) return;
  option.check(CLI::Validator([](const std::string&) { return std::string(); }, ""),
               kNamedConversionCheck);
  CLI::callback_t& conversion = OptionConversion::of(option);
  if (!conversion) return;
  conversion = [original = conversion, type,
                name = option.get_name()](const CLI::results_t& results) {
    if (original(results)) return true;
    for (const std::string& value : results)
      if (!converts(original, value))
        throw CLI::ValidationError(name, conversion_problem(type, value));
    return false;  // each value converts alone: CLI11's own error
  };
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
    if (type == "FLOAT" || type == "BOOLEAN") name_what_does_not_convert(*option, type);
    if ((type != "INT" && type != "UINT") || has_check(*option, kWholeNumberCheck)) continue;
    const bool is_signed = type == "INT";
    // No description: the help keeps showing the type as it was.
    option->transform(CLI::Validator(
                          [is_signed](std::string& text) -> std::string {
                            return whole_number_problem(text, is_signed).value_or("");
                          },
                          ""),
                      kWholeNumberCheck);
    name_the_range_of_the_type(*option, is_signed);
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
    return is_signed ? out_of_range_problem(text, std::numeric_limits<std::int64_t>::min(),
                                            std::numeric_limits<std::int64_t>::max())
                     : out_of_range_problem(text, 0, std::numeric_limits<std::uint64_t>::max());
  text = (negative ? "-" : "") + std::string(number);
  return std::nullopt;
}

std::string out_of_range_problem(std::string_view text, std::int64_t min, std::uint64_t max) {
  return fmt::format("'{}' is out of range: a whole number from {} to {}", util::printable(text),
                     min, max);
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
