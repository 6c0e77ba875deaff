// A one-line progress bar on stderr for long work. Silent when stderr is not a terminal (logs, CI)
// unless forced on.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>

namespace headroom::util {

// Thread-safe: any thread may call advance(); redraws are rate-limited to ~10 per second.
class ProgressBar {
 public:
  // The bar fills as `done` reaches `total` (e.g. input bytes); next to it the item counter and
  // its rate are shown, named `item_name` (e.g. "rows"). `enabled` defaults to isatty(stderr).
  ProgressBar(std::string label, std::uint64_t total, std::string item_name, int enabled = -1);
  ~ProgressBar();  // finishes the line

  // Adds `done` units of progress and `items` to the item counter shown next to the bar.
  void advance(std::uint64_t done, std::uint64_t items = 0);
  void finish();
  // Extra text drawn after the rate (e.g. "loss 0.0123"); thread-safe.
  void set_status(std::string status);

 private:
  void draw(bool final);

  std::string label_;
  std::uint64_t total_;
  std::string unit_;
  bool enabled_;
  std::atomic<std::uint64_t> done_{0};
  std::atomic<std::uint64_t> items_{0};
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_;
  std::mutex draw_mutex_;
  bool finished_ = false;
  std::string status_;  // guarded by draw_mutex_
};

}  // namespace headroom::util
