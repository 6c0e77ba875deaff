// headroom-train: the LibTorch side of `headroom` (cli/training_handover.hpp). It runs every
// subcommand, the data-side ones included (`run` preprocesses before it trains); users normally
// reach it through `headroom`, which hands training subcommands over with the same arguments.
// Subcommands live in src/cli/ and src/train_cli/; this file only assembles them and turns
// exceptions into one-line errors.
#include <c10/util/Exception.h>

#include <CLI/CLI.hpp>
#include <exception>
#include <iostream>

#include "headroom/cli/commands.hpp"
#include "headroom/cli/parse_errors.hpp"
#include "headroom/memory/cuda_allocator_defaults.hpp"
#include "headroom/memory/tensor_memory_meter.hpp"
#include "headroom/train_cli/train_commands.hpp"

int main(int argc, char** argv) {
  // Before CUDA initialises: the caching allocator reads its settings once.
  headroom::memory::default_to_expandable_segments();
  // Before any tensor exists, so that every CPU tensor byte is counted (memory meter).
  headroom::memory::keep_freed_host_memory();
  headroom::memory::install_counting_cpu_allocator();
  CLI::App app{"headroom: memory-planned GNN training for CAN-bus intrusion detection"};
  headroom::cli::configure_app_with_data_commands(app);
  headroom::cli::add_run_command(app);
  headroom::cli::add_training_commands(app);
  headroom::cli::add_plan_command(app);
  try {
    headroom::memory::inject_cpu_allocation_failures_from_environment();
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return headroom::cli::report_parse_error(app, e);
  } catch (const c10::Error& e) {  // LibTorch errors: the message without its C++ backtrace
    return headroom::cli::report_error(e.what_without_backtrace());
  } catch (const std::exception& e) {
    return headroom::cli::report_error(e.what());
  }
  return 0;
}
