// What `headroom run CORPUS` prints at the end of a text corpus's run: the node model's test
// accuracy beside the TF-IDF + logistic-regression baseline's, warnings where a class is too thin
// for its numbers to mean much, and none of the CAN task's words.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "test_support.hpp"
#include "train/separable_corpus.hpp"

namespace headroom {
namespace {

// The separable corpus of three classes, and a fourth class, 'rare', with two test documents
// and no training document.
void write_corpus_with_a_rare_class(const std::filesystem::path& dir) {
  testing::write_separable_corpus(dir, 3, 40);
  std::ofstream(dir / "labels.tsv", std::ios::app) << "rare0\ttest\trare\nrare1\ttest\trare\n";
  std::ofstream(dir / "corpus.clean.txt", std::ios::app)
      << "c0w1 shared3 shared4 rarely\nrarely c1w2 shared9\n";
}

std::string lowercase(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

TEST(TextRunSummary, PrintsTheBaselineBesideTheModelAndWarnsOfThinClasses) {
  testing::TempDir dir;
  write_corpus_with_a_rare_class(dir / "corpus");
  std::string output;
  ASSERT_EQ(
      testing::run_command(
          fmt::format("'{}' run '{}' --store '{}' --runs-dir '{}' --max-epochs 20 --threads 1 "
                      "--val-fraction 0.2 --progress false 2>&1",
                      HEADROOM_BINARY, (dir / "corpus").string(), (dir / "store").string(),
                      (dir / "runs").string()),
          &output),
      0)
      << output;
  std::ifstream in(dir / "runs" / "store" / "node_gcn" / "evaluation.json");
  const auto evaluation = nlohmann::json::parse(in);

  const auto model = evaluation["splits"]["test"]["accuracy"].get<double>();
  const auto baseline = evaluation["baseline"]["splits"]["test"]["accuracy"].get<double>();
  EXPECT_NE(output.find(fmt::format("node gcn:           test accuracy {:.4f}", model)),
            std::string::npos)
      << output;
  EXPECT_NE(output.find(fmt::format("baseline tf-idf+lr: test accuracy {:.4f}", baseline)),
            std::string::npos)
      << output;
  // 30 separable test documents and 2 of a class no model saw: 30 of 32 at best.
  EXPECT_LE(baseline, 30.0 / 32 + 1e-12);
  EXPECT_GE(baseline, 0.85);
  EXPECT_EQ(evaluation["baseline"]["splits"]["test"]["count"], 32);

  ASSERT_EQ(evaluation["warnings"].size(), 2U) << evaluation["warnings"];
  EXPECT_NE(evaluation["warnings"][0].get<std::string>().find("'rare' has no training documents"),
            std::string::npos);
  EXPECT_NE(evaluation["warnings"][1].get<std::string>().find("'rare' has only 2 test documents"),
            std::string::npos);
  for (const auto& warning : evaluation["warnings"])
    EXPECT_NE(output.find("warning: " + warning.get<std::string>()), std::string::npos) << output;

  // The CAN task's vocabulary has no place in a text run's output or log.
  const auto log = testing::read_bytes(dir / "runs" / "store" / "node_gcn" / "log.txt");
  ASSERT_FALSE(log.empty());
  for (const auto* word : {"vehicle", "attack", "can bus", "frame"}) {
    EXPECT_EQ(lowercase(output).find(word), std::string::npos) << word << " in:\n" << output;
    EXPECT_EQ(lowercase(log).find(word), std::string::npos) << word << " in:\n" << log;
  }
}

}  // namespace
}  // namespace headroom
