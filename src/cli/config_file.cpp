#include "headroom/cli/config_file.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <toml++/toml.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <iterator>
#include <memory>
#include <optional>
#include <sstream>
#include <string_view>
#include <vector>

#include "headroom/cli/flag_values.hpp"
#include "headroom/util/byte_size.hpp"
#include "headroom/util/nearest_name.hpp"
#include "headroom/util/printable_text.hpp"
#include "headroom/util/regular_file.hpp"

namespace headroom::cli {
namespace {

std::string describe(const std::filesystem::path& file, std::uint64_t line,
                     const std::string& section, const std::string& key,
                     const std::string& reason) {
  std::string where = util::printable_path(file);
  if (line > 0) where += fmt::format(":{}", line);
  std::string subject;
  if (!section.empty()) subject += fmt::format("[{}] ", section);
  if (!key.empty()) subject += fmt::format("'{}': ", key);
  return fmt::format("{}: {}{}", where, subject, reason);
}

std::uint64_t line_of(const toml::source_region& source) { return source.begin.line; }

// A config file is a page of settings; anything near this size is not one.
constexpr std::size_t kMaxConfigFileBytes = std::size_t{1} << 20;

ConfigFileError too_large(const std::filesystem::path& file, std::optional<std::uint64_t> bytes);

// Where a key was read: the subcommand's table, for errors.
struct KeyContext {
  const std::filesystem::path& file;
  const std::string& section;
  std::string_view key;
  std::uint64_t line;

  [[noreturn]] void fail(const std::string& reason) const {
    throw ConfigFileError(file, line, section, std::string(key), reason);
  }
};

// "INT", "FLOAT", "TEXT", "BOOLEAN", …: the flag's type without its checks ("FLOAT:POSITIVE").
std::string base_type(const CLI::Option& option) {
  const std::string type = option.get_type_name();
  return type.substr(0, type.find(':'));
}

bool is_switch(const CLI::Option& option) {
  return option.get_expected_min() == 0 || base_type(option) == "BOOLEAN";
}

// A float in a float's notation: `window = 1e3` gives "1000.0", not "1000", so that a flag that
// takes a whole number refuses it as it refuses `--window 1e3`.
std::string float_text(double value) {
  std::string text = fmt::format("{}", value);
  if (text.find_first_of(".en") == std::string::npos) text += ".0";  // "nan" and "inf" hold an n
  return text;
}

// One TOML scalar as the text the flag would get on the command line.
std::string scalar_text(const toml::node& value, const CLI::Option& option,
                        const KeyContext& where) {
  if (const auto* b = value.as_boolean()) {
    if (!is_switch(option)) {
      where.fail(fmt::format("takes a {}, not true/false", base_type(option) == "TEXT"
                                                               ? "text (in quotes) or number"
                                                               : "number"));
    }
    return b->get() ? "true" : "false";
  }
  if (is_switch(option)) where.fail("takes true or false (unquoted)");
  if (const auto* s = value.as_string()) return s->get();
  if (const auto* i = value.as_integer()) return std::to_string(i->get());
  if (const auto* f = value.as_floating_point()) return float_text(f->get());
  if (value.is_table()) where.fail("is a table; a setting takes a value");
  if (value.is_array()) where.fail("a list inside a list is not a setting");
  where.fail("dates and times are not a setting");
}

// The texts a key's value gives its flag: one per element of a list.
std::vector<std::string> value_texts(const toml::node& value, const CLI::Option& option,
                                     const KeyContext& where) {
  const auto* list = value.as_array();
  if (list == nullptr) return {scalar_text(value, option, where)};
  if (option.get_items_expected_max() <= 1) where.fail("takes one value, not a list");
  if (list->empty()) where.fail("an empty list sets nothing; leave the key out for the default");
  std::vector<std::string> texts;
  for (const auto& element : *list) texts.push_back(scalar_text(element, option, where));
  return texts;
}

// The names a key may take in `command`'s table: its flags' long names and positional names.
std::vector<std::string> setting_names(const CLI::App& command) {
  std::vector<std::string> names;
  for (const CLI::Option* option : command.get_options()) {
    if (!option->get_configurable()) continue;
    for (const auto& name : option->get_lnames()) names.push_back(name);
    if (option->get_positional()) names.push_back(option->get_single_name());
  }
  return names;
}

// The option a key names, the way CLI11 matches config keys ("--key", "-k", then a positional).
CLI::Option* option_for(CLI::App& command, const std::string& key) {
  CLI::Option* option = command.get_option_no_throw("--" + key);
  if (option == nullptr && key.size() == 1) option = command.get_option_no_throw("-" + key);
  if (option == nullptr) option = command.get_option_no_throw(key);
  return option;
}

void apply_setting(CLI::App& command, const toml::node& value, const KeyContext& where) {
  const std::string key(where.key);
  CLI::Option* option = option_for(command, key);
  if (option == nullptr) {
    const std::string nearest = util::nearest_name(key, setting_names(command));
    where.fail(fmt::format("`headroom {}` has no such setting; {}", command.get_name(),
                           nearest.empty()
                               ? fmt::format("see `headroom {} --help`", command.get_name())
                               : fmt::format("did you mean '{}'?", nearest)));
  }
  if (!option->get_configurable()) where.fail("cannot be set in a config file");
  const auto texts = value_texts(value, *option, where);
  // CLI11 would drop a blank entry of a comma-separated list without a word, as on the command
  // line (flag_values.hpp).
  if (option->get_delimiter() == ',')
    for (const auto& text : texts) {
      // "" alone is the flag's "none" (`exclude = ""`); inside a list it is an entry left blank.
      if (texts.size() > 1 && text.empty()) where.fail("the list has an empty entry");
      if (const auto problem = blank_list_entry_problem(text)) where.fail(*problem);
    }
  if (!option->empty()) return;  // given on the command line, which wins
  try {
    if (option->get_expected_min() == 0) {
      option->add_result(option->get_flag_value(key, texts.front()));
    } else {
      option->add_result(texts);
      option->run_callback();  // converts and checks now, so that errors can name the line
    }
  } catch (const CLI::Error& e) {
    where.fail(e.what());
  }
}

std::vector<std::string> subcommand_names(CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; }))
    names.push_back(sub->get_name());
  return names;
}

// Reads --config's file strictly and applies the running subcommand's table itself; CLI11 gets no
// items back, so its lenient line reader never decides what a line means.
class StrictTomlConfig final : public CLI::Config {
 public:
  explicit StrictTomlConfig(CLI::App& root) : root_(root) {}

  std::string to_config(const CLI::App* app, bool default_also, bool write_description,
                        std::string prefix) const override {
    return CLI::ConfigTOML().to_config(app, default_also, write_description, std::move(prefix));
  }

  std::vector<CLI::ConfigItem> from_config(std::istream& input) const override {
    const std::filesystem::path file = config_file_name();
    // Bounded whatever the file has become since its check (add_config_file_option).
    std::string text(kMaxConfigFileBytes + 1, '\0');
    input.read(text.data(), static_cast<std::streamsize>(text.size()));
    text.resize(static_cast<std::size_t>(input.gcount()));
    if (text.size() > kMaxConfigFileBytes) throw too_large(file, std::nullopt);
    const toml::table document = parse(text, file);
    const auto running = root_.get_subcommands();
    CLI::App* command = running.empty() ? nullptr : running.front();
    const auto known = subcommand_names(root_);
    bool found = false;
    for (const auto& [name, node] : document) {
      const std::string section(name.str());
      check_section(file, section, node, line_of(name.source()), known, command);
      if (command != nullptr && section == command->get_name()) {
        found = true;
        for (const auto& [key, value] : *node.as_table()) {
          apply_setting(*command, value,
                        KeyContext{file, section, key.str(), line_of(key.source())});
        }
      }
    }
    if (command != nullptr && !found) refuse_missing_section(file, document, *command);
    return {};
  }

 private:
  std::string config_file_name() const {
    const CLI::Option* option = root_.get_config_ptr();
    return option == nullptr || option->results().empty() ? std::string()
                                                          : option->results().back();
  }

  static toml::table parse(const std::string& text, const std::filesystem::path& file) {
    try {
      return toml::parse(text, file.string());
    } catch (const toml::parse_error& e) {
      throw ConfigFileError(
          file, line_of(e.source()), "", "",
          fmt::format("not valid TOML (column {}): {}", e.source().begin.column, e.description()));
    }
  }

  static void check_section(const std::filesystem::path& file, const std::string& section,
                            const toml::node& node, std::uint64_t line,
                            const std::vector<std::string>& known, const CLI::App* command) {
    const std::string own = command == nullptr ? "SUBCOMMAND" : command->get_name();
    if (node.is_array_of_tables())
      throw ConfigFileError(file, line, "", "",
                            fmt::format("[[{}]] is not a section; write [{}]", section, section));
    if (!node.is_table()) {
      throw ConfigFileError(file, line, "", section,
                            fmt::format("settings go in a section named after the command: put "
                                        "this key under [{}]",
                                        own));
    }
    if (std::find(known.begin(), known.end(), section) != known.end()) return;
    const std::string nearest = util::nearest_name(section, known);
    throw ConfigFileError(
        file, line, "", "",
        fmt::format("[{}] names no headroom command; {}", section,
                    nearest.empty() ? fmt::format("sections: {}", fmt::join(known, ", "))
                                    : fmt::format("did you mean [{}]?", nearest)));
  }

  [[noreturn]] static void refuse_missing_section(const std::filesystem::path& file,
                                                  const toml::table& document,
                                                  const CLI::App& command) {
    std::vector<std::string> sections;
    for (const auto& [name, node] : document) sections.emplace_back(name.str());
    const std::string has =
        sections.empty() ? "the file sets nothing"
                         : fmt::format("the file has only [{}]", fmt::join(sections, "], ["));
    throw ConfigFileError(file, 0, "", "",
                          fmt::format("no [{0}] section, and `headroom {0}` reads only that one "
                                      "({1})",
                                      command.get_name(), has));
  }

  CLI::App& root_;
};

}  // namespace

ConfigFileError::ConfigFileError(const std::filesystem::path& file, std::uint64_t line,
                                 const std::string& section, const std::string& key,
                                 const std::string& reason)
    : std::runtime_error(describe(file, line, util::printable(section, util::kMaxQuotedNameBytes),
                                  util::printable(key, util::kMaxQuotedNameBytes),
                                  util::printable(reason))),
      line_(line),
      key_(util::printable(key, util::kMaxQuotedNameBytes)) {}

namespace {
// `bytes`: the file's size, where known (the stream read stops past the bound).
ConfigFileError too_large(const std::filesystem::path& file, std::optional<std::uint64_t> bytes) {
  const std::string size =
      bytes ? fmt::format("{} ({} bytes), larger",
                          util::format_byte_size(static_cast<double>(*bytes)), *bytes)
            : std::string("larger");
  return ConfigFileError(file, 0, "", "",
                         fmt::format("{} than the {} a config file may be", size,
                                     util::format_byte_size(kMaxConfigFileBytes)));
}
}  // namespace

void add_config_file_option(CLI::App& app) {
  CLI::Option* option =
      app.set_config("--config", "", "Read options from a TOML file ([SUBCOMMAND] sections)");
  // Checked as the flag is parsed, before CLI11 opens the file with an ifstream: that open blocks
  // forever on a FIFO, and reading a device such as /dev/zero ends in std::bad_alloc. A missing
  // file is left to CLI11, which names it.
  option->trigger_on_parse()->each([](const std::string& name) {
    std::string why;
    bool missing = false;
    const auto fd = util::try_open_regular_for_reading(name, &why, &missing);
    if (missing) return;
    if (!fd) throw ConfigFileError(name, 0, "", "", "cannot read: " + why);
    const auto bytes = util::open_file_size(fd.get(), name);
    if (bytes > kMaxConfigFileBytes) throw too_large(name, bytes);
  });
  app.config_formatter(std::make_shared<StrictTomlConfig>(app));
}

}  // namespace headroom::cli
