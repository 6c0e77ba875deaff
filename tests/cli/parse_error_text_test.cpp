// Issue 15 item 7 for the command line itself: CLI11's parse errors quote what was typed, and a
// value typed (or scripted) with control bytes, or megabytes long, must reach the terminal
// escaped and bounded, from both binaries, as every other error that quotes input does.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "test_support.hpp"

namespace headroom {
namespace {

void expect_escaped_and_bounded(const std::string& binary, const std::string& arguments) {
  // The value is made by the shell (an argument may be up to 128 kB, a command line not much
  // more): "7", ESC "[31mred", 0x01, then 100,000 x.
  const std::string hostile =
      "\"$(printf '7\\033[31mred\\001'; head -c 100000 /dev/zero | tr '\\0' x)\"";
  std::string output;
  const auto status =
      testing::run_command(binary + " " + arguments + " " + hostile + " 2>&1", &output);
  EXPECT_NE(status, 0) << output.substr(0, 400);
  EXPECT_NE(output.find("headroom: error: "), std::string::npos) << output.substr(0, 400);
  EXPECT_NE(output.find("\\x1B[31mred\\x01"), std::string::npos) << output.substr(0, 400);
  EXPECT_EQ(output.find('\x1b'), std::string::npos) << "a raw escape byte reached the terminal";
  EXPECT_EQ(output.find('\x01'), std::string::npos);
  EXPECT_LT(output.size(), 2000U) << "a 100 kB value must not become a 100 kB message";
  EXPECT_NE(output.find("bytes cut"), std::string::npos) << output.substr(0, 400);
}

TEST(ParseErrorText, ConversionErrorsAreEscapedAndBoundedInTheDataBinary) {
  testing::TempDir dir;
  std::filesystem::create_directories(dir / "data");
  expect_escaped_and_bounded(HEADROOM_BINARY, "preprocess '" + (dir / "data").string() +
                                                  "' --out '" + (dir / "out").string() +
                                                  "' --threads");
}

TEST(ParseErrorText, ConversionErrorsAreEscapedAndBoundedInTheTrainingBinary) {
  expect_escaped_and_bounded(HEADROOM_BINARY, "normal --store s --learning-rate");
}

TEST(ParseErrorText, VocabularyFromIsEscapedAndBounded) {
  testing::TempDir dir;
  std::filesystem::create_directories(dir / "data");
  expect_escaped_and_bounded(HEADROOM_BINARY, "preprocess '" + (dir / "data").string() +
                                                  "' --out '" + (dir / "out").string() +
                                                  "' --vocabulary-from");
}

TEST(ParseErrorText, HelpStillPrintsAndExitsZero) {
  std::string output;
  EXPECT_EQ(testing::run_command(std::string(HEADROOM_BINARY) + " preprocess --help 2>&1", &output),
            0);
  EXPECT_NE(output.find("--out"), std::string::npos) << output;
  EXPECT_EQ(output.find("headroom: error"), std::string::npos) << output;
}

}  // namespace
}  // namespace headroom
