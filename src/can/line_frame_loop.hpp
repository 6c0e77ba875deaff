// The read loop of the line-based readers (CSV, candump): one frame per non-blank line, with the
// bad-row policy applied to the lines the parser rejects.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "headroom/can/can_frame.hpp"
#include "headroom/can/frame_reader.hpp"
#include "headroom/can/line_source.hpp"
#include "headroom/can/text_fields.hpp"
#include "headroom/util/input_error.hpp"

namespace headroom::can {

// Fills `out` from `lines`, skipping blank lines, and returns how many frames it wrote (0 at end of
// input). `parse_line(line, frame)` returns false for a bad row after setting `error_column` and
// `error_reason`; under BadRowPolicy::kError the loop then throws an InputError for the current
// line, so the next call goes on with the following line; under kSkip it counts the row in
// `skipped`.
template <typename ParseLine>
std::size_t read_line_frames(LineSource& lines, std::span<CanFrame> out, BadRowPolicy policy,
                             std::uint64_t& skipped, const std::string& error_column,
                             const std::string& error_reason, ParseLine&& parse_line) {
  std::size_t n = 0;
  std::string_view line;
  while (n < out.size() && lines.next(line)) {
    if (is_blank(line)) continue;
    if (parse_line(line, out[n])) {
      ++n;
      continue;
    }
    if (policy == BadRowPolicy::kError) {
      throw util::InputError(lines.path(), lines.line_number(), error_column, error_reason);
    }
    ++skipped;
  }
  return n;
}

}  // namespace headroom::can
