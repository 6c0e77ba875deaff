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
  EXPECT_FALSE(parse_hex_u32(" 12", v));
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
