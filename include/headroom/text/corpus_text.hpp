// Reading a corpus file, one document per line, as it arrives: Windows-1252 or UTF-8 (ASCII
// being both), LF or CRLF line ends. Lines end at LF alone: CR, NEL (0x85, '…' in Windows-1252)
// and every other byte are text, so no document is ever split or dropped. What was decoded how is
// reported. Stateless and thread-safe.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>

namespace headroom::text {

enum class TextEncoding {
  kAscii,        // no byte above 0x7F
  kUtf8,         // every line well-formed UTF-8 (a leading byte-order mark is dropped)
  kWindows1252,  // anything else: each byte one character (0x80-0x9F as Windows-1252 defines them;
                 // its five undefined bytes as the C1 controls, as WHATWG's decoder does)
};

std::string_view encoding_name(TextEncoding encoding);

// What a scan of the file found.
struct CorpusTextReport {
  std::filesystem::path file;
  TextEncoding encoding = TextEncoding::kAscii;
  std::uint64_t bytes = 0;
  std::uint64_t bytes_above_7f = 0;
  std::uint64_t documents = 0;  // lines; a last line without LF counts, an empty end does not
  std::uint64_t crlf_lines = 0;
  std::uint64_t lf_lines = 0;
  bool byte_order_mark = false;

  // "corpus.txt: Windows-1252 (1,234 bytes above 0x7F), CRLF line ends; 10,662 documents".
  std::string describe() const;
};

// Reads the file once (bounded buffer) and decides its encoding. Throws std::runtime_error naming
// the file when it cannot be read.
CorpusTextReport scan_corpus_text(const std::filesystem::path& file);

// Calls `document(line, text)` for each document, in order: `line` from 1, `text` decoded to UTF-8
// with its line end (LF or CRLF) removed. Reads with a bounded buffer; `text` is valid during the
// call only.
void read_corpus_documents(
    const CorpusTextReport& report,
    const std::function<void(std::uint64_t line, std::string_view text)>& document);

// The UTF-8 form of Windows-1252 text.
std::string decode_windows_1252(std::string_view bytes);

// 1234567 -> "1,234,567".
std::string with_thousands(std::uint64_t value);

}  // namespace headroom::text
