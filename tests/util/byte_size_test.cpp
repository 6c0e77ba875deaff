#include "headroom/util/byte_size.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

namespace headroom::util {
namespace {

TEST(ByteSize, ParsesDecimalAndBinaryUnits) {
  EXPECT_EQ(parse_byte_size("4096"), 4096);
  EXPECT_EQ(parse_byte_size("1GB"), 1000000000);
  EXPECT_EQ(parse_byte_size("1 GiB"), 1073741824);
  EXPECT_EQ(parse_byte_size("1.5G"), 1610612736);
  EXPECT_EQ(parse_byte_size("300MB"), 300000000);
  EXPECT_EQ(parse_byte_size("512mib"), 536870912);
  EXPECT_EQ(parse_byte_size("2k"), 2048);
  EXPECT_EQ(parse_byte_size(" 7 b "), 7);
}

TEST(ByteSize, RejectsWhatIsNotASize) {
  for (const char* bad : {"", "GB", "-1GB", "1 XB", "1GB extra", "1..2G", "1e400"}) {
    EXPECT_THROW(parse_byte_size(bad), std::invalid_argument) << bad;
  }
  try {
    parse_byte_size("12 parsecs");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("12 parsecs"), std::string::npos);
  }
}

TEST(ByteSize, FormatsWithTheLargestFittingBinaryUnit) {
  EXPECT_EQ(format_byte_size(512), "512 B");
  EXPECT_EQ(format_byte_size(1536), "1.5 KiB");
  EXPECT_EQ(format_byte_size(300.0 * 1048576), "300.0 MiB");
  EXPECT_EQ(format_byte_size(1.5 * 1073741824), "1.50 GiB");
}

}  // namespace
}  // namespace headroom::util
