#include "headroom/text/text_corpus.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <system_error>
#include <vector>

#include "headroom/util/file_reader.hpp"
#include "headroom/util/printable_text.hpp"
#include "headroom/util/utf8.hpp"

namespace headroom::text {
namespace {

bool is_file(const std::filesystem::path& path) {
  std::error_code ec;
  return std::filesystem::is_regular_file(path, ec);
}

std::runtime_error row_error(const std::filesystem::path& file, std::size_t line,
                             const std::string& reason) {
  return std::runtime_error(fmt::format("{}:{}: {}", util::printable_path(file), line, reason));
}

std::string_view without_surrounding_spaces(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\v' || text.front() == '\f'))
    text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\v' || text.back() == '\f'))
    text.remove_suffix(1);
  return text;
}

// The document number an index names, when it is a decimal number (r8's 0, 1, 2, ...).
std::optional<std::size_t> document_number(std::string_view index) {
  std::size_t number = 0;
  const auto [end, error] = std::from_chars(index.data(), index.data() + index.size(), number);
  if (error != std::errc() || end != index.data() + index.size()) return std::nullopt;
  return number;
}

// Rows in the order of the documents they describe. Numbered indices are joined on: a file sorted
// by split or label (each row keeping its index) once trained with every document's label shifted,
// without a word. Named indices cannot be joined on, so they stay in file order. Either way an
// index given twice is refused, and numbers must name every document from 0 exactly once.
std::vector<std::size_t> rows_in_document_order(const std::filesystem::path& file,
                                                const std::vector<std::string>& indices,
                                                const std::vector<std::size_t>& lines) {
  std::vector<std::size_t> order(indices.size());
  std::map<std::string_view, std::size_t> line_of;
  for (std::size_t row = 0; row < indices.size(); ++row) {
    const auto [seen, fresh] = line_of.emplace(indices[row], lines[row]);
    if (!fresh)
      throw row_error(file, lines[row],
                      fmt::format("index '{}' is also on line {}: each document has one row",
                                  util::printable(indices[row]), seen->second));
    order[row] = row;
  }
  std::vector<std::optional<std::size_t>> numbers;
  for (const auto& index : indices) numbers.push_back(document_number(index));
  const auto named =
      std::find_if(numbers.begin(), numbers.end(), [](const auto& n) { return !n.has_value(); });
  if (std::none_of(numbers.begin(), numbers.end(), [](const auto& n) { return n.has_value(); }))
    return order;  // names: file order is corpus order
  // Numbers and names mixed (" 7", "-1", "0x7" among numbers) cannot be joined on, and file order
  // would silently undo the join for every other row.
  if (named != numbers.end()) {
    const auto row = static_cast<std::size_t>(named - numbers.begin());
    throw row_error(file, lines[row],
                    fmt::format("index '{}' is not a document number (0, 1, 2, ... with nothing "
                                "around it) while other rows' are: numbered rows are joined on "
                                "their number, so every row needs one",
                                util::printable(indices[row])));
  }
  for (std::size_t row = 0; row < indices.size(); ++row) {
    if (*numbers[row] >= indices.size())
      throw row_error(file, lines[row],
                      fmt::format("index {} is past the last document: the {} rows number the "
                                  "corpus's documents from 0 to {}",
                                  *numbers[row], indices.size(), indices.size() - 1));
    order[*numbers[row]] = row;  // distinct and below the row count: a permutation
  }
  return order;
}

}  // namespace

bool is_text_corpus(const std::filesystem::path& directory) {
  return is_file(directory / kLabelsFileName) &&
         (is_file(directory / kRawCorpusFileName) || is_file(directory / kCleanCorpusFileName));
}

CorpusFiles locate_corpus_files(const std::filesystem::path& directory, CorpusSource source) {
  CorpusFiles files;
  files.labels = directory / kLabelsFileName;
  if (!is_file(files.labels))
    throw std::runtime_error(fmt::format("{}: no {} (a text corpus needs one row per document)",
                                         util::printable_path(directory), kLabelsFileName));
  const auto raw = directory / kRawCorpusFileName;
  const auto clean = directory / kCleanCorpusFileName;
  const bool use_clean =
      source == CorpusSource::kClean || (source == CorpusSource::kAuto && is_file(clean));
  files.text = use_clean ? clean : raw;
  files.text_is_clean = use_clean;
  if (!is_file(files.text))
    throw std::runtime_error(fmt::format("{}: no {}", util::printable_path(directory),
                                         util::printable_path(files.text.filename())));
  return files;
}

CorpusLabels read_corpus_labels(const std::filesystem::path& file) {
  const std::string text = util::read_file(file);
  CorpusLabels labels;
  std::vector<std::string> indices;
  std::vector<bool> is_test;
  std::vector<std::string> label_names;
  std::vector<std::size_t> lines;
  std::size_t line = 0;
  std::size_t at = 0;
  std::size_t blank_line = 0;
  while (at < text.size()) {
    auto end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    std::string_view row(text.data() + at, end - at);
    at = end + 1;
    ++line;
    if (!row.empty() && row.back() == '\r') row.remove_suffix(1);
    if (row.empty()) {
      if (blank_line == 0) blank_line = line;
      continue;
    }
    if (blank_line != 0) throw row_error(file, blank_line, "blank line before the last row");
    if (!util::is_utf8(row)) throw row_error(file, line, "not UTF-8 text");
    if (line == 1) {
      if (row != "index\tsplit\tlabel")
        throw row_error(file, line,
                        fmt::format("header is '{}', expected 'index<TAB>split<TAB>label'",
                                    util::printable(row)));
      continue;
    }
    const auto tab1 = row.find('\t');
    const auto tab2 = tab1 == std::string_view::npos ? tab1 : row.find('\t', tab1 + 1);
    if (tab2 == std::string_view::npos || row.find('\t', tab2 + 1) != std::string_view::npos)
      throw row_error(file, line, "expected three tab-separated fields: index, split, label");
    const auto name = row.substr(0, tab1);
    // TextGCN's label files are whitespace-separated, and spaces around a label or split are an
    // editor's, not a distinction: "earn " once became a class of its own beside "earn".
    const auto split = without_surrounding_spaces(row.substr(tab1 + 1, tab2 - tab1 - 1));
    const auto label = without_surrounding_spaces(row.substr(tab2 + 1));
    if (name.empty()) throw row_error(file, line, "empty index");
    if (split != "train" && split != "test")
      throw row_error(file, line,
                      fmt::format("split '{}' is neither train nor test", util::printable(split)));
    if (label.empty()) throw row_error(file, line, "empty label");
    indices.emplace_back(name);
    is_test.push_back(split == "test");
    label_names.emplace_back(label);
    lines.push_back(line);
  }
  if (line == 0) throw row_error(file, 1, "empty file (expected the header)");
  // Checked before the join on indices (which names a line of its own), as a whole-file fault.
  if (std::find(is_test.begin(), is_test.end(), true) == is_test.end())
    throw std::runtime_error(
        fmt::format("{}: no row's split is 'test': the corpus has no test document to evaluate on",
                    util::printable_path(file)));
  if (std::adjacent_find(label_names.begin(), label_names.end(), std::not_equal_to<>()) ==
      label_names.end())
    throw std::runtime_error(
        fmt::format("{}: every document has the label '{}': classifying needs two classes or more",
                    util::printable_path(file), util::printable(label_names.front())));
  std::map<std::string, std::int32_t> class_of;
  for (const auto& name : label_names) class_of.emplace(name, 0);
  for (auto& [name, index] : class_of) {
    index = static_cast<std::int32_t>(labels.classes.size());
    labels.classes.push_back(name);
  }
  for (const auto row : rows_in_document_order(file, indices, lines)) {
    labels.document_names.push_back(indices[row]);
    labels.is_test.push_back(is_test[row]);
    labels.label.push_back(class_of.at(label_names[row]));
  }
  return labels;
}

}  // namespace headroom::text
