#include "headroom/text/corpus_text.hpp"

#include <fmt/format.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <memory>
#include <system_error>
#include <vector>

#include "headroom/util/printable_text.hpp"
#include "headroom/util/regular_file.hpp"
#include "headroom/util/utf8.hpp"

namespace headroom::text {
namespace {

constexpr std::size_t kReadBytes = 1 << 20;
constexpr std::string_view kByteOrderMark = "\xEF\xBB\xBF";

// Code points of 0x80..0x9F in Windows-1252; the undefined five map to the C1 control itself.
constexpr std::array<char32_t, 32> kWindows1252High = {
    0x20AC, 0x0081, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160,
    0x2039, 0x0152, 0x008D, 0x017D, 0x008F, 0x0090, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022,
    0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x009D, 0x017E, 0x0178};

void append_utf8(char32_t c, std::string& out) {
  if (c < 0x80) {
    out += static_cast<char>(c);
  } else if (c < 0x800) {
    out += static_cast<char>(0xC0 | (c >> 6));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    out += static_cast<char>(0xE0 | (c >> 12));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  }
}

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

// Calls `line(text, crlf)` for every line of the file (LF-terminated, or the last one without),
// `text` without its line end.
template <typename LineFn>
void for_each_line(const std::filesystem::path& file, LineFn&& line) {
  // Only a regular file (links followed): a FIFO would block the read and a device never end it.
  auto fd = util::open_regular_for_reading(file);
  std::unique_ptr<std::FILE, FileCloser> f(::fdopen(fd.get(), "rb"));
  if (!f)
    throw std::system_error(errno, std::generic_category(),
                            fmt::format("cannot open '{}'", util::printable_path(file)));
  fd.release();  // the stream closes it
  std::vector<char> buffer(kReadBytes);
  std::string pending;
  for (;;) {
    const std::size_t n = std::fread(buffer.data(), 1, buffer.size(), f.get());
    if (n == 0) {
      if (std::ferror(f.get()))
        throw std::system_error(errno, std::generic_category(),
                                fmt::format("cannot read '{}'", util::printable_path(file)));
      break;
    }
    std::string_view chunk(buffer.data(), n);
    for (;;) {
      const auto end = chunk.find('\n');
      if (end == std::string_view::npos) {
        pending.append(chunk);
        break;
      }
      pending.append(chunk.substr(0, end));
      const bool crlf = !pending.empty() && pending.back() == '\r';
      if (crlf) pending.pop_back();
      line(std::string_view(pending), crlf, true);
      pending.clear();
      chunk.remove_prefix(end + 1);
    }
  }
  if (!pending.empty()) line(std::string_view(pending), false, false);
}

}  // namespace

std::string_view encoding_name(TextEncoding encoding) {
  switch (encoding) {
    case TextEncoding::kAscii:
      return "ASCII";
    case TextEncoding::kUtf8:
      return "UTF-8";
    case TextEncoding::kWindows1252:
      return "Windows-1252";
  }
  return "?";
}

std::string with_thousands(std::uint64_t value) {
  std::string digits = std::to_string(value);
  for (auto at = static_cast<std::ptrdiff_t>(digits.size()) - 3; at > 0; at -= 3)
    digits.insert(static_cast<std::size_t>(at), ",");
  return digits;
}

std::string CorpusTextReport::describe() const {
  std::string encoding_text(encoding_name(encoding));
  if (encoding != TextEncoding::kAscii)
    encoding_text += fmt::format(" ({} bytes above 0x7F{})", with_thousands(bytes_above_7f),
                                 byte_order_mark ? ", byte-order mark dropped" : "");
  std::string line_ends = "LF line ends";
  if (crlf_lines > 0 && lf_lines == 0) line_ends = "CRLF line ends";
  if (crlf_lines > 0 && lf_lines > 0)
    line_ends = fmt::format("mixed line ends ({} CRLF, {} LF)", with_thousands(crlf_lines),
                            with_thousands(lf_lines));
  if (crlf_lines == 0 && lf_lines == 0) line_ends = "no line end";
  return fmt::format("{}: {}, {}; {} documents", util::printable_path(file.filename()),
                     encoding_text, line_ends, with_thousands(documents));
}

std::string decode_windows_1252(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  for (const char ch : bytes) {
    const auto b = static_cast<unsigned char>(ch);
    if (b < 0x80)
      out += ch;
    else
      append_utf8(b < 0xA0 ? kWindows1252High[b - 0x80] : char32_t{b}, out);
  }
  return out;
}

CorpusTextReport scan_corpus_text(const std::filesystem::path& file) {
  CorpusTextReport report;
  report.file = file;
  bool utf8 = true;
  for_each_line(file, [&](std::string_view text, bool crlf, bool terminated) {
    if (report.documents == 0 && text.substr(0, kByteOrderMark.size()) == kByteOrderMark)
      report.byte_order_mark = true;
    ++report.documents;
    report.bytes += text.size() + (terminated ? 1 : 0) + (crlf ? 1 : 0);
    if (terminated) ++(crlf ? report.crlf_lines : report.lf_lines);
    for (const char c : text) report.bytes_above_7f += static_cast<unsigned char>(c) > 0x7F;
    if (utf8 && !util::is_utf8(text)) utf8 = false;
  });
  if (report.bytes_above_7f == 0)
    report.encoding = TextEncoding::kAscii;
  else
    report.encoding = utf8 ? TextEncoding::kUtf8 : TextEncoding::kWindows1252;
  // A mark only means one in UTF-8; in Windows-1252 those bytes are text ("ï»¿").
  if (report.encoding != TextEncoding::kUtf8) report.byte_order_mark = false;
  return report;
}

void read_corpus_documents(
    const CorpusTextReport& report,
    const std::function<void(std::uint64_t line, std::string_view text)>& document) {
  std::uint64_t line = 0;
  for_each_line(report.file, [&](std::string_view text, bool, bool) {
    ++line;
    if (line == 1 && report.byte_order_mark) text.remove_prefix(kByteOrderMark.size());
    if (report.encoding == TextEncoding::kWindows1252)
      document(line, decode_windows_1252(text));
    else
      document(line, text);
  });
}

}  // namespace headroom::text
