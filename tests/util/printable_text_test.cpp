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

TEST(PrintableText, C1ControlsAndBytesThatAreNotUtf8AreEscaped) {
  // CSI as one 8-bit byte, and as U+009B in UTF-8: both start an escape sequence somewhere.
  const std::string csi_byte = "\x9B";
  const std::string csi_utf8 = "\xC2\x9B";
  EXPECT_EQ(printable("a" + csi_byte + "31mb"), "a\\x9B31mb");
  EXPECT_EQ(printable("a" + csi_utf8 + "31mb"), "a\\xC2\\x9B31mb");
  EXPECT_EQ(printable("\xC2\xA0 \xE2\x82\xAC \xF0\x9F\x98\x80"),
            "\xC2\xA0 \xE2\x82\xAC \xF0\x9F\x98\x80");
  // A cut-off sequence, an overlong NUL, a surrogate, a stray continuation byte.
  EXPECT_EQ(printable("\xE2\x82"), "\\xE2\\x82");
  EXPECT_EQ(printable("\xC0\x80"), "\\xC0\\x80");
  EXPECT_EQ(printable("\xED\xA0\x80"), "\\xED\\xA0\\x80");
  EXPECT_EQ(printable("\x80x"), "\\x80x");
}

TEST(PrintableText, ACutDoesNotSplitACharacter) {
  std::string text;
  for (int i = 0; i < 100; ++i) text += "\xE2\x82\xAC";  // 300 bytes of euro signs
  const std::string shown = printable(text, 31);
  EXPECT_EQ(shown.find("\\x"), std::string::npos) << shown;
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
