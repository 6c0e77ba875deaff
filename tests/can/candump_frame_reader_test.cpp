#include "headroom/can/candump_frame_reader.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "headroom/util/input_error.hpp"
#include "reader_test_support.hpp"
#include "test_support.hpp"

namespace headroom::can {
namespace {

using headroom::testing::BadRowCase;
using headroom::testing::catch_input_error;
using headroom::testing::expect_bad_rows;
using headroom::testing::frame;
using headroom::testing::read_all;
using headroom::testing::TempDir;
using headroom::testing::write_text_file;

// Writes `text` to a temporary candump log and reads every frame of it; `skipped` gets the count of
// rows dropped under kSkip.
std::vector<CanFrame> read_candump_text(const std::string& text, BadRowPolicy policy,
                                        std::uint64_t& skipped) {
  TempDir dir;
  const auto file = dir / "drive.log";
  write_text_file(file, text);
  CandumpFrameReader reader(file, policy);
  auto frames = read_all(reader);
  skipped = reader.skipped_rows();
  return frames;
}

TEST(CandumpReaderTest, FramesHaveExactValuesAndAreNormal) {
  // frame() leaves the label 0 (normal).
  const std::vector<CanFrame> expected = {
      frame(1436509052.249713, 0x123, {0xDE, 0xAD, 0xBE, 0xEF}),
      frame(1436509052.25, 0x1F334455, {0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88}),
      frame(1436509052.26, 0x7FF, {}),  // remote frame: no data
      frame(1436509052.27, 0x100, {}),
      frame(1436509052.28, 0x0AB, {1, 2, 3}),
      frame(1436509052.29, 0x321, {}),
      frame(1436509052.3, 0x456, {1, 2, 3, 4, 5, 6, 7, 8}),
  };
  std::uint64_t skipped = 99;
  EXPECT_EQ(read_candump_text("(1436509052.249713) can0 123#DEADBEEF\n"
                              "\n"
                              "(1436509052.250000) can0 1F334455#1122334455667788\r\n"
                              "(1436509052.260000) vcan1 7FF#R\n"
                              "(1436509052.270000) can0 100#\n"
                              "  (1436509052.280000)  can0   0AB#01.02.03  \n"
                              "(1436509052.290000) can0 321#R4 R\n"
                              "(1436509052.300000) can0 456#0102030405060708_9",
                              BadRowPolicy::kError, skipped),
            expected);
  EXPECT_EQ(skipped, 0u);
}

TEST(CandumpReaderTest, CanFdFrameIsAClearError) {
  TempDir dir;
  const auto file = dir / "fd.log";
  write_text_file(file, "(1.0) can0 123#00\n(2.0) can0 123##1DEADBEEF\n");
  CandumpFrameReader reader(file, BadRowPolicy::kError);
  const util::InputError e = catch_input_error([&] { read_all(reader); });
  EXPECT_EQ(e.file(), file);
  EXPECT_EQ(e.line(), 2u);
  EXPECT_EQ(e.reason(), "CAN FD frames are not supported");
}

TEST(CandumpReaderTest, MalformedLinesGiveReasons) {
  const std::vector<BadRowCase> cases = {
      {"(1.0) can0 12G#00", "id", "ID '12G' is not hexadecimal"},
      {"(1.0) can0 123456789#00", "id", "ID '123456789' exceeds 29 bits"},
      {"(1.0) can0 123#0G", "data", "invalid hex digit 'G' in payload"},
      {"(1.0) can0 123#000", "data", "odd number of hex digits (3) in payload"},
      {"(1.0) can0 123#000102030405060708", "data", "payload has 9 bytes (max 8)"},
      {"(abc) can0 123#00", "timestamp", "timestamp 'abc' is not a number"},
      {"(1e308) can0 123#00", "timestamp",
       "timestamp '1e308' is not a plausible time in seconds: more than 1e11 s (about 3,000 "
       "years) from 0"},
      {"1.0 can0 123#00", "timestamp", "expected '(seconds)' at the start of a candump line"},
      {"(1.0) can0 12300", "frame",
       "frame '12300' has neither ID#DATA (log layout) nor a '[length]' after the ID (screen "
       "layout)"},
      {"(1.0) can0 123 [3] 01 02", "data", "length [3] but only 2 data bytes"},
      {"can0 123 [2] 01 0G", "data", "data byte '0G' is not two hex digits"},
      {"can0 123 [2] 01 02 03", "data", "unexpected text '03' after 2 data bytes"},
      {"can0 123 [9] 01", "data", "length '[9]' is not a digit 0..8"},
      {"can0 123 [08] 01 02 03 04 05 06 07 08", "data", "CAN FD frames are not supported"},
      {"can0 12G [1] 01", "id", "ID '12G' is not hexadecimal"},
      {"can0 123 [1] remote", "data", "expected 'remote request' after the length"},
      {"(1.0) can0", "frame", "missing frame after the interface name"},
      {"(1.0) can0 123#00 junk", "frame", "unexpected text 'junk' after the frame"},
  };
  expect_bad_rows(cases, "(0.5) can0 100#01\n\n", "", [](const std::filesystem::path& file) {
    CandumpFrameReader reader(file, BadRowPolicy::kError);
    read_all(reader);
  });
}

TEST(CandumpReaderTest, ScreenLayoutWithAndWithoutTimestampsReadsExactFrames) {
  // candump's default output (what a terminal shows), with -ta, without timestamps, with -a.
  const std::vector<CanFrame> expected = {
      frame(1436509052.249713, 0x1F334455, {0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88}),
      frame(0.0, 0x123, {0xDE, 0xAD}),
      frame(0.0, 0x7FF, {}),  // remote request: no data
      frame(0.0, 0x100, {}),
      frame(2.5, 0x0AB, {0x41, 0x42}),
  };
  std::uint64_t skipped = 99;
  EXPECT_EQ(read_candump_text("(1436509052.249713)  can0  1F334455   [8]  11 22 33 44 55 66 77 88\n"
                              "  can0  123   [2]  DE AD\n"
                              "  vcan1  7FF   [1]  remote request\n"
                              "  can0  100   [0] \n"
                              "(2.500000)  can0  0AB   [2]  41 42   'AB'\n",
                              BadRowPolicy::kError, skipped),
            expected);
  EXPECT_EQ(skipped, 0u);
}

TEST(CandumpReaderTest, SkipPolicyCountsBadLines) {
  std::uint64_t skipped = 0;
  EXPECT_EQ(read_candump_text("(1.0) can0 100#01\n"
                              "(2.0) can0 101##0AA\n"
                              "(3.0) can0 10Z#01\n"
                              "(4.0) can0 102#02\n",
                              BadRowPolicy::kSkip, skipped),
            (std::vector<CanFrame>{frame(1.0, 0x100, {0x01}), frame(4.0, 0x102, {0x02})}));
  EXPECT_EQ(skipped, 2u);
}

TEST(CandumpReaderTest, SmallBlocksReadTheSameFrames) {
  TempDir dir;
  const auto file = dir / "many.log";
  std::string text;
  std::vector<CanFrame> expected;
  for (int i = 0; i < 500; ++i) {
    text += "(" + std::to_string(1000 + i) + ".125) can0 " + std::to_string(100 + i % 600) + "#" +
            std::string(static_cast<std::size_t>(2 * (i % 9)), 'A') + "\n";
    expected.push_back(
        frame(1000 + i + 0.125,
              static_cast<std::uint32_t>(std::stoul(std::to_string(100 + i % 600), nullptr, 16)),
              std::vector<std::uint8_t>(static_cast<std::size_t>(i % 9), 0xAA)));
  }
  write_text_file(file, text);
  for (std::size_t block : {std::size_t{5}, std::size_t{333}}) {
    CandumpFrameReader reader(file, BadRowPolicy::kError, block);
    EXPECT_EQ(read_all(reader), expected) << block;
  }
}

TEST(CandumpReaderTest, EmptyFileIsAnInputError) {
  TempDir dir;
  write_text_file(dir / "empty.log", "");
  const util::InputError e =
      catch_input_error([&] { CandumpFrameReader(dir / "empty.log", BadRowPolicy::kError); });
  EXPECT_EQ(e.reason(), "file is empty (0 bytes)");
  EXPECT_EQ(e.line(), 0u);
}

}  // namespace
}  // namespace headroom::can
