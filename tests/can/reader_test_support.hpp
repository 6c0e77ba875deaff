// Helpers shared by the CAN log reader tests: frame builders, reading a whole log and catching the
// InputError a reader throws.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "headroom/can/can_frame.hpp"
#include "headroom/can/frame_reader.hpp"
#include "headroom/util/input_error.hpp"
#include "test_support.hpp"

namespace headroom::testing {

// A frame with the given timestamp, ID, payload (dlc = its size) and label.
inline can::CanFrame frame(double t, std::uint32_t id, const std::vector<std::uint8_t>& bytes,
                           std::uint8_t label = 0) {
  can::CanFrame f;
  f.timestamp_s = t;
  f.id = id;
  f.dlc = static_cast<std::uint8_t>(bytes.size());
  for (std::size_t i = 0; i < bytes.size(); ++i) f.data[i] = bytes[i];
  f.label = label;
  return f;
}

// Every frame `reader` has left, read `chunk` frames at a time (small by default, so that a few
// rows already cross read() calls).
inline std::vector<can::CanFrame> read_all(can::FrameReader& reader, std::size_t chunk = 3) {
  std::vector<can::CanFrame> all;
  std::vector<can::CanFrame> buffer(chunk);
  while (const std::size_t n = reader.read(buffer))
    all.insert(all.end(), buffer.begin(), buffer.begin() + static_cast<std::ptrdiff_t>(n));
  return all;
}

// The InputError `action` throws; a test failure (and an empty error) when it throws none.
inline util::InputError catch_input_error(const std::function<void()>& action) {
  try {
    action();
  } catch (const util::InputError& e) {
    return e;
  }
  ADD_FAILURE() << "expected an InputError";
  return util::InputError("", 0, "", "");
}

// A bad row and the column and reason a reader must report for it.
struct BadRowCase {
  std::string row;
  std::string column;
  std::string reason;
};

// For each of `cases`, writes `head`, the case's row and `tail` to a file (the row ends its own
// line) and expects `read(file)` to throw the InputError of that row: its line, column and reason.
inline void expect_bad_rows(const std::vector<BadRowCase>& cases, const std::string& head,
                            const std::string& tail,
                            const std::function<void(const std::filesystem::path&)>& read) {
  TempDir dir;
  const auto file = dir / "bad_row.txt";
  const auto line = static_cast<std::uint64_t>(std::count(head.begin(), head.end(), '\n')) + 1;
  for (const auto& c : cases) {
    SCOPED_TRACE(c.row);
    write_text_file(file, head + c.row + "\n" + tail);
    const util::InputError e = catch_input_error([&] { read(file); });
    EXPECT_EQ(e.file(), file);
    EXPECT_EQ(e.line(), line);
    EXPECT_EQ(e.column(), c.column);
    EXPECT_EQ(e.reason(), c.reason);
  }
}

}  // namespace headroom::testing
