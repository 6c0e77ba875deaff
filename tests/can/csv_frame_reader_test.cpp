// The CSV engine with the can-train-and-test preset, the HCRL preset and hand-written mappings.
#include "headroom/can/csv_frame_reader.hpp"

#include <gtest/gtest.h>

#include <cstring>

#include <fmt/format.h>

#include <stdexcept>
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

std::vector<CanFrame> read_file(const std::filesystem::path& file, const CsvColumnMapping& mapping,
                                BadRowPolicy policy = BadRowPolicy::kError,
                                std::uint64_t* skipped = nullptr) {
  CsvFrameReader reader(file, mapping, policy);
  auto frames = read_all(reader);
  if (skipped != nullptr) *skipped = reader.skipped_rows();
  return frames;
}

// Writes `text` to a temporary file and reads every frame of it with `mapping` under kError.
std::vector<CanFrame> read_csv_text(const std::string& text, const CsvColumnMapping& mapping) {
  TempDir dir;
  const auto file = dir / "log.csv";
  write_text_file(file, text);
  return read_file(file, mapping);
}

constexpr const char* kHeader = "timestamp,arbitration_id,data_field,attack\n";
constexpr const char* kHcrlHeader =
    "Timestamp,CAN ID,DLC,DATA[0],DATA[1],DATA[2],DATA[3],DATA[4],DATA[5],DATA[6],DATA[7],Flag\n";

TEST(CsvReaderTest, CanTrainTestFramesHaveExactValues) {
  const std::vector<CanFrame> expected = {
      frame(1672531200.0, 0x1E5, {0x46, 0x01, 0x96, 0xE0, 0x01, 0xFE, 0x67, 0x01}, 0),
      frame(1672531200.000023, 0xF9, {0x93, 0x01, 0x00, 0x00, 0x00}, 1),
      frame(1672531200.5, 0x7FF, {}, 0),
      frame(1672531201.25, 0x1FFFFFFF, {0xDE, 0xAD, 0xBE, 0xEF}, 1),
  };
  EXPECT_EQ(read_csv_text(std::string(kHeader) + "1672531200.0,1E5,460196E001FE6701,0\n"
                                                 "1672531200.000023,F9,9301000000,1\n"
                                                 "1672531200.5,7ff,,0\n"
                                                 "1672531201.25,1fffffff,deadbeef,1\n",
                          can_train_test_mapping()),
            expected);
}

TEST(CsvReaderTest, ToleratesCrlfTrailingSpaceQuotesBlankLinesAndNoFinalNewline) {
  const std::vector<CanFrame> expected = {
      frame(1.5, 0x1A, {0x01, 0x02}, 1),
      frame(2.5, 0x2B, {0x03, 0x04}, 0),
      frame(3.5, 0x3C, {0x05}, 1),
  };
  EXPECT_EQ(read_csv_text("\xEF\xBB\xBF"
                          "Timestamp , Arbitration_ID,DATA_FIELD,attack\r\n"
                          "\r\n"
                          "1.5,\"0x1A\", \"0102\" ,1  \r\n"
                          "   \n"
                          "2.5 ,2B,0304,0\t\r\n"
                          "3.5,3C,05,1",
                          can_train_test_mapping()),
            expected);
}

TEST(CsvReaderTest, HeaderOnlyFileYieldsNoFrames) {
  TempDir dir;
  const auto file = dir / "header.csv";
  write_text_file(file, kHeader);
  std::uint64_t skipped = 99;
  EXPECT_TRUE(read_file(file, can_train_test_mapping(), BadRowPolicy::kError, &skipped).empty());
  EXPECT_EQ(skipped, 0u);
}

TEST(CsvReaderTest, InvalidHexDigitNamesFileLineColumnAndDigit) {
  TempDir dir;
  const auto file = dir / "bad.csv";
  write_text_file(file, std::string(kHeader) + "1.0,1E5,00,0\n1.1,1E5,00G0,0\n");
  const util::InputError e = catch_input_error([&] { read_file(file, can_train_test_mapping()); });
  EXPECT_EQ(e.file(), file);
  EXPECT_EQ(e.line(), 3u);
  EXPECT_EQ(e.column(), "data_field");
  EXPECT_EQ(e.reason(), "invalid hex digit 'G' in payload");
  const std::string what = e.what();
  EXPECT_NE(what.find(file.string() + ":3"), std::string::npos) << what;
  EXPECT_NE(what.find("data_field"), std::string::npos) << what;
}

// Quoted input in a message is escaped and bounded: a NUL does not cut the message short, control
// bytes do not reach the terminal, and a 10 MB field does not become a 10 MB line.
TEST(CsvReaderTest, ErrorTextIsEscapedAndBounded) {
  TempDir dir;
  const auto nul = dir / "nul.csv";
  write_text_file(nul, std::string(kHeader) + "1.0" + '\0' + "\x1b[31m,1E5,00,0\n");
  const util::InputError e = catch_input_error([&] { read_file(nul, can_train_test_mapping()); });
  const std::string what = e.what();
  EXPECT_EQ(what.size(), std::strlen(e.what()));  // no NUL inside
  EXPECT_NE(what.find("1.0\\x00\\x1B[31m"), std::string::npos) << what;
  EXPECT_NE(what.find("is not a number"), std::string::npos) << what;
  for (const char c : what) EXPECT_FALSE(static_cast<unsigned char>(c) < 0x20) << what;

  const auto huge = dir / "huge.csv";
  write_text_file(huge, std::string(kHeader) + std::string(10'000'000, '7') + "x,1E5,00,0\n");
  const util::InputError big =
      catch_input_error([&] { read_file(huge, can_train_test_mapping()); });
  const std::string big_what = big.what();
  EXPECT_LT(big_what.size(), 1000U);
  EXPECT_NE(big_what.find(huge.string() + ":2"), std::string::npos);
  EXPECT_NE(big_what.find("bytes cut"), std::string::npos) << big_what;
  EXPECT_NE(big_what.find("is not a number"), std::string::npos) << big_what;  // the reason stays
}

TEST(CsvReaderTest, RowErrorsGiveTheReasonAndColumn) {
  const std::vector<BadRowCase> cases = {
      {"1.2,1E5,000102030405060708,0", "data_field", "payload has 9 bytes (max 8)"},
      {"1.2,1E5,012,0", "data_field", "odd number of hex digits (3) in payload"},
      {"1.2,1E5,00,X", "attack", "label 'X' is neither attack (1) nor normal (0)"},
      {"1.2,1E5,00", "", "expected 4 columns, found 3"},
      {"1.2,1E5,00,0,7", "", "expected 4 columns, found 5"},
      {"1.2,ZZ,00,0", "arbitration_id", "ID 'ZZ' is not hexadecimal"},
      {"1.2,,00,0", "arbitration_id", "ID is empty"},
      {"1.2,123456789,00,0", "arbitration_id", "ID '123456789' exceeds 29 bits"},
      {"1.2,20000000,00,0", "arbitration_id", "ID '20000000' exceeds 29 bits"},
      {"abc,1E5,00,0", "timestamp", "timestamp 'abc' is not a number"},
      {"1.2x,1E5,00,0", "timestamp", "timestamp '1.2x' is not a number"},
      {"nan,1E5,00,0", "timestamp", "timestamp 'nan' is not a finite number"},
      // Finite, but no log's (issue 25 item 9): the timing features would overflow to NaN.
      {"1e308,1E5,00,0", "timestamp",
       "timestamp '1e308' is not a plausible time in seconds: more than 1e11 s (about 3,000 "
       "years) from 0"},
      {"-1.5e11,1E5,00,0", "timestamp",
       "timestamp '-1.5e11' is not a plausible time in seconds: more than 1e11 s (about 3,000 "
       "years) from 0"},
      {"1.2,1E5,\"00,0", "data_field", "unterminated quoted field"},
  };
  expect_bad_rows(
      cases, std::string(kHeader) + "1.0,1E5,00,0\n", "1.5,1E5,00,0\n",
      [](const std::filesystem::path& file) { read_file(file, can_train_test_mapping()); });
}

// The bound on timestamps leaves every plausible one alone: negative times (a log relative to a
// trigger), gaps of 1e-300 s, and values up to 1e11 s.
TEST(CsvReaderTest, PlausibleExtremeTimestampsAreReadAsWritten) {
  const auto frames = read_csv_text(std::string(kHeader) +
                                        "-99999999999,1,00,0\n"
                                        "-0.5,1,00,0\n"
                                        "1e-300,1,00,0\n"
                                        "2e-300,1,00,0\n"
                                        "1e11,1,00,0\n",
                                    can_train_test_mapping());
  std::vector<double> times;
  for (const auto& f : frames) times.push_back(f.timestamp_s);
  EXPECT_EQ(times, (std::vector<double>{-99999999999.0, -0.5, 1e-300, 2e-300, 1e11}));
}

TEST(CsvReaderTest, SkipPolicyDropsAndCountsBadRows) {
  TempDir dir;
  const auto file = dir / "mixed.csv";
  write_text_file(file, std::string(kHeader) +
                            "1.0,100,00,0\n"
                            "1.1,10G,00,0\n"
                            "1.2,200,01,1\n"
                            "1.3,300,0,0\n"
                            "\n"
                            "1.4,400,02,2\n"
                            "1.5,500,03,0\n");
  std::uint64_t skipped = 0;
  const auto frames = read_file(file, can_train_test_mapping(), BadRowPolicy::kSkip, &skipped);
  ASSERT_EQ(frames.size(), 3u);
  EXPECT_EQ(frames[0], frame(1.0, 0x100, {0x00}, 0));
  EXPECT_EQ(frames[1], frame(1.2, 0x200, {0x01}, 1));
  EXPECT_EQ(frames[2], frame(1.5, 0x500, {0x03}, 0));
  EXPECT_EQ(skipped, 3u);
}

TEST(CsvReaderTest, HeaderMissingAMappedColumnIsAnInputError) {
  TempDir dir;
  const auto file = dir / "wrong.csv";
  write_text_file(file, "timestamp,arbitration_id,payload,attack\n");
  const util::InputError e = catch_input_error([&] { read_file(file, can_train_test_mapping()); });
  EXPECT_EQ(e.line(), 1u);
  EXPECT_EQ(e.column(), "data_field");
  EXPECT_NE(e.reason().find("not found in the header"), std::string::npos) << e.reason();
  EXPECT_NE(e.reason().find("payload"), std::string::npos) << e.reason();
}

TEST(CsvReaderTest, EmptyMissingAndBlankFilesAreInputErrors) {
  TempDir dir;
  write_text_file(dir / "empty.csv", "");
  write_text_file(dir / "blank.csv", "\n  \n\r\n");
  const util::InputError empty =
      catch_input_error([&] { read_file(dir / "empty.csv", can_train_test_mapping()); });
  EXPECT_EQ(empty.reason(), "file is empty (0 bytes)");
  EXPECT_EQ(empty.file(), dir / "empty.csv");
  const util::InputError missing =
      catch_input_error([&] { read_file(dir / "nope.csv", can_train_test_mapping()); });
  EXPECT_NE(missing.reason().find("No such file"), std::string::npos) << missing.reason();
  const util::InputError blank =
      catch_input_error([&] { read_file(dir / "blank.csv", can_train_test_mapping()); });
  EXPECT_NE(blank.reason().find("no header line"), std::string::npos) << blank.reason();
}

// Every block size, from one byte up, must give the same frames: no row may be lost or split
// where a block ends, including a "\r\n" cut between two blocks.
TEST(CsvReaderTest, BlockBoundariesNeverDropOrSplitRows) {
  TempDir dir;
  const auto file = dir / "big.csv";
  std::string text = kHeader;
  std::vector<CanFrame> expected;
  for (int i = 0; i < 3000; ++i) {
    const std::uint32_t id = static_cast<std::uint32_t>((i * 37) % 0x800);
    std::vector<std::uint8_t> bytes;
    std::string hex;
    for (int b = 0; b < i % 9; ++b) {
      bytes.push_back(static_cast<std::uint8_t>(i + b));
      hex += fmt::format("{:02X}", static_cast<unsigned>(bytes.back()));
    }
    const double t = 1000.0 + i * 0.001;
    text += fmt::format("{},{:X},{},{}{}", t, id, hex, i % 5 == 0 ? 1 : 0, i % 2 ? "\r\n" : "\n");
    expected.push_back(frame(t, id, bytes, i % 5 == 0 ? 1 : 0));
  }
  write_text_file(file, text);
  for (std::size_t block :
       {std::size_t{1}, std::size_t{7}, std::size_t{64}, std::size_t{4093}, std::size_t{1} << 20}) {
    SCOPED_TRACE(block);
    CsvFrameReader reader(file, can_train_test_mapping(), BadRowPolicy::kError, block);
    EXPECT_EQ(read_all(reader, 1000), expected);
  }
}

TEST(CsvReaderTest, FileLargerThanTheDefaultBlockKeepsEveryRowAndLineNumber) {
  TempDir dir;
  const auto file = dir / "large.csv";
  std::string text = kHeader;
  constexpr int kRows = 80000;  // about 2.5 MiB: the default 1 MiB block is refilled twice
  for (int i = 0; i < kRows; ++i)
    text += fmt::format("{}.5,{:X},0011223344556677,0\n", i, i % 0x7FF);
  text += "1.0,1E5,0G,0\n";
  write_text_file(file, text);
  ASSERT_GT(text.size(), std::size_t{2} << 20);
  // kSkip reads past the bad last row, so every good row can be counted and checked.
  CsvFrameReader reader(file, can_train_test_mapping(), BadRowPolicy::kSkip);
  std::vector<CanFrame> buffer(4096);
  std::size_t total = 0;
  while (const std::size_t n = reader.read(buffer)) {
    for (std::size_t i = 0; i < n; ++i) {
      ASSERT_EQ(buffer[i].timestamp_s, static_cast<double>(total + i) + 0.5);
    }
    total += n;
  }
  EXPECT_EQ(total, static_cast<std::size_t>(kRows));
  EXPECT_EQ(reader.skipped_rows(), 1u);

  CsvFrameReader strict(file, can_train_test_mapping(), BadRowPolicy::kError);
  const util::InputError e = catch_input_error([&] {
    while (strict.read(buffer) > 0) {
    }
  });
  EXPECT_EQ(e.line(), static_cast<std::uint64_t>(kRows) + 2);
  EXPECT_EQ(e.reason(), "invalid hex digit 'G' in payload");
}

TEST(CsvReaderTest, LineLongerThanTheBlockStillParses) {
  TempDir dir;
  const auto file = dir / "wide.csv";
  write_text_file(file, std::string(kHeader) + "1.0,1E5," + "0102030405060708" + ",0" +
                            std::string(200, ' ') + "\n2.0,1E6,,1\n");
  CsvFrameReader reader(file, can_train_test_mapping(), BadRowPolicy::kError, 16);
  const auto frames = read_all(reader);
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_EQ(frames[0], frame(1.0, 0x1E5, {1, 2, 3, 4, 5, 6, 7, 8}, 0));
  EXPECT_EQ(frames[1], frame(2.0, 0x1E6, {}, 1));
}

TEST(HcrlCsvReaderTest, HeaderlessRaggedRowsShiftTheFlag) {
  const std::vector<CanFrame> expected = {
      frame(1478198376.389427, 0x316, {0x05, 0x21, 0x68, 0x09, 0x21, 0x21, 0x00, 0x6F}, 0),
      frame(1478198376.389636, 0x316, {0x05, 0x21}, 0),
      frame(1478198376.389864, 0x000, {0, 0, 0, 0, 0, 0, 0, 0}, 1),
      frame(1478198376.39, 0x18F, {}, 1),
  };
  EXPECT_EQ(read_csv_text("1478198376.389427,0316,8,05,21,68,09,21,21,00,6f,R\n"
                          "1478198376.389636,0316,2,05,21,R\n"
                          "1478198376.389864,0000,8,00,00,00,00,00,00,00,00,T\n"
                          "1478198376.390000,018f,0,T\r\n",
                          hcrl_car_hacking_mapping(false)),
            expected);
}

TEST(HcrlCsvReaderTest, HeaderVersionReadsTheSameFrames) {
  const std::vector<CanFrame> expected = {
      frame(1.25, 0x316, {0x05, 0x21, 0x68}, 1),
      frame(2.5, 0x2A0, {1, 2, 3, 4, 5, 6, 7, 8}, 0),
  };
  EXPECT_EQ(read_csv_text(std::string(kHcrlHeader) + "1.25,0316,3,05,21,68,T\n"
                                                     "2.5,02a0,8,01,02,03,04,05,06,07,08,r\n",
                          hcrl_car_hacking_mapping(true)),
            expected);
}

TEST(HcrlCsvReaderTest, RowErrorsNameTheColumn) {
  const std::vector<BadRowCase> cases = {
      {"1.0,0316,9,05,21,R", "DLC", "DLC 9 out of range 0..8"},
      {"1.0,0316,x,05,21,R", "DLC", "DLC 'x' is not a number"},
      {"1.0,0316,2,05,R", "", "expected 6 columns for DLC 2, found 5"},
      {"1.0,0316,2,05,21,X", "Flag", "label 'X' is neither attack (T) nor normal (R)"},
      {"1.0,0316,2,05,2G,R", "DATA[1]", "byte '2G' is not a hex byte (00..FF)"},
      {"1.0,0316,2,05,123,R", "DATA[1]", "byte '123' is not a hex byte (00..FF)"},
  };
  expect_bad_rows(
      cases, std::string(kHcrlHeader) + "1.0,0316,1,05,R\n", "",
      [](const std::filesystem::path& file) { read_file(file, hcrl_car_hacking_mapping(true)); });
}

TEST(HcrlCsvReaderTest, HeaderlessErrorsUsePositionsAsColumnNames) {
  TempDir dir;
  const auto file = dir / "bad.csv";
  write_text_file(file, "1.0,0316,2,05,21,R\n1.0,0316,9,05,21,R\n");
  const util::InputError e =
      catch_input_error([&] { read_file(file, hcrl_car_hacking_mapping(false)); });
  EXPECT_EQ(e.line(), 2u);
  EXPECT_EQ(e.column(), "2");
  EXPECT_EQ(e.reason(), "DLC 9 out of range 0..8");

  write_text_file(file, "1.0,0316,8,05,21,68,09,21,21,00,6f\n");
  const util::InputError short_row =
      catch_input_error([&] { read_file(file, hcrl_car_hacking_mapping(false)); });
  EXPECT_EQ(short_row.line(), 1u);
  EXPECT_EQ(short_row.reason(), "expected 12 columns, found 11");
}

TEST(MappedCsvReaderTest, SemicolonsDecimalIdsByteColumnsAndNamedLabels) {
  CsvColumnMapping mapping;
  mapping.delimiter = ';';
  mapping.timestamp = "time";
  mapping.id = "ID";
  mapping.id_base = IdBase::kDecimal;
  mapping.payload_bytes = {"b0", "b1", "b2"};
  mapping.label = "class";
  mapping.attack_values = {"fuzzing", "DoS"};
  mapping.normal_values = {"normal"};
  const std::vector<CanFrame> expected = {
      frame(0.5, 291, {0xDE, 0xAD, 0xBE}, 0),
      frame(0.75, 2047, {0x01}, 1),
      frame(1.0, 100, {}, 1),
  };
  EXPECT_EQ(read_csv_text("time;id;b0;b1;b2;class\n"
                          "0.5;291;de;AD;0xbe;Normal\n"
                          "0.75;2047;01;;;FUZZING\n"
                          "1.0;100;;;;dos\n",
                          mapping),
            expected);
}

TEST(MappedCsvReaderTest, ByteAfterAnEmptyByteColumnIsBad) {
  TempDir dir;
  const auto file = dir / "gap.csv";
  write_text_file(file, "id,b0,b1\n10,01,\n11,,02\n");
  CsvColumnMapping mapping;
  mapping.id = "id";
  mapping.payload_bytes = {"b0", "b1"};
  const util::InputError e = catch_input_error([&] { read_file(file, mapping); });
  EXPECT_EQ(e.line(), 3u);
  EXPECT_EQ(e.column(), "b1");
  EXPECT_EQ(e.reason(), "payload byte set after the empty column 'b0'");
}

TEST(MappedCsvReaderTest, HeaderlessPositionsTabsSpacedPayloadAndRowIndexTimestamps) {
  CsvColumnMapping mapping;
  mapping.delimiter = '\t';
  mapping.has_header = false;
  mapping.id = "1";
  mapping.payload = "2";
  mapping.label = "3";
  mapping.attack_values = {"true"};
  const std::vector<CanFrame> expected = {
      frame(0.0, 0x18FEF100, {0xDE, 0xAD, 0xBE, 0xEF}, 1),
      frame(1.0, 0x7DF, {}, 0),
  };
  EXPECT_EQ(read_csv_text("x\t0x18FEF100\tde ad be ef\tTRUE\n"
                          "y\t7DF\t\tfalse\textra\n",
                          mapping),
            expected);
}

TEST(MappedCsvReaderTest, QuotedFieldMayHoldTheDelimiter) {
  CsvColumnMapping mapping;
  mapping.id = "id";
  mapping.payload = "data";
  EXPECT_EQ(read_csv_text("id,note,data\n\"10\",\"a, \"\"b\"\"\",\"0A0B\"\n", mapping),
            std::vector<CanFrame>{frame(0.0, 0x10, {0x0A, 0x0B}, 0)});
}

TEST(MappedCsvReaderTest, DlcMustMatchAHexPayload) {
  TempDir dir;
  const auto file = dir / "dlc.csv";
  write_text_file(file, "id,len,data\n10,2,0A0B\n11,3,0A0B\n");
  CsvColumnMapping mapping;
  mapping.id = "id";
  mapping.dlc = "len";
  mapping.payload = "data";
  const util::InputError e = catch_input_error([&] { read_file(file, mapping); });
  EXPECT_EQ(e.line(), 3u);
  EXPECT_EQ(e.column(), "data");
  EXPECT_EQ(e.reason(), "DLC 3 but the payload has 2 bytes");
}

// One public dataset writes the DLC in bits (always 64): read with --csv-dlc-unit bits, and
// refused in bytes with a reason that names the flag.
TEST(MappedCsvReaderTest, DlcInBitsIsReadWithTheUnitAndNamedWithoutIt) {
  TempDir dir;
  const auto file = dir / "bits.csv";
  write_text_file(file, "id,dlc,data\n10,64,0102030405060708\n11,16,0A0B\n12,0,\n");
  CsvColumnMapping mapping;
  mapping.id = "id";
  mapping.dlc = "dlc";
  mapping.payload = "data";
  const util::InputError refused = catch_input_error([&] { read_file(file, mapping); });
  EXPECT_EQ(refused.line(), 2u);
  EXPECT_EQ(refused.column(), "dlc");
  EXPECT_EQ(refused.reason(),
            "DLC 64 out of range 0..8 (a length in bits? --csv-dlc-unit bits reads it as 8 bytes)");

  mapping.dlc_unit = DlcUnit::kBits;
  const std::vector<CanFrame> expected = {
      frame(0.0, 0x10, {1, 2, 3, 4, 5, 6, 7, 8}),
      frame(1.0, 0x11, {0x0A, 0x0B}),
      frame(2.0, 0x12, {}),
  };
  EXPECT_EQ(read_file(file, mapping), expected);

  // Per-byte columns: the DLC in bits says how many to read.
  CsvColumnMapping bytes = mapping;
  bytes.payload.clear();
  bytes.payload_bytes = {"b0", "b1", "b2"};
  EXPECT_EQ(read_csv_text("id,dlc,b0,b1,b2\n7DF,16,01,02,\n", bytes),
            std::vector<CanFrame>{frame(0.0, 0x7DF, {1, 2})});
}

TEST(MappedCsvReaderTest, DlcInBitsMustBeWholeBytesUpTo64) {
  CsvColumnMapping mapping;
  mapping.id = "id";
  mapping.dlc = "dlc";
  mapping.payload = "data";
  mapping.dlc_unit = DlcUnit::kBits;
  const std::vector<BadRowCase> cases = {
      {"10,12,00", "dlc", "DLC 12 bits is not a whole number of bytes"},
      {"10,72,00", "dlc", "DLC 72 bits out of range 0..64"},
      {"10,8,0001", "data", "DLC 1 but the payload has 2 bytes"},
      {"10,x,00", "dlc", "DLC 'x' is not a number"},
  };
  expect_bad_rows(cases, "id,dlc,data\n10,8,01\n", "",
                  [&](const std::filesystem::path& file) { read_file(file, mapping); });
  // In bytes, a value that cannot be bits gets no hint.
  mapping.dlc_unit = DlcUnit::kBytes;
  expect_bad_rows({{"10,12,00", "dlc", "DLC 12 out of range 0..8"}}, "id,dlc,data\n", "",
                  [&](const std::filesystem::path& file) { read_file(file, mapping); });
}

TEST(MappedCsvReaderTest, DecimalIdErrors) {
  TempDir dir;
  const auto file = dir / "dec.csv";
  CsvColumnMapping mapping;
  mapping.id = "id";
  mapping.id_base = IdBase::kDecimal;
  mapping.payload = "data";
  write_text_file(file, "id,data\n1A,00\n");
  EXPECT_EQ(catch_input_error([&] { read_file(file, mapping); }).reason(),
            "ID '1A' is not a decimal number");
  write_text_file(file, "id,data\n536870912,00\n");
  EXPECT_EQ(catch_input_error([&] { read_file(file, mapping); }).reason(),
            "ID '536870912' exceeds 29 bits");
}

TEST(MappedCsvReaderTest, HeaderlessRowNeedsTheHighestMappedPosition) {
  TempDir dir;
  const auto file = dir / "short.csv";
  write_text_file(file, "10,0A,1\n11,0B\n");
  CsvColumnMapping mapping;
  mapping.has_header = false;
  mapping.id = "0";
  mapping.payload = "1";
  mapping.label = "2";
  const util::InputError e = catch_input_error([&] { read_file(file, mapping); });
  EXPECT_EQ(e.line(), 2u);
  EXPECT_EQ(e.reason(), "expected 3 columns, found 2");
}

TEST(CsvMappingTest, PresetsAreValidAndConsistent) {
  EXPECT_NO_THROW(can_train_test_mapping().validate());
  EXPECT_NO_THROW(hcrl_car_hacking_mapping(true).validate());
  EXPECT_NO_THROW(hcrl_car_hacking_mapping(false).validate());
  const auto hcrl = hcrl_car_hacking_mapping(false);
  EXPECT_FALSE(hcrl.has_header);
  EXPECT_TRUE(hcrl.ragged_payload);
  EXPECT_EQ(hcrl.payload_bytes.size(), 8u);
  EXPECT_EQ(hcrl.label, "11");
  EXPECT_EQ(hcrl.attack_values, std::vector<std::string>{"T"});
  EXPECT_EQ(hcrl.normal_values, std::vector<std::string>{"R"});
  EXPECT_EQ(can_train_test_mapping().normal_values, std::vector<std::string>{"0"});
}

TEST(CsvMappingTest, ValidateNamesTheInconsistentField) {
  const auto rejects = [](const CsvColumnMapping& mapping, const std::string& field) {
    try {
      mapping.validate();
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
      return;
    }
    ADD_FAILURE() << "no std::invalid_argument for " << field;
  };
  CsvColumnMapping base;
  base.id = "id";
  base.payload = "data";
  EXPECT_NO_THROW(base.validate());

  auto m = base;
  m.id.clear();
  rejects(m, "id");
  m = base;
  m.payload_bytes = {"b0"};
  rejects(m, "payload");
  m = base;
  m.payload.clear();
  rejects(m, "payload");
  m = base;
  m.payload.clear();
  m.payload_bytes = {"0", "1", "2", "3", "4", "5", "6", "7", "8"};
  rejects(m, "payload_bytes");
  m = base;
  m.payload.clear();
  m.payload_bytes = {"b0"};
  m.ragged_payload = true;
  rejects(m, "ragged_payload");
  m = base;
  m.has_header = false;
  m.id = "0";
  m.payload = "data";
  rejects(m, "payload");
  m = base;
  m.delimiter = '"';
  rejects(m, "delimiter");
  m = base;
  m.dlc_unit = DlcUnit::kBits;
  rejects(m, "dlc_unit");
  m = base;
  m.label = "flag";
  m.attack_values = {"T"};
  m.normal_values = {"t"};
  rejects(m, "normal_values");
}

// A column name or label value reaches the mapping's error as the user typed it (a flag or a
// config file): escaped and bounded like the readers' errors.
TEST(CsvMappingTest, ErrorTextIsEscapedAndBounded) {
  const auto message = [](const CsvColumnMapping& mapping) {
    try {
      mapping.validate();
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    ADD_FAILURE() << "no std::invalid_argument";
    return std::string();
  };
  CsvColumnMapping base;
  base.id = "0";
  base.payload = "1";
  base.has_header = false;

  auto m = base;
  m.timestamp = std::string("ts") + '\0' + "\x1b[31m";
  const std::string controls = message(m);
  EXPECT_NE(controls.find("ts\\x00\\x1B[31m"), std::string::npos) << controls;
  for (const char c : controls) EXPECT_FALSE(static_cast<unsigned char>(c) < 0x20) << controls;

  m = base;
  m.label = "flag";
  m.normal_values = {std::string(10'000'000, 'n') + "1"};
  m.attack_values = {m.normal_values[0]};
  const std::string huge = message(m);
  EXPECT_LT(huge.size(), 1000U);
  EXPECT_NE(huge.find("bytes cut"), std::string::npos) << huge;
  EXPECT_NE(huge.find("is also an attack value"), std::string::npos) << huge;
}

TEST(CsvMappingTest, ReaderRejectsAnInvalidMappingBeforeOpeningTheFile) {
  CsvColumnMapping mapping;
  mapping.payload = "data";
  EXPECT_THROW(CsvFrameReader("/nonexistent/file.csv", mapping, BadRowPolicy::kError),
               std::invalid_argument);
}

}  // namespace
}  // namespace headroom::can
