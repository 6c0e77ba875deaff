// The HCRL Car-Hacking attack-free text layout (normal_run_data.txt).
#include "headroom/can/hcrl_text_frame_reader.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "headroom/can/log_format.hpp"
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

// Lines as the published file writes them (fields aligned with runs of spaces).
constexpr const char* kPublishedLines =
    "Timestamp: 1479121434.850202        ID: 0350    000    DLC: 8    05 28 84 66 6d 00 00 a2\n"
    "Timestamp: 1479121434.850423        ID: 02c0    000    DLC: 8    14 00 00 00 00 00 00 00\n"
    "Timestamp: 1479121434.850977        ID: 0430    000    DLC: 2    ff 80\n";

TEST(HcrlTextReaderTest, PublishedLinesReadExactFramesAllNormal) {
  TempDir dir;
  const auto file = dir / "normal_run_data.txt";
  write_text_file(file, std::string(kPublishedLines) + "\n" +
                            // Variants: no space after a colon, no flags field, DLC 0, CRLF.
                            "timestamp:1479121434.851\tID:18fef100 DLC:1 0A\r\n"
                            "Timestamp: 1479121434.852  ID: 7ff  000  DLC: 0\n");
  HcrlTextFrameReader reader(file, BadRowPolicy::kError);
  const std::vector<CanFrame> expected = {
      frame(1479121434.850202, 0x350, {0x05, 0x28, 0x84, 0x66, 0x6d, 0x00, 0x00, 0xa2}),
      frame(1479121434.850423, 0x2c0, {0x14, 0, 0, 0, 0, 0, 0, 0}),
      frame(1479121434.850977, 0x430, {0xff, 0x80}),
      frame(1479121434.851, 0x18fef100, {0x0a}),
      frame(1479121434.852, 0x7ff, {}),
  };
  EXPECT_EQ(read_all(reader), expected);  // frame() leaves every label 0 (normal)
  EXPECT_EQ(reader.skipped_rows(), 0u);
}

TEST(HcrlTextReaderTest, DetectedAndOpenedByTheFactory) {
  TempDir dir;
  const auto file = dir / "normal_run_data.txt";
  write_text_file(file, std::string("\n") + kPublishedLines);
  EXPECT_EQ(detect_format(file), LogFormat::kHcrlCarHackingText);
  auto reader = open_frame_reader(file, ReaderOptions{});
  const auto frames = read_all(*reader);
  ASSERT_EQ(frames.size(), 3u);
  EXPECT_EQ(frames[2], frame(1479121434.850977, 0x430, {0xff, 0x80}));
  EXPECT_EQ(parse_log_format("hcrl-car-hacking-text"), LogFormat::kHcrlCarHackingText);
}

TEST(HcrlTextReaderTest, MalformedLinesNameColumnAndReason) {
  const std::vector<BadRowCase> cases = {
      {"ID: 0350 000 DLC: 1 00", "timestamp", "expected 'Timestamp:' at the start of the line"},
      {"Timestamp: 1.5x ID: 0350 000 DLC: 1 00", "timestamp", "timestamp '1.5x' is not a number"},
      {"Timestamp: 1e308 ID: 0350 000 DLC: 1 00", "timestamp",
       "timestamp '1e308' is not a plausible time in seconds: more than 1e11 s (about 3,000 "
       "years) from 0"},
      {"Timestamp: 1.5 0350 000 DLC: 1 00", "id", "expected 'ID:' after the timestamp"},
      {"Timestamp: 1.5 ID: 03G0 000 DLC: 1 00", "id", "ID '03G0' is not hexadecimal"},
      {"Timestamp: 1.5 ID: 123456789 000 DLC: 1 00", "id", "ID '123456789' exceeds 29 bits"},
      {"Timestamp: 1.5 ID: 0350 xyz DLC: 1 00", "flags",
       "expected a hex flags field or 'DLC:' after the ID, found 'xyz'"},
      {"Timestamp: 1.5 ID: 0350 000 8 00", "dlc", "expected 'DLC:' after the flags field"},
      {"Timestamp: 1.5 ID: 0350 000 DLC: 9 00", "dlc", "DLC '9' is not a digit 0..8"},
      {"Timestamp: 1.5 ID: 0350 000 DLC: 3 00 01", "data", "DLC 3 but only 2 data bytes"},
      {"Timestamp: 1.5 ID: 0350 000 DLC: 2 00 1", "data", "data byte '1' is not two hex digits"},
      {"Timestamp: 1.5 ID: 0350 000 DLC: 1 00 01", "data",
       "unexpected text '01' after 1 data bytes"},
  };
  expect_bad_rows(cases, "Timestamp: 1.0 ID: 0100 000 DLC: 1 01\n\n", "",
                  [](const std::filesystem::path& file) {
                    HcrlTextFrameReader reader(file, BadRowPolicy::kError);
                    read_all(reader);
                  });
}

TEST(HcrlTextReaderTest, SkipPolicyCountsBadLinesAndSmallBlocksReadTheSame) {
  TempDir dir;
  const auto file = dir / "normal_run_data.txt";
  write_text_file(file, std::string(kPublishedLines) +
                            "Timestamp: 1479121434.86 ID: 0350 000 DLC: 8 05\n" + kPublishedLines);
  for (const std::size_t block : {std::size_t{7}, LineSource::kDefaultBlockBytes}) {
    SCOPED_TRACE(block);
    HcrlTextFrameReader reader(file, BadRowPolicy::kSkip, block);
    const auto frames = read_all(reader);
    ASSERT_EQ(frames.size(), 6u);
    EXPECT_EQ(frames[0], frames[3]);
    EXPECT_EQ(reader.skipped_rows(), 1u);
  }
  const util::InputError e = catch_input_error([&] {
    HcrlTextFrameReader reader(file, BadRowPolicy::kError);
    read_all(reader);
  });
  EXPECT_EQ(e.line(), 4u);
  EXPECT_EQ(e.column(), "data");
}

}  // namespace
}  // namespace headroom::can
