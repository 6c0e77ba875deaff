#include "format_sniffing.hpp"

#include <charconv>

#include "headroom/can/line_source.hpp"
#include "headroom/can/text_fields.hpp"
#include "headroom/util/input_error.hpp"

namespace headroom::can {
namespace {

// Detection only needs the first line; a small block keeps it cheap on large files.
constexpr std::size_t kSniffBlockBytes = std::size_t{64} << 10;

}  // namespace

FirstLine first_content_line(const std::filesystem::path& file) {
  LineSource lines(file, kSniffBlockBytes);
  std::string_view line;
  while (lines.next(line)) {
    if (!is_blank(line)) return {std::string(trim(line)), lines.line_number()};
  }
  throw util::InputError(file, 0, "", "file holds only blank lines");
}

std::vector<std::string_view> split_commas(std::string_view line) {
  std::vector<std::string_view> fields;
  for (;;) {
    const std::size_t comma = line.find(',');
    std::string_view field = trim(line.substr(0, comma));
    if (field.size() >= 2 && field.front() == '"' && field.back() == '"') {
      field = field.substr(1, field.size() - 2);
    }
    fields.push_back(field);
    if (comma == std::string_view::npos) return fields;
    line.remove_prefix(comma + 1);
  }
}

bool is_number(std::string_view text) {
  double value = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  return !text.empty() && ec == std::errc() && ptr == text.data() + text.size();
}

}  // namespace headroom::can
