#include "headroom/train_cli/node_task_flags.hpp"

#include <CLI/CLI.hpp>

namespace headroom::cli {

train::NodeDefaultsGiven node_defaults_given(const CLI::App& command) {
  const auto given = [&command](const char* flag) {
    const auto* option = command.get_option_no_throw(flag);
    return option != nullptr && option->count() > 0;
  };
  return {.preset = given("--preset"),
          .max_epochs = given("--max-epochs"),
          .weight_decay = given("--weight-decay"),
          .gradient_clip = given("--gradient-clip")};
}

}  // namespace headroom::cli
