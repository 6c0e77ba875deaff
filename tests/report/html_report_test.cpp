// `headroom report` without a browser: what it reads from a run directory, the errors that name
// the file (and line) at fault, and data that cannot end the page's script early.
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "headroom/report/html_report.hpp"
#include "headroom/util/file_reader.hpp"
#include "test_support.hpp"

namespace headroom::report {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

TEST(HtmlReport, StepLinesAreNumberedAcrossEpochsAndATornLastLineIsSkipped) {
  testing::TempDir dir;
  testing::write_text_file(dir / "metrics.jsonl",
                           R"({"type":"step","epoch":0,"step":2,"rss_bytes":5})"
                           "\n"
                           R"({"type":"epoch","epoch":0,"steps":4,"train_loss":0.5})"
                           "\n"
                           R"({"type":"step","epoch":1,"step":1,"rss_bytes":6})"
                           "\n"
                           R"({"type":"epoch","epo)");
  const auto data = collect_report_data(dir.path());
  ASSERT_EQ(data["stages"].size(), 1U);
  const auto& stage = data["stages"][0];
  EXPECT_EQ(stage["epochs"].size(), 1U);
  ASSERT_EQ(stage["steps"].size(), 2U);
  EXPECT_EQ(stage["steps"][0]["global_step"], 2);
  EXPECT_EQ(stage["steps"][1]["global_step"], 5);  // after the first epoch's 4 steps
  EXPECT_TRUE(stage["plan"].is_null());            // no memory_plan.json
}

TEST(HtmlReport, ABadLineBeforeTheLastNamesFileAndLine) {
  testing::TempDir dir;
  testing::write_text_file(dir / "metrics.jsonl",
                           "{\"type\":\"epoch\",\"epoch\":0}\nnot json\n{\"type\":\"epoch\"}\n");
  const auto message = testing::error_message([&] { collect_report_data(dir.path()); });
  EXPECT_NE(message.find((dir / "metrics.jsonl").string() + ":2:"), std::string::npos) << message;
  EXPECT_NE(message.find("not JSON"), std::string::npos) << message;
}

TEST(HtmlReport, MalformedJsonNamesFileLineAndColumn) {
  testing::TempDir dir;
  testing::write_text_file(dir / "metrics.jsonl", "{\"type\":\"epoch\",\"epoch\":0}\n");
  testing::write_text_file(dir / "config.json", "{\n  \"config\": {\n    \"a\": 1,,\n  }\n}\n");
  const auto message = testing::error_message([&] { collect_report_data(dir.path()); });
  // Line 3, column 12: the second comma.
  EXPECT_NE(message.find((dir / "config.json").string() + ":3:12: not JSON: "), std::string::npos)
      << message;
  EXPECT_EQ(message.find("[json.exception"), std::string::npos) << message;
}

TEST(HtmlReport, AnEvaluationThatIsNotAnObjectOfModelsIsRefusedByName) {
  for (const std::string text : {"null", "[]", "7", "{\"m\": []}", "{\"m\": {\"groups\": [1]}}"}) {
    SCOPED_TRACE(text);
    testing::TempDir dir;
    testing::write_text_file(dir / "stage" / "metrics.jsonl", "{\"type\":\"epoch\",\"epoch\":0}\n");
    testing::write_text_file(dir / "evaluation" / "evaluation.json", text);
    // A run root, and the evaluation directory given alone.
    for (const auto& path : {dir.path(), dir / "evaluation"}) {
      const auto message = testing::error_message([&] { collect_report_data(path); });
      EXPECT_NE(message.find((dir / "evaluation" / "evaluation.json").string() + ": "),
                std::string::npos)
          << message;
    }
  }
}

TEST(HtmlReport, ANodeClassificationRunShowsItsCurvesBesideItsOwnEvaluation) {
  testing::TempDir dir;
  testing::write_text_file(dir / "metrics.jsonl",
                           "{\"type\":\"epoch\",\"epoch\":0,\"nodes\":12,\"train_loss\":0.5}\n");
  testing::write_text_file(
      dir / "evaluation.json",
      R"({"task": "node classification", "model": "node_gcn", "checkpoint_epoch": 4,
          "training": {"mode": "sampled", "sampled": {"parts_per_epoch": 3, "nodes_per_part": 70}},
          "splits": {"test": {"accuracy": 0.9, "macro_f1": 0.85, "count": 30, "loss": 0.25},
                     "train": {"accuracy": 1.0, "macro_f1": 1.0, "count": 60, "loss": 0.01}}})");
  const auto data = collect_report_data(dir.path());
  ASSERT_EQ(data["stages"].size(), 1U);
  EXPECT_EQ(data["stages"][0]["epochs"].size(), 1U);
  EXPECT_TRUE(data["evaluation"].empty());
  // Its evaluation is the stage's own table: every split, and how it trained.
  const auto page = render_html_report(data, "/* chart */");
  EXPECT_NE(page.find("best epoch 5; trained sampled subgraphs: 3 parts of 70 nodes per epoch"),
            std::string::npos);
  EXPECT_NE(page.find("<tr><td>test</td><td>0.9000</td><td>0.8500</td><td>30</td><td>0.2500</td>"),
            std::string::npos);
  EXPECT_NE(page.find("<tr><td>train</td><td>1.0000</td>"), std::string::npos);
}

TEST(HtmlReport, ADirectoryWithoutStagesOrEvaluationIsRefusedByName) {
  testing::TempDir dir;
  const auto message = testing::error_message([&] { collect_report_data(dir.path()); });
  EXPECT_NE(message.find(dir.path().string() + ": holds no stage"), std::string::npos) << message;
  const auto missing = dir / "absent";
  EXPECT_NE(testing::error_message([&] { collect_report_data(missing); }).find(missing.string()),
            std::string::npos);
}

// A node without Debian's libjs-chart.js (the GPU machine of the first GPU check) still gets the
// page after a finished run: the tables, a note in the page, the missing file named; with the
// library the same page carries it inline and no note.
TEST(HtmlReport, WithoutChartJsThePageHasItsTablesAndSaysWhy) {
  testing::TempDir dir;
  testing::write_text_file(dir / "stage" / "metrics.jsonl",
                           "{\"type\":\"epoch\",\"epoch\":0,\"train_loss\":0.5}\n");
  const auto without = write_html_report(dir / "stage", dir / "plain.html", dir / "no.js");
  EXPECT_EQ(without.path, dir / "plain.html");
  ASSERT_TRUE(without.missing_chart_js.has_value());
  EXPECT_EQ(*without.missing_chart_js, dir / "no.js");
  EXPECT_NE(missing_charts_warning(dir / "no.js").find((dir / "no.js").string() + ": Chart.js"),
            std::string::npos);
  const auto plain = util::read_file(dir / "plain.html");
  EXPECT_NE(plain.find("<strong>no charts</strong>"), std::string::npos);
  EXPECT_NE(plain.find("<h2>Stages</h2>"), std::string::npos) << "the stage table is there";

  testing::write_text_file(dir / "chart.js", "/* the library */");
  const auto with = write_html_report(dir / "stage", dir / "charts.html", dir / "chart.js");
  EXPECT_FALSE(with.missing_chart_js.has_value());
  const auto charts = util::read_file(dir / "charts.html");
  EXPECT_NE(charts.find("/* the library */"), std::string::npos);
  EXPECT_EQ(charts.find("no charts"), std::string::npos);
}

// A page for one stage named `name` and a run titled `title`.
std::string page_for(const std::string& title, const std::string& name) {
  const json stage = {
      {"name", name}, {"dir", "d"},      {"epochs", json::array()}, {"steps", json::array()},
      {"config", {}}, {"plan", nullptr}, {"result", json::object()}};
  const json data = {
      {"title", title}, {"stages", json::array({stage})}, {"evaluation", json::object()}};
  return render_html_report(data, "/* chart */");
}

std::size_t count_of(const std::string& text, const std::string& word) {
  std::size_t n = 0;
  for (auto at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) ++n;
  return n;
}

// The text of the page's data element: between its start tag and the next "</script".
std::string data_element_text(const std::string& page) {
  const std::string start = "<script type=\"application/json\" id=\"report-data\">";
  const auto begin = page.find(start);
  if (begin == std::string::npos) return "<no data element>";
  const auto end = page.find("</script", begin);
  return page.substr(begin + start.size(), end - begin - start.size());
}

TEST(HtmlReport, NoNameCanChangeWhereTheDataElementEnds) {
  // "<!--" followed by "<script" makes the HTML parser take the next "</script>" as no end at
  // all: the page's script became part of the data and the page stayed "loading".
  const std::string hostile = "<!--<script></script>-->&<b>";
  const auto page = page_for(hostile, hostile);
  const auto data = data_element_text(page);
  EXPECT_EQ(data.find('<'), std::string::npos) << data;
  EXPECT_EQ(data.find('>'), std::string::npos) << data;
  // The data still parses back to the same names.
  const auto parsed = json::parse(data);
  EXPECT_EQ(parsed["title"], hostile);
  EXPECT_EQ(parsed["stages"][0]["name"], hostile);
}

TEST(HtmlReport, NamesThatAreNotUtf8DoNotFailThePage) {
  const auto page = page_for("t", "stage\xff\xfe");
  const auto parsed = json::parse(data_element_text(page));
  EXPECT_EQ(parsed["stages"][0]["name"], "stage\xEF\xBF\xBD\xEF\xBF\xBD");  // U+FFFD twice
}

TEST(HtmlReport, NamesInTheDataCannotCloseThePageScriptOrAddMarkup) {
  const auto plain = page_for("t", "stage");
  const auto hostile = page_for("<b>t</b>", "</script><script>alert(1)</script>");
  // The embedded JSON data must not end its <script> element early.
  EXPECT_EQ(count_of(hostile, "</script>"), count_of(plain, "</script>"));
  EXPECT_EQ(hostile.find("<b>t</b>"), std::string::npos);  // the title is escaped
  EXPECT_NE(hostile.find("&lt;b&gt;t&lt;/b&gt;"), std::string::npos);
  EXPECT_NE(plain.find("/* chart */"), std::string::npos);  // Chart.js is inline
}

}  // namespace
}  // namespace headroom::report
