// What a failed atomic write says: the reason of the call that failed, never the errno of a
// clean-up call made after it ("cannot rename into 'X': Success").
#include "headroom/util/file_writer.hpp"

#include <gtest/gtest.h>

#include "headroom/util/file_reader.hpp"

#include <cerrno>
#include <filesystem>
#include <string>
#include <system_error>

#include "test_support.hpp"

namespace headroom::util {
namespace {

TEST(FileWriterMessages, AFailedRenameSaysWhyItFailed) {
  testing::TempDir dir;
  // A non-empty directory where the file should go: rename(2) refuses it (EISDIR), and the
  // temporary is then removed, which succeeds.
  const auto target = dir / "taken";
  testing::write_text_file(target / "inside", "kept");
  try {
    write_file_atomically(target, "new");
    FAIL() << "writing over a directory succeeded";
  } catch (const std::system_error& e) {
    const std::string message = e.what();
    EXPECT_NE(e.code().value(), 0) << message;
    EXPECT_EQ(message.find("Success"), std::string::npos) << message;
    EXPECT_NE(message.find("cannot rename into '" + target.string() + "'"), std::string::npos)
        << message;
    EXPECT_NE(message.find(std::generic_category().message(EISDIR)), std::string::npos) << message;
  }
  EXPECT_EQ(read_file(target / "inside"), "kept");
  // Nothing of the attempt is left beside it.
  std::size_t entries = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(dir.path()))
    ++entries;
  EXPECT_EQ(entries, 1U);
}

}  // namespace
}  // namespace headroom::util
