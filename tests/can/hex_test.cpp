#include "headroom/can/hex.hpp"

#include <gtest/gtest.h>

namespace headroom::can {
namespace {

TEST(HexFormatTest, ParsesIdsWithAndWithoutPrefix) {
  std::uint32_t v = 0;
  EXPECT_TRUE(parse_hex_u32("1E5", v));
  EXPECT_EQ(v, 0x1E5u);
  EXPECT_TRUE(parse_hex_u32("0x1fffffff", v));
  EXPECT_EQ(v, 0x1FFFFFFFu);
  EXPECT_TRUE(parse_hex_u32("0000000000F9", v));  // leading zeros do not count
  EXPECT_EQ(v, 0xF9u);
  EXPECT_TRUE(parse_hex_u32("0", v));
  EXPECT_EQ(v, 0u);
  EXPECT_FALSE(parse_hex_u32("", v));
  EXPECT_FALSE(parse_hex_u32("0x", v));
  EXPECT_FALSE(parse_hex_u32("12G", v));
  EXPECT_FALSE(parse_hex_u32("123456789", v));
  EXPECT_FALSE(parse_hex_u32("1 2", v));
  // Surrounding whitespace is padding (exporters leave tabs and CRs), inner whitespace is not.
  EXPECT_TRUE(parse_hex_u32(" 12\t", v));
  EXPECT_EQ(v, 0x12u);
  EXPECT_TRUE(parse_hex_u32("\t0x7FF\r\n", v));
  EXPECT_EQ(v, 0x7FFu);
  EXPECT_FALSE(parse_hex_u32(" \t ", v));
}

TEST(HexFormatTest, PayloadPaddingIsIgnoredButNotInnerBlanks) {
  std::array<std::uint8_t, kMaxPayloadBytes> out{};
  auto r = decode_hex_payload("DEADBEEF\t", out);
  EXPECT_EQ(r.error, HexPayloadError::kNone);
  EXPECT_EQ(r.bytes, 4);
  EXPECT_EQ(out[3], 0xEF);
  out = {};
  r = decode_hex_payload(" \r\n", out);
  EXPECT_EQ(r.error, HexPayloadError::kNone);
  EXPECT_EQ(r.bytes, 0);
  r = decode_hex_payload("DE AD", out);  // no separator allowed: the blank is not padding
  EXPECT_EQ(r.error, HexPayloadError::kInvalidDigit);
  EXPECT_EQ(r.bad_char, ' ');
}

TEST(HexFormatTest, DecodesPayloadsAndDescribesErrors) {
  std::array<std::uint8_t, kMaxPayloadBytes> out{};
  auto r = decode_hex_payload("DEADbeef", out);
  EXPECT_EQ(r.error, HexPayloadError::kNone);
  EXPECT_EQ(r.bytes, 4);
  EXPECT_EQ(out[0], 0xDE);
  EXPECT_EQ(out[3], 0xEF);
  EXPECT_EQ(out[4], 0);

  out = {};
  r = decode_hex_payload("de ad be", out, ' ');
  EXPECT_EQ(r.bytes, 3);
  EXPECT_EQ(out[2], 0xBE);

  r = decode_hex_payload("d ead", out, ' ');
  EXPECT_EQ(describe_hex_payload_error(r, "payload"), "separator inside a byte in payload");
  r = decode_hex_payload("0g", out);
  EXPECT_EQ(describe_hex_payload_error(r, "payload"), "invalid hex digit 'g' in payload");
  r = decode_hex_payload("0\x01", out);
  EXPECT_EQ(describe_hex_payload_error(r, "payload"), "invalid hex digit '\\x01' in payload");
  r = decode_hex_payload("000", out);
  EXPECT_EQ(describe_hex_payload_error(r, "payload"), "odd number of hex digits (3) in payload");
  out = {};
  r = decode_hex_payload("00112233445566778899", out);
  EXPECT_EQ(describe_hex_payload_error(r, "payload"), "payload has 10 bytes (max 8)");
  EXPECT_EQ(out[7], 0x77);  // nothing written past the 8th byte
}

}  // namespace
}  // namespace headroom::can
