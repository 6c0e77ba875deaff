#include "headroom/train_cli/training_app.hpp"

#include <c10/util/Exception.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <exception>
#include <stdexcept>
#include <string>
#include <vector>

#include "headroom/cli/commands.hpp"
#include "headroom/cli/flag_values.hpp"
#include "headroom/cli/parse_errors.hpp"
#include "headroom/memory/cuda_allocator_defaults.hpp"
#include "headroom/memory/tensor_memory_meter.hpp"
#include "headroom/train_cli/train_commands.hpp"
#include "headroom/util/kill_injection.hpp"
#include "headroom/util/stop_injection.hpp"

namespace headroom::cli {

void configure_training_app(CLI::App& app) {
  configure_app_with_data_commands(app);
  add_run_command(app);
  add_training_commands(app);
  add_plan_command(app);
  check_flag_values(app);  // the training commands' flags too
}

int run_training_app(int argc, const char* const* argv) {
  // Before CUDA initialises: the caching allocator reads its settings once.
  memory::default_to_expandable_segments();
  // Before any tensor exists, so that every CPU tensor byte is counted (memory meter).
  memory::keep_freed_host_memory();
  memory::install_counting_cpu_allocator();
  CLI::App app{"headroom: memory-planned GNN training for CAN-bus intrusion detection"};
  configure_training_app(app);
  try {
    memory::inject_cpu_allocation_failures_from_environment();
    util::inject_kill_from_environment();
    util::inject_stop_from_environment();
    refuse_blank_list_entries(app, std::vector<std::string>(argv + std::min(argc, 1), argv + argc));
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return report_parse_error(app, e);
  } catch (const c10::Error& e) {  // LibTorch errors: the message without its C++ backtrace
    return report_error(e.what_without_backtrace());
  } catch (const std::exception& e) {
    return report_error(e.what());
  }
  return 0;
}

namespace {
// Thrown by the top app's parse-complete hook: the arguments parsed, and nothing is to run.
struct ParsedOnly {};
}  // namespace

void check_training_arguments(const std::vector<std::string>& args) {
  CLI::App app{"headroom"};
  configure_training_app(app);
  // CLI11 calls the top app's parse-complete hook after parsing and checking requirements and
  // before any command's callback. Stopping there leaves the callbacks in place: they own the
  // state the options write into (replacing them freed it, and parsing wrote into freed memory).
  app.parse_complete_callback([] { throw ParsedOnly{}; });
  refuse_blank_list_entries(app, args);
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 parses from the back
  try {
    app.parse(reversed);
  } catch (const ParsedOnly&) {
    return;
  }
}

std::vector<CommandFlag> training_command_flags(std::string_view command) {
  CLI::App app{"headroom"};
  configure_training_app(app);
  CLI::App* subcommand = nullptr;
  try {
    subcommand = app.get_subcommand(std::string(command));
  } catch (const CLI::OptionNotFound&) {
    throw std::invalid_argument("headroom has no command '" + std::string(command) + "'");
  }
  std::vector<CommandFlag> flags;
  for (const CLI::Option* option : subcommand->get_options()) {
    if (option->get_lnames().empty()) continue;  // positional
    flags.push_back({option->get_lnames().front(), option->get_expected_max() != 0,
                     option->get_expected_max() > 1, option->get_description()});
  }
  return flags;
}

}  // namespace headroom::cli
