// No class or struct of the training area (src/train, include/headroom/train) is longer than
// 200 lines: a stage that grows past that is doing more than one idea (construction, teacher,
// planning, loss, validation, calibration) and is cut into units of its own (issue 46). Read from
// the source tree; each finding is named by file, line and length.
//
// The scan is a brace matcher, not a C++ parser. It drops comments and string and character
// literals (raw strings are not recognised: one holding an unbalanced brace would shift the
// count), then takes every `class NAME` or `struct NAME` whose next token after an optional
// `final` and base list is `{` as a definition (`enum class`, forward declarations, template
// parameters and elaborated type names are not), and counts the lines from the keyword to the
// matching `}`. A definition produced by a macro is not seen.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "test_support.hpp"

namespace headroom {
namespace {

namespace fs = std::filesystem;

const fs::path kSource = HEADROOM_SOURCE_DIR;
constexpr std::size_t kMaxClassLines = 200;

// Classes over the limit whose cut is under way, by "file:name". Each entry leaves as its class
// lands under the limit (the stale-entry check below says when); the list ends empty.
const std::set<std::string> kBeingCut = {};

struct ClassSpan {
  std::string file;  // relative to the scanned base, generic separators
  std::string name;  // "(anonymous)" for an unnamed struct
  std::size_t line = 0;
  std::size_t lines = 0;

  std::string key() const { return file + ":" + name; }
};

// `text` with comments and string and character literals blanked out, line breaks kept, so that
// a brace or keyword inside them is not read as code and line numbers stay those of the file.
std::string code_only(std::string_view text) {
  std::string out(text);
  std::size_t i = 0;
  const auto blank = [&](std::size_t from, std::size_t to) {
    for (std::size_t k = from; k < to && k < out.size(); ++k)
      if (out[k] != '\n') out[k] = ' ';
  };
  while (i < text.size()) {
    if (text.substr(i, 2) == "//") {
      const auto end = std::min(text.find('\n', i), text.size());
      blank(i, end);
      i = end;
    } else if (text.substr(i, 2) == "/*") {
      const auto close = text.find("*/", i + 2);
      const auto end = close == std::string_view::npos ? text.size() : close + 2;
      blank(i, end);
      i = end;
    } else if (text[i] == '"' || text[i] == '\'') {
      std::size_t k = i + 1;
      while (k < text.size() && text[k] != text[i] && text[k] != '\n') k += text[k] == '\\' ? 2 : 1;
      blank(i, k + 1);
      i = k + 1;
    } else {
      ++i;
    }
  }
  return out;
}

bool is_identifier_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Whether `code` holds the whole word `word` at `at`.
bool word_at(const std::string& code, std::size_t at, std::string_view word) {
  if (code.compare(at, word.size(), word) != 0) return false;
  if (at > 0 && is_identifier_char(code[at - 1])) return false;
  const auto end = at + word.size();
  return end >= code.size() || !is_identifier_char(code[end]);
}

std::size_t skip_spaces(const std::string& code, std::size_t at) {
  while (at < code.size() && std::isspace(static_cast<unsigned char>(code[at]))) ++at;
  return at;
}

// The word that ends just before `at` (spaces skipped), or empty.
std::string word_before(const std::string& code, std::size_t at) {
  while (at > 0 && std::isspace(static_cast<unsigned char>(code[at - 1]))) --at;
  std::size_t start = at;
  while (start > 0 && is_identifier_char(code[start - 1])) --start;
  return code.substr(start, at - start);
}

// Where the body of the class whose keyword ends at `at` opens, or npos when the keyword does not
// start a definition (a forward declaration, a template parameter, an elaborated type name).
std::size_t body_of(const std::string& code, std::size_t at, std::string& name) {
  at = skip_spaces(code, at);
  const auto name_start = at;
  while (at < code.size() && is_identifier_char(code[at])) ++at;
  name = at > name_start ? code.substr(name_start, at - name_start) : "(anonymous)";
  at = skip_spaces(code, at);
  if (word_at(code, at, "final")) at = skip_spaces(code, at + 5);
  if (at < code.size() && code[at] == ':' && code.compare(at, 2, "::") != 0) {
    // A base list: up to the body, through template arguments and commas.
    while (at < code.size() && code[at] != '{' && code[at] != ';' && code[at] != '(' &&
           code[at] != ')' && code[at] != '=')
      ++at;
  }
  return at < code.size() && code[at] == '{' ? at : std::string::npos;
}

std::size_t line_of(const std::string& code, std::size_t at) {
  return 1 + static_cast<std::size_t>(
                 std::count(code.begin(), code.begin() + static_cast<std::ptrdiff_t>(at), '\n'));
}

// Every class and struct definition in `file`, with its length in lines.
std::vector<ClassSpan> class_spans(const fs::path& file, const std::string& relative) {
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  const auto code = code_only(text.str());
  std::vector<ClassSpan> spans;
  for (std::size_t at = 0; at < code.size(); ++at) {
    const bool is_class = word_at(code, at, "class");
    if (!is_class && !word_at(code, at, "struct")) continue;
    if (word_before(code, at) == "enum") continue;
    std::string name;
    const auto open = body_of(code, at + (is_class ? 5 : 6), name);
    if (open == std::string::npos) continue;
    std::size_t depth = 0;
    std::size_t close = open;
    for (; close < code.size(); ++close) {
      if (code[close] == '{') ++depth;
      if (code[close] == '}' && --depth == 0) break;
    }
    const auto first = line_of(code, at);
    spans.push_back({relative, name, first, line_of(code, close) - first + 1});
  }
  return spans;
}

// The definitions under base / root (C++ sources and headers), named relative to `base`.
std::vector<ClassSpan> class_spans_under(const fs::path& base, const fs::path& root) {
  std::vector<ClassSpan> spans;
  for (const auto& entry : fs::recursive_directory_iterator(base / root)) {
    const auto extension = entry.path().extension();
    if (!entry.is_regular_file() || (extension != ".cpp" && extension != ".hpp")) continue;
    const auto found = class_spans(entry.path(), fs::relative(entry.path(), base).generic_string());
    spans.insert(spans.end(), found.begin(), found.end());
  }
  return spans;
}

std::string describe(const ClassSpan& span) {
  return span.file + ":" + std::to_string(span.line) + ": " + span.name + " (" +
         std::to_string(span.lines) + " lines)";
}

TEST(TrainingClassLength, NoClassInTheTrainingAreaIsOver200Lines) {
  std::vector<ClassSpan> spans;
  for (const fs::path root : {"src/train", "include/headroom/train"}) {
    ASSERT_TRUE(fs::is_directory(kSource / root)) << kSource / root << " was not found";
    const auto under = class_spans_under(kSource, root);
    spans.insert(spans.end(), under.begin(), under.end());
  }
  EXPECT_GT(spans.size(), 50U) << "the training area's classes were not found under " << kSource;
  std::string too_long;
  std::set<std::string> still_long;
  for (const auto& span : spans) {
    if (span.lines <= kMaxClassLines) continue;
    if (kBeingCut.contains(span.key())) {
      still_long.insert(span.key());
      continue;
    }
    too_long += "\n  " + describe(span);
  }
  EXPECT_TRUE(too_long.empty()) << "classes over " << kMaxClassLines
                                << " lines: cut each into units of one idea" << too_long;
  for (const auto& entry : kBeingCut)
    EXPECT_TRUE(still_long.contains(entry))
        << entry << " is in kBeingCut but no longer over " << kMaxClassLines
        << " lines (or was renamed): take it off the list";
}

// The scan itself: it measures a class from its keyword to its closing brace, passes over braces
// in comments and literals, enum classes, forward declarations and template parameters, and sees
// a class whose base list holds template arguments (a scan that found nothing would pass the
// test above forever).
TEST(TrainingClassLength, TheScanMeasuresDefinitionsOnly) {
  testing::TempDir dir;
  fs::create_directories(dir / "tree" / "deeper");
  {
    std::ofstream out(dir / "tree" / "deeper" / "long.cpp");
    out << "class Forward;\n"                                              // line 1
        << "template <class T, typename U = int> void f();\n"              // 2
        << "enum class Colour { kRed, kGreen };\n"                         // 3
        << "class Long final : public Base<int, char> {\n";                // 4: 201 lines
    for (int i = 0; i < 199; ++i) out << "  int field" << i << " = 0;\n";  // 5..203
    out << "};\n";                                                         // 204
    out << "struct Short {  // a } in a comment\n"                         // 205: 4 lines
        << "  const char* text = \"}}}\";\n"
        << "  char brace = '{';\n"
        << "};\n";
  }
  std::ofstream(dir / "tree" / "exact.hpp") << "struct Exact {\n"
                                            << std::string(198, '\n') << "};\n";  // 200 lines
  std::ofstream(dir / "tree" / "notes.txt") << "class NotCode {\n};\n";
  auto spans = class_spans_under(dir.path(), "tree");
  std::sort(spans.begin(), spans.end(),
            [](const ClassSpan& a, const ClassSpan& b) { return a.key() < b.key(); });
  ASSERT_EQ(spans.size(), 3U) << ::testing::PrintToString(spans.size());
  EXPECT_EQ(describe(spans[0]), "tree/deeper/long.cpp:4: Long (201 lines)");
  EXPECT_EQ(describe(spans[1]), "tree/deeper/long.cpp:205: Short (4 lines)");
  EXPECT_EQ(describe(spans[2]), "tree/exact.hpp:1: Exact (200 lines)");
}

}  // namespace
}  // namespace headroom
