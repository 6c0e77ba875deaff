// Which classes an evaluation cannot say much about: none in training, few or none in test.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "headroom/eval/class_coverage.hpp"

namespace headroom::eval {
namespace {

// `counts[c]` labels of class c, in class order.
std::vector<std::int32_t> labels_with(const std::vector<int>& counts) {
  std::vector<std::int32_t> labels;
  for (std::size_t c = 0; c < counts.size(); ++c)
    labels.insert(labels.end(), static_cast<std::size_t>(counts[c]), static_cast<std::int32_t>(c));
  return labels;
}

const std::vector<std::string> kClasses = {"acq", "grain", "ship"};

TEST(ClassCoverage, EveryClassSeenInTrainingAndFiveTimesInTestGivesNoWarning) {
  EXPECT_TRUE(class_coverage_warnings(kClasses, labels_with({1, 3, 9}), labels_with({5, 5, 20}),
                                      "documents")
                  .empty());
}

TEST(ClassCoverage, NamesAClassWithoutTrainingExamplesAndOnesWithFewTestExamples) {
  const auto warnings = class_coverage_warnings(kClasses, labels_with({4, 0, 9}),
                                                labels_with({4, 7, 0}), "documents");
  ASSERT_EQ(warnings.size(), 3U);
  // Training first, then test, each in class order.
  EXPECT_NE(warnings[0].find("'grain' has no training documents"), std::string::npos)
      << warnings[0];
  EXPECT_NE(warnings[0].find("7 test documents are errors"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[1].find("'acq' has only 4 test documents"), std::string::npos) << warnings[1];
  EXPECT_NE(warnings[2].find("'ship' has no test documents"), std::string::npos) << warnings[2];
}

TEST(ClassCoverage, TheThresholdOfFewIsTheCallersAndTheUnitNamesTheExamples) {
  const auto warnings = class_coverage_warnings(kClasses, labels_with({5, 5, 5}),
                                                labels_with({9, 10, 30}), "nodes", 10);
  ASSERT_EQ(warnings.size(), 1U);
  EXPECT_NE(warnings[0].find("'acq' has only 9 test nodes"), std::string::npos) << warnings[0];
}

TEST(ClassCoverage, RefusesALabelOutsideTheClasses) {
  EXPECT_THROW(
      class_coverage_warnings(kClasses, labels_with({1, 1, 1, 1}), labels_with({5}), "documents"),
      std::invalid_argument);
  const std::vector<std::int32_t> negative = {-1};
  EXPECT_THROW(class_coverage_warnings(kClasses, labels_with({1, 1, 1}), negative, "documents"),
               std::invalid_argument);
}

}  // namespace
}  // namespace headroom::eval
