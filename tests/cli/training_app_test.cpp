// cli::check_training_arguments, which the Python package calls before it starts a stage: it
// parses a command's arguments as headroom-train does and runs nothing.
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "headroom/train_cli/training_app.hpp"

namespace headroom::cli {
namespace {

// It used to replace every command's callback to parse without running, which freed the state
// the options write into; parsing a dataset then wrote into freed memory ("double free or
// corruption" in `headroom.run("DATASET")` from Python). Many parses of every kind of option
// (a positional string, numbers, a repeated list) must leave the process intact, and the
// parsed command must not run (nothing is trained or written).
TEST(CheckTrainingArguments, ParsesEveryCommandWithoutRunningItOrCorruptingMemory) {
  for (int round = 0; round < 200; ++round) {
    check_training_arguments({"run", "data/some dataset with a long name to allocate", "--threads",
                              "2", "--max-epochs", "3"});
    check_training_arguments(
        {"normal", "--store", "stores/none", "--preset", "gat,student", "--max-epochs", "1"});
    check_training_arguments(
        {"evaluation", "--store", "stores/none", "--models", "runs/a", "--models", "runs/b"});
  }
  EXPECT_THROW(check_training_arguments({"normal", "--store", "s", "--max-epochs", "many"}),
               CLI::ParseError);
  EXPECT_THROW(check_training_arguments({"normal", "--no-such-flag"}), CLI::ParseError);
  EXPECT_THROW(check_training_arguments({"normal"}), CLI::ParseError);  // --store is required
}

}  // namespace
}  // namespace headroom::cli
