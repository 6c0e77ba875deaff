// `headroom plan` from Python: the command's own flags and computation (train_cli/plan_json.hpp).
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "bindings.hpp"
#include "headroom/train_cli/plan_json.hpp"

namespace nb = nanobind;

namespace headroom::python {

void bind_planning(nb::module_& module) {
  // CLI11's message names the flag and the reason, as the command line prints it.
  nb::exception<CLI::ParseError>(module, "OptionError", PyExc_ValueError);
  module.def(
      "plan_json",
      [](const std::vector<std::string>& args) {
        nb::gil_scoped_release unlocked;
        return cli::plan_json(args).dump();
      },
      nb::arg("args"));
}

}  // namespace headroom::python
