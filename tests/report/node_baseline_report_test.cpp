// A text run's report shows the classical baseline's rows under the node model's, and the
// evaluation's warnings, escaped.
#include <gtest/gtest.h>

#include <string>

#include "headroom/report/html_report.hpp"
#include "test_support.hpp"

namespace headroom::report {
namespace {

TEST(NodeBaselineReport, TheBaselineRowsAndWarningsFollowTheModelsTable) {
  testing::TempDir dir;
  testing::write_text_file(dir / "metrics.jsonl",
                           "{\"type\":\"epoch\",\"epoch\":0,\"nodes\":12,\"train_loss\":0.5}\n");
  testing::write_text_file(
      dir / "evaluation.json",
      R"({"task": "node classification", "model": "node_gcn", "checkpoint_epoch": 4,
          "splits": {"test": {"accuracy": 0.9, "macro_f1": 0.85, "count": 30, "loss": 0.25}},
          "baseline": {"method": "tf-idf + logistic regression", "l2": 1e-4,
                       "splits": {"test": {"accuracy": 0.9375, "macro_f1": 0.8125, "count": 30}}},
          "warnings": ["class '<b>' has only 2 test documents"]})");
  const auto page = render_html_report(collect_report_data(dir.path()), "/* chart */");
  const auto model_row = page.find("<tr><td>test</td><td>0.9000</td>");
  const auto baseline_row =
      page.find("<tr><td>test, baseline tf-idf+lr</td><td>0.9375</td><td>0.8125</td><td>30</td>");
  ASSERT_NE(model_row, std::string::npos);
  ASSERT_NE(baseline_row, std::string::npos) << page;
  EXPECT_LT(model_row, baseline_row);
  EXPECT_NE(page.find("warning: class '&lt;b&gt;' has only 2 test documents"),
            std::string::npos)
      << page;
  EXPECT_EQ(page.find("'<b>'"), std::string::npos);
}

TEST(NodeBaselineReport, AnEvaluationWithoutABaselineOrWithAMalformedOneHasNoBaselineRow) {
  for (const std::string baseline : {"", R"(, "baseline": 7)", R"(, "baseline": {"splits": []})",
                                     R"(, "baseline": {"splits": {"test": "x"}}, "warnings": 3)"}) {
    SCOPED_TRACE(baseline);
    testing::TempDir dir;
    testing::write_text_file(dir / "metrics.jsonl", "{\"type\":\"epoch\",\"epoch\":0}\n");
    testing::write_text_file(
        dir / "evaluation.json",
        R"({"task": "node classification", "splits": {"test": {}})" + baseline + "}");
    const auto page = render_html_report(collect_report_data(dir.path()), "/* chart */");
    EXPECT_EQ(page.find("baseline tf-idf+lr"), std::string::npos);
    EXPECT_NE(page.find("<tr><td>test</td>"), std::string::npos);
  }
}

}  // namespace
}  // namespace headroom::report
