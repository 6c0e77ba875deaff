// util::printable: what every error message that quotes input goes through.
#include "headroom/util/printable_text.hpp"

#include <gtest/gtest.h>

#include <string>

namespace headroom::util {
namespace {

TEST(PrintableText, ControlBytesAreEscapedAndTextIsKept) {
  EXPECT_EQ(printable("plain text: ü"), "plain text: ü");
  EXPECT_EQ(printable(std::string("a") + '\0' + "b\x1b[0m\x7f\n"), "a\\x00b\\x1B[0m\\x7F\\x0A");
}

TEST(PrintableText, LongTextKeepsItsStartAndEndAroundACutNote) {
  const std::string text = "start" + std::string(10'000, 'x') + "end";
  const std::string shown = printable(text, 30);
  EXPECT_EQ(shown.rfind("start", 0), 0U) << shown;
  EXPECT_EQ(shown.substr(shown.size() - 3), "end") << shown;
  EXPECT_NE(shown.find("[9978 bytes cut]"), std::string::npos) << shown;
  EXPECT_LT(shown.size(), 60U);
}

TEST(PrintableText, PathsAreEscapedAndBounded) {
  EXPECT_EQ(printable_path(std::filesystem::path("runs/a\nb")), "runs/a\\x0Ab");
  const std::string shown = printable_path(std::filesystem::path(std::string(5000, 'p')));
  EXPECT_LT(shown.size(), kMaxQuotedPathBytes + 40);
  EXPECT_NE(shown.find("bytes cut"), std::string::npos);
}

}  // namespace
}  // namespace headroom::util
