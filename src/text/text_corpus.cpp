#include "headroom/text/text_corpus.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <stdexcept>
#include <system_error>

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
  std::vector<std::string> label_names;
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
    const auto split = row.substr(tab1 + 1, tab2 - tab1 - 1);
    const auto label = row.substr(tab2 + 1);
    if (name.empty()) throw row_error(file, line, "empty index");
    if (split != "train" && split != "test")
      throw row_error(file, line,
                      fmt::format("split '{}' is neither train nor test", util::printable(split)));
    if (label.empty()) throw row_error(file, line, "empty label");
    labels.document_names.emplace_back(name);
    labels.is_test.push_back(split == "test");
    label_names.emplace_back(label);
  }
  if (line == 0) throw row_error(file, 1, "empty file (expected the header)");
  std::map<std::string, std::int32_t> class_of;
  for (const auto& name : label_names) class_of.emplace(name, 0);
  for (auto& [name, index] : class_of) {
    index = static_cast<std::int32_t>(labels.classes.size());
    labels.classes.push_back(name);
  }
  labels.label.reserve(label_names.size());
  for (const auto& name : label_names) labels.label.push_back(class_of.at(name));
  return labels;
}

}  // namespace headroom::text
