// Format names, detection and the reader factory.
#include "headroom/can/log_format.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "headroom/util/input_error.hpp"
#include "reader_test_support.hpp"
#include "test_support.hpp"

namespace headroom::can {
namespace {

using headroom::testing::catch_input_error;
using headroom::testing::frame;
using headroom::testing::read_all;
using headroom::testing::TempDir;
using headroom::testing::write_text_file;

LogFormat detect_text(const std::string& name, const std::string& content) {
  TempDir dir;
  write_text_file(dir / name, content);
  return detect_format(dir / name);
}

TEST(LogFormatTest, NamesRoundTrip) {
  for (LogFormat f : {LogFormat::kAuto, LogFormat::kCanTrainTest, LogFormat::kHcrlCarHacking,
                      LogFormat::kHcrlCarHackingText, LogFormat::kParquet, LogFormat::kCandump,
                      LogFormat::kMappedCsv}) {
    EXPECT_EQ(parse_log_format(log_format_name(f)), f) << log_format_name(f);
  }
  EXPECT_EQ(parse_log_format("can-train-and-test"), LogFormat::kCanTrainTest);
  EXPECT_EQ(parse_log_format("hcrl-car-hacking"), LogFormat::kHcrlCarHacking);
  EXPECT_EQ(parse_log_format("CSV"), LogFormat::kMappedCsv);
  EXPECT_EQ(parse_log_format("excel"), std::nullopt);
  EXPECT_EQ(parse_log_format(""), std::nullopt);
}

// The registry (issue 26, item 3): every format is found by its name, has a reader, a one-line
// description for --help and the extensions a dataset scan picks up; the choices are "auto" and
// the registered names in detection order; names are unique.
TEST(LogFormatRegistry, EveryFormatIsNamedDescribedAndOpenable) {
  const auto formats = log_formats();
  ASSERT_GE(formats.size(), 6U);
  std::vector<std::string> expected_choices = {"auto"};
  for (const auto* definition : formats) {
    SCOPED_TRACE(std::string(definition->name));
    expected_choices.emplace_back(definition->name);
    const auto parsed = parse_log_format(definition->name);
    ASSERT_TRUE(parsed.has_value());
    EXPECT_EQ(find_log_format(*parsed), definition);
    EXPECT_EQ(log_format_name(*parsed), definition->name);
    EXPECT_FALSE(definition->description.empty());
    EXPECT_NE(definition->open, nullptr);
    EXPECT_FALSE(definition->extensions.empty());
    for (const auto extension : definition->extensions)
      EXPECT_TRUE(is_can_log_file("dir/file" + std::string(extension))) << extension;
    // A format is detected by its extension or its first line, or only named (the mapped CSV).
    EXPECT_FALSE(definition->detected_by_extension && definition->matches_first_line != nullptr);
  }
  EXPECT_EQ(log_format_choices(), expected_choices);
  std::set<std::string> unique(expected_choices.begin(), expected_choices.end());
  EXPECT_EQ(unique.size(), expected_choices.size()) << "two formats share a name";
  EXPECT_EQ(find_log_format(LogFormat::kAuto), nullptr);
}

// Detection and opening go through the registry's entries: each built-in constant names one.
TEST(LogFormatRegistry, TheBuiltInConstantsNameRegisteredFormats) {
  for (const LogFormat format :
       {LogFormat::kCanTrainTest, LogFormat::kHcrlCarHacking, LogFormat::kHcrlCarHackingText,
        LogFormat::kParquet, LogFormat::kCandump, LogFormat::kMappedCsv})
    EXPECT_NE(find_log_format(format), nullptr) << format;
}

TEST(LogFormatTest, CanLogExtensionsAreCaseInsensitive) {
  EXPECT_TRUE(is_can_log_file("a/b.csv"));
  EXPECT_TRUE(is_can_log_file("b.PARQUET"));
  EXPECT_TRUE(is_can_log_file("drive.Log"));
  EXPECT_TRUE(is_can_log_file("x.txt"));
  EXPECT_FALSE(is_can_log_file("x.json"));
  EXPECT_FALSE(is_can_log_file("csv"));
  EXPECT_FALSE(is_can_log_file("x.csv.gz"));
}

TEST(LogFormatTest, DetectsEachFormatFromContent) {
  EXPECT_EQ(detect_text("a.csv", "timestamp,arbitration_id,data_field,attack\n1,1,00,0\n"),
            LogFormat::kCanTrainTest);
  EXPECT_EQ(
      detect_text("b.csv", "\xEF\xBB\xBF\n  TimeStamp , Arbitration_ID,Data_Field ,ATTACK \r\n"),
      LogFormat::kCanTrainTest);
  EXPECT_EQ(detect_text("c.csv", "Timestamp,CAN ID,DLC,DATA[0],Flag\n"),
            LogFormat::kHcrlCarHacking);
  EXPECT_EQ(detect_text("d.csv", "1478198376.389427,0316,8,05,21,68,09,21,21,00,6f,R\n"),
            LogFormat::kHcrlCarHacking);
  EXPECT_EQ(detect_text("e.txt", "1478198376.389636,0316,2,05,21,R\n"), LogFormat::kHcrlCarHacking);
  EXPECT_EQ(detect_text("f.log", "\n(1436509052.249713) can0 123#DEADBEEF\n"), LogFormat::kCandump);
  EXPECT_EQ(detect_text("f.log", "  can0  1F334455   [8]  11 22 33 44 55 66 77 88\n"),
            LogFormat::kCandump);
  EXPECT_EQ(detect_text("f.txt", "(1436509052.249713)  can0  123   [2]  DE AD\n"),
            LogFormat::kCandump);
  // HCRL's attack-free recording is a text file of "Timestamp: ... ID: ... DLC: ..." lines.
  EXPECT_EQ(detect_text("normal_run_data.txt",
                        "Timestamp: 1479121434.850202        ID: 0350    000    DLC: 8    05 28 "
                        "84 66 6d 00 00 a2\n"),
            LogFormat::kHcrlCarHackingText);
  // Parquet is decided by the extension alone.
  EXPECT_EQ(detect_text("g.parquet", "anything"), LogFormat::kParquet);
}

TEST(LogFormatTest, UnknownContentSuggestsAColumnMapping) {
  TempDir dir;
  const auto file = dir / "odd.csv";
  write_text_file(file, "\ntime;id;payload\n1;2;3\n");
  const util::InputError e = catch_input_error([&] { detect_format(file); });
  EXPECT_EQ(e.file(), file);
  EXPECT_EQ(e.line(), 2u);
  EXPECT_NE(e.reason().find("--format csv"), std::string::npos) << e.reason();
  EXPECT_NE(e.reason().find("time;id;payload"), std::string::npos) << e.reason();
  // A row that looks like HCRL except for the column count is not HCRL.
  EXPECT_THROW(detect_text("h.csv", "1.0,0316,2,05,R\n"), util::InputError);
  // Nearly the can-train-and-test header, but not quite.
  EXPECT_THROW(detect_text("i.csv", "timestamp,arbitration_id,data_field,label\n"),
               util::InputError);
}

TEST(LogFormatTest, DetectionNeedsAReadableNonEmptyFile) {
  TempDir dir;
  write_text_file(dir / "empty.csv", "");
  write_text_file(dir / "empty.parquet", "");
  write_text_file(dir / "blank.csv", "\n\n  \n");
  EXPECT_EQ(catch_input_error([&] { detect_format(dir / "empty.csv"); }).reason(),
            "file is empty (0 bytes)");
  EXPECT_EQ(catch_input_error([&] { detect_format(dir / "empty.parquet"); }).reason(),
            "file is empty (0 bytes)");
  EXPECT_EQ(catch_input_error([&] { detect_format(dir / "blank.csv"); }).reason(),
            "file holds only blank lines");
  const util::InputError missing = catch_input_error([&] { detect_format(dir / "missing.csv"); });
  EXPECT_EQ(missing.file(), dir / "missing.csv");
  EXPECT_NE(missing.reason().find("No such file"), std::string::npos) << missing.reason();
}

TEST(LogFormatTest, FactoryAutoDetectsTextFormats) {
  TempDir dir;
  write_text_file(dir / "ctt.csv", "timestamp,arbitration_id,data_field,attack\n2.5,1E5,0102,1\n");
  write_text_file(dir / "hcrl.csv", "1.5,0316,2,05,21,T\n2.5,0317,1,07,R\n");
  write_text_file(dir / "hcrl_header.csv",
                  "Timestamp,CAN ID,DLC,DATA[0],DATA[1],DATA[2],DATA[3],DATA[4],DATA[5],DATA[6],"
                  "DATA[7],Flag\n1.5,0316,2,05,21,T\n");
  write_text_file(dir / "dump.log", "(3.5) can0 18FEF100#AA\n");

  struct Case {
    std::string name;
    CanFrame first;
  };
  const std::vector<Case> cases = {
      {"ctt.csv", frame(2.5, 0x1E5, {0x01, 0x02}, 1)},
      {"hcrl.csv", frame(1.5, 0x316, {0x05, 0x21}, 1)},
      {"hcrl_header.csv", frame(1.5, 0x316, {0x05, 0x21}, 1)},
      {"dump.log", frame(3.5, 0x18FEF100, {0xAA}, 0)},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto reader = open_frame_reader(dir / c.name, ReaderOptions{});
    const auto frames = read_all(*reader);
    ASSERT_FALSE(frames.empty());
    EXPECT_EQ(frames.front(), c.first);
  }

  // An explicit format wins over detection: this can-train-and-test file read as a mapped CSV.
  ReaderOptions mapped;
  mapped.format = LogFormat::kMappedCsv;
  mapped.mapping.id = "arbitration_id";
  mapped.mapping.id_base = IdBase::kDecimal;
  mapped.mapping.payload = "data_field";
  mapped.on_bad_row = BadRowPolicy::kSkip;
  auto reader = open_frame_reader(dir / "ctt.csv", mapped);
  EXPECT_TRUE(read_all(*reader).empty());
  EXPECT_EQ(reader->skipped_rows(), 1u);  // "1E5" is not decimal
}

TEST(LogFormatTest, FactoryReportsMissingAndEmptyFiles) {
  TempDir dir;
  write_text_file(dir / "empty.csv", "");
  for (LogFormat format :
       {LogFormat::kAuto, LogFormat::kCanTrainTest, LogFormat::kCandump, LogFormat::kParquet,
        LogFormat::kHcrlCarHacking, LogFormat::kHcrlCarHackingText}) {
    SCOPED_TRACE(log_format_name(format));
    ReaderOptions options;
    options.format = format;
    EXPECT_EQ(catch_input_error([&] { open_frame_reader(dir / "empty.csv", options); }).reason(),
              "file is empty (0 bytes)");
    EXPECT_NE(catch_input_error([&] { open_frame_reader(dir / "gone.csv", options); })
                  .reason()
                  .find("No such file"),
              std::string::npos);
  }
}

TEST(LogFormatTest, FactoryRejectsAnInconsistentMapping) {
  TempDir dir;
  write_text_file(dir / "x.csv", "a,b\n1,2\n");
  ReaderOptions options;
  options.format = LogFormat::kMappedCsv;  // mapping.id left empty
  EXPECT_THROW(open_frame_reader(dir / "x.csv", options), std::invalid_argument);
}

}  // namespace
}  // namespace headroom::can
