// Every shuffle in the project's sources goes through loader/epoch_order: a std::shuffle (whose
// algorithm each standard library picks), a torch randperm (whose output follows torch's generator
// and version) or a NumPy / random-module permutation in the Python package would give an order
// that a resumed run, another machine or the Python sampler does not reproduce. Read from the
// source tree; each finding is named by file and line.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "test_support.hpp"

namespace headroom {
namespace {

namespace fs = std::filesystem;

const fs::path kSource = HEADROOM_SOURCE_DIR;

// What shuffles outside the epoch order, per language. "randperm" covers torch.randperm,
// at::randperm and torch::randperm.
constexpr std::string_view kCppShuffles[] = {"std::shuffle", "std::random_shuffle",
                                             "std::ranges::shuffle", "randperm"};
constexpr std::string_view kPythonShuffles[] = {"randperm", "random.shuffle", ".permutation("};

bool is_cpp(const fs::path& file) {
  const auto extension = file.extension();
  return extension == ".cpp" || extension == ".hpp" || extension == ".h" || extension == ".cu";
}

// `line` without its comment: prose may name what the code must not call.
std::string_view code_of(std::string_view line, std::string_view comment_marker) {
  const auto comment = line.find(comment_marker);
  return comment == std::string_view::npos ? line : line.substr(0, comment);
}

// "path:line: text" (path relative to `base`) for every line of the files under base / root whose
// code names one of the shuffles of its language.
std::vector<std::string> shuffles_under(const fs::path& base, const fs::path& root) {
  std::vector<std::string> found;
  for (const auto& entry : fs::recursive_directory_iterator(base / root)) {
    if (!entry.is_regular_file()) continue;
    const auto& file = entry.path();
    const bool python = file.extension() == ".py";
    if (!python && !is_cpp(file)) continue;
    std::ifstream in(file);
    std::string line;
    for (int number = 1; std::getline(in, line); ++number) {
      const auto code = code_of(line, python ? "#" : "//");
      const auto matches = [&](std::string_view pattern) {
        return code.find(pattern) != std::string_view::npos;
      };
      const bool shuffles =
          python ? std::any_of(std::begin(kPythonShuffles), std::end(kPythonShuffles), matches)
                 : std::any_of(std::begin(kCppShuffles), std::end(kCppShuffles), matches);
      if (shuffles)
        found.push_back(fs::relative(file, base).generic_string() + ":" + std::to_string(number) +
                        ": " + line);
    }
  }
  return found;
}

TEST(EpochOrderSources, NoShuffleOutsideTheEpochOrderUnit) {
  std::vector<std::string> found;
  std::size_t files = 0;
  for (const fs::path root : {"src", "include", "python/src", "python/headroom"}) {
    ASSERT_TRUE(fs::is_directory(kSource / root)) << kSource / root << " was not found";
    for (const auto& entry : fs::recursive_directory_iterator(kSource / root))
      files += entry.is_regular_file() ? 1 : 0;
    const auto under = shuffles_under(kSource, root);
    found.insert(found.end(), under.begin(), under.end());
  }
  EXPECT_GT(files, 100U) << "the sources were not found under " << kSource;
  std::string listing;
  for (const auto& finding : found) listing += "\n  " + finding;
  EXPECT_TRUE(found.empty()) << "shuffles that do not use loader/epoch_order (use "
                                "loader::epoch_permutation or shuffled with a stream of its own):"
                             << listing;
}

// The scan itself: it finds a shuffle in code and passes over one named in a comment, in both
// languages (a scan that matched nothing would pass the test above forever).
TEST(EpochOrderSources, TheScanFindsShufflesInCodeButNotInComments) {
  testing::TempDir dir;
  fs::create_directories(dir / "tree" / "deeper");
  std::ofstream(dir / "tree" / "deeper" / "order.cpp")
      << "// std::shuffle is not used here\n"
      << "void f(std::vector<int>& v, std::mt19937& g) { std::shuffle(v.begin(), v.end(), g); }\n";
  std::ofstream(dir / "tree" / "order.py") << "# torch.randperm is not used here\n"
                                           << "order = torch.randperm(5)  # but here it is\n"
                                           << "rows = numpy_rng.permutation(5)\n";
  std::ofstream(dir / "tree" / "notes.txt") << "std::shuffle(a, b, c)\n";
  const auto found = shuffles_under(dir.path(), "tree");
  ASSERT_EQ(found.size(), 3U) << ::testing::PrintToString(found);
  const auto named = [&](std::string_view prefix) {
    return std::any_of(found.begin(), found.end(),
                       [&](const std::string& finding) { return finding.starts_with(prefix); });
  };
  EXPECT_TRUE(named("tree/deeper/order.cpp:2: ")) << ::testing::PrintToString(found);
  EXPECT_TRUE(named("tree/order.py:2: ")) << ::testing::PrintToString(found);
  EXPECT_TRUE(named("tree/order.py:3: ")) << ::testing::PrintToString(found);
}

}  // namespace
}  // namespace headroom
