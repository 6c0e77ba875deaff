#include "headroom/util/byte_size.hpp"

#include <fmt/format.h>
#include <array>
#include <cctype>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

namespace headroom::util {

std::int64_t parse_byte_size(std::string_view text) {
  const auto fail = [&] {
    throw std::invalid_argument(fmt::format(
        "'{}' is not a memory size (examples: 1GB, 512MiB, 1.5G, 4096)", std::string(text)));
  };
  std::size_t i = 0;
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i])) != 0) ++i;
  const std::size_t number_start = i;
  while (i < text.size() &&
         (std::isdigit(static_cast<unsigned char>(text[i])) != 0 || text[i] == '.'))
    ++i;
  if (i == number_start) fail();
  double value = 0;
  try {
    const std::string number(text.substr(number_start, i - number_start));
    std::size_t used = 0;
    value = std::stod(number, &used);
    if (used != number.size()) fail();
  } catch (const std::exception&) {
    fail();
  }
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i])) != 0) ++i;
  std::string unit;
  for (; i < text.size(); ++i) {
    if (std::isspace(static_cast<unsigned char>(text[i])) != 0) break;
    unit += static_cast<char>(std::tolower(static_cast<unsigned char>(text[i])));
  }
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i])) != 0) ++i;
  if (i != text.size()) fail();
  static const std::array<std::pair<const char*, double>, 14> kUnits = {{
      {"", 1.0},
      {"b", 1.0},
      {"kb", 1e3},
      {"mb", 1e6},
      {"gb", 1e9},
      {"tb", 1e12},
      {"kib", 1024.0},
      {"mib", 1048576.0},
      {"gib", 1073741824.0},
      {"tib", 1099511627776.0},
      {"k", 1024.0},
      {"m", 1048576.0},
      {"g", 1073741824.0},
      {"t", 1099511627776.0},
  }};
  for (const auto& [name, factor] : kUnits) {
    if (unit == name) {
      const double bytes = value * factor;
      if (!std::isfinite(bytes) || bytes > 9.0e18) fail();
      return static_cast<std::int64_t>(std::llround(bytes));
    }
  }
  fail();
  return 0;
}

std::string format_byte_size(double bytes) {
  if (bytes >= 1073741824.0) return fmt::format("{:.2f} GiB", bytes / 1073741824.0);
  if (bytes >= 1048576.0) return fmt::format("{:.1f} MiB", bytes / 1048576.0);
  if (bytes >= 1024.0) return fmt::format("{:.1f} KiB", bytes / 1024.0);
  return fmt::format("{:.0f} B", bytes);
}

}  // namespace headroom::util
