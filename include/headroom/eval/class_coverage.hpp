// Warnings where a multi-class evaluation's numbers cannot mean much: a class the training split
// never shows (no model can learn it; its test examples are errors for every model alike), and a
// class the test split shows only a handful of times (its F1, and macro-F1, which weighs every
// class alike, rest on those few). Plain functions; no torch.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace headroom::eval {

// Below this many test examples a class's F1 is called out (one example more or less moves it by
// a fifth or more).
inline constexpr std::size_t kFewTestExamples = 5;

// One sentence per class with no training example, then one per class with fewer than
// `few_test_examples` test examples (none included), in class order; empty when every class is
// covered. `classes` names the class ids; labels are ids in [0, classes.size()), one per example
// of each split; `unit` names an example in the sentences ("documents"). Throws
// std::invalid_argument for a label outside the classes.
std::vector<std::string> class_coverage_warnings(std::span<const std::string> classes,
                                                 std::span<const std::int32_t> training_labels,
                                                 std::span<const std::int32_t> test_labels,
                                                 std::string_view unit,
                                                 std::size_t few_test_examples = kFewTestExamples);

}  // namespace headroom::eval
