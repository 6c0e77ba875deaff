#include "headroom/eval/class_coverage.hpp"

#include <stdexcept>

#include <fmt/format.h>

#include "headroom/util/printable_text.hpp"

namespace headroom::eval {
namespace {

std::vector<std::size_t> examples_per_class(std::span<const std::int32_t> labels,
                                            std::size_t num_classes, std::string_view split) {
  std::vector<std::size_t> counts(num_classes, 0);
  for (const auto label : labels) {
    if (label < 0 || static_cast<std::size_t>(label) >= num_classes)
      throw std::invalid_argument(
          fmt::format("class coverage: a {} label {} outside [0, {})", split, label, num_classes));
    ++counts[static_cast<std::size_t>(label)];
  }
  return counts;
}

}  // namespace

std::vector<std::string> class_coverage_warnings(std::span<const std::string> classes,
                                                 std::span<const std::int32_t> training_labels,
                                                 std::span<const std::int32_t> test_labels,
                                                 std::string_view unit,
                                                 std::size_t few_test_examples) {
  const auto training = examples_per_class(training_labels, classes.size(), "training");
  const auto test = examples_per_class(test_labels, classes.size(), "test");
  std::vector<std::string> warnings;
  for (std::size_t c = 0; c < classes.size(); ++c)
    if (training[c] == 0)
      warnings.push_back(fmt::format(
          "class '{}' has no training {}: no model can learn it{}", util::printable(classes[c]),
          unit,
          test[c] == 0
              ? ""
              : fmt::format(", and its {} test {} are errors for every model", test[c], unit)));
  for (std::size_t c = 0; c < classes.size(); ++c) {
    if (test[c] >= few_test_examples) continue;
    if (test[c] == 0)
      warnings.push_back(fmt::format(
          "class '{}' has no test {}: its F1 is not measured, and macro-F1 leaves it out",
          util::printable(classes[c]), unit));
    else
      warnings.push_back(fmt::format(
          "class '{}' has only {} test {}: its F1, and macro-F1 (every class weighs alike), rest "
          "on {} examples",
          util::printable(classes[c]), test[c], unit, test[c]));
  }
  return warnings;
}

}  // namespace headroom::eval
