// The command line's own definitions for the stage functions (headroom/stages.py): a keyword
// argument is checked by the flag's parser, and a stage runs as headroom-train's main, in the child
// process the Python side starts (train_cli/training_app.hpp).
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>
#include <CLI/CLI.hpp>

#include <string>
#include <tuple>
#include <vector>

#include "bindings.hpp"
#include "headroom/report/run_manifest.hpp"
#include "headroom/train_cli/training_app.hpp"

namespace nb = nanobind;

namespace headroom::python {

void bind_commands(nb::module_& module) {
  module.def("check_arguments", &cli::check_training_arguments, nb::arg("args"),
             "Parses a command's arguments as headroom-train does, running nothing; raises "
             "OptionError naming the flag.");
  module.def(
      "command_flags",
      [](const std::string& command) {
        std::vector<std::tuple<std::string, bool, bool, std::string>> flags;
        for (const auto& flag : cli::training_command_flags(command))
          flags.emplace_back(flag.name, flag.takes_value, flag.repeats, flag.description);
        return flags;
      },
      nb::arg("command"),
      "The long flags of a command: (name, takes a value, repeats, description), in --help order.");
  module.def(
      "stage_run_directory",
      [](const std::vector<std::string>& args) { return cli::stage_run_directory(args).string(); },
      nb::arg("args"),
      "Where a stage command writes its run, resolved (and checked) as the command does.");
  module.attr("RUN_MANIFEST_FILE") = report::kRunManifestFileName;
  module.def(
      "run_manifest_path",
      [](const std::vector<std::string>& args) { return cli::run_manifest_path(args).string(); },
      nb::arg("args"),
      "Where `headroom run` with these arguments writes its run manifest, resolved as the command "
      "does; nothing is run.");
  module.def(
      "main",
      [](const std::vector<std::string>& argv) {
        std::vector<const char*> pointers;
        for (const auto& arg : argv) pointers.push_back(arg.c_str());
        nb::gil_scoped_release unlocked;
        return cli::run_training_app(static_cast<int>(pointers.size()), pointers.data());
      },
      nb::arg("argv"),
      "headroom-train's main on argv (argv[0] the program name); its exit status.");
}

}  // namespace headroom::python
