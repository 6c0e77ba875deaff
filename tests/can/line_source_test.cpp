#include "headroom/can/line_source.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "headroom/util/input_error.hpp"
#include "test_support.hpp"

namespace headroom::can {
namespace {

using headroom::testing::TempDir;
using headroom::testing::write_text_file;

std::vector<std::string> lines_of(const std::filesystem::path& file, std::size_t block) {
  LineSource source(file, block);
  std::vector<std::string> lines;
  std::string_view line;
  while (source.next(line)) {
    lines.emplace_back(line);
    EXPECT_EQ(source.line_number(), lines.size());
  }
  return lines;
}

TEST(LineSourceReaderTest, SplitsLfAndCrlfAtEveryBlockSize) {
  TempDir dir;
  const auto file = dir / "lines.txt";
  write_text_file(file,
                  "\xEF\xBB\xBF"
                  "alpha\r\nbeta\n\n\r\ngamma delta\r\nlast");
  const std::vector<std::string> expected = {"alpha", "beta", "", "", "gamma delta", "last"};
  for (std::size_t block = 1; block <= 40; ++block) {
    EXPECT_EQ(lines_of(file, block), expected) << "block " << block;
  }
}

TEST(LineSourceReaderTest, FinalNewlineAddsNoEmptyLine) {
  TempDir dir;
  write_text_file(dir / "a.txt", "one\ntwo\n");
  EXPECT_EQ(lines_of(dir / "a.txt", 3), (std::vector<std::string>{"one", "two"}));
  write_text_file(dir / "b.txt", "\n");
  EXPECT_EQ(lines_of(dir / "b.txt", 3), (std::vector<std::string>{""}));
}

TEST(LineSourceReaderTest, MissingEmptyAndDirectoryAreInputErrors) {
  TempDir dir;
  write_text_file(dir / "empty.txt", "");
  try {
    LineSource source(dir / "empty.txt");
    FAIL() << "no error for an empty file";
  } catch (const util::InputError& e) {
    EXPECT_EQ(e.reason(), "file is empty (0 bytes)");
    EXPECT_EQ(e.line(), 0u);
    EXPECT_EQ(std::string(e.what()), (dir / "empty.txt").string() + ": file is empty (0 bytes)");
  }
  EXPECT_THROW(LineSource(dir / "missing.txt"), util::InputError);
  EXPECT_THROW(LineSource(dir.path()), util::InputError);
}

}  // namespace
}  // namespace headroom::can
