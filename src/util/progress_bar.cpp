#include "headroom/util/progress_bar.hpp"

#include <unistd.h>

#include <fmt/format.h>
#include <algorithm>
#include <cstdio>

namespace headroom::util {
namespace {

std::string human(double value) {
  if (value >= 1e9) return fmt::format("{:.2f}G", value / 1e9);
  if (value >= 1e6) return fmt::format("{:.2f}M", value / 1e6);
  if (value >= 1e3) return fmt::format("{:.1f}k", value / 1e3);
  return fmt::format("{:.0f}", value);
}

}  // namespace

ProgressBar::ProgressBar(std::string label, std::uint64_t total, std::string unit, int enabled)
    : label_(std::move(label)),
      total_(total),
      unit_(std::move(unit)),
      enabled_(enabled < 0 ? ::isatty(STDERR_FILENO) == 1 : enabled != 0),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {}

ProgressBar::~ProgressBar() { finish(); }

void ProgressBar::advance(std::uint64_t done, std::uint64_t items) {
  done_.fetch_add(done, std::memory_order_relaxed);
  items_.fetch_add(items, std::memory_order_relaxed);
  if (!enabled_) return;
  std::unique_lock lock(draw_mutex_, std::try_to_lock);
  if (!lock.owns_lock() || finished_) return;
  const auto now = std::chrono::steady_clock::now();
  if (now - last_draw_ < std::chrono::milliseconds(100)) return;
  last_draw_ = now;
  draw(false);
}

void ProgressBar::finish() {
  if (!enabled_) return;
  std::lock_guard lock(draw_mutex_);
  if (finished_) return;
  draw(true);
  finished_ = true;
}

void ProgressBar::set_status(std::string status) {
  std::lock_guard lock(draw_mutex_);
  status_ = std::move(status);
}

void ProgressBar::draw(bool final) {
  constexpr int kWidth = 30;
  const std::uint64_t done = std::min(done_.load(), total_);
  const double fraction =
      total_ == 0 ? 1.0 : static_cast<double>(done) / static_cast<double>(total_);
  const int filled = static_cast<int>(fraction * kWidth);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const double items = static_cast<double>(items_.load());
  const std::string bar = std::string(static_cast<std::size_t>(filled), '#') +
                          std::string(static_cast<std::size_t>(kWidth - filled), '.');
  std::fprintf(stderr, "\r%s [%s] %3.0f%%  %s %s  %s/s  %.1fs  %s\x1b[K%s", label_.c_str(),
               bar.c_str(), fraction * 100.0, human(items).c_str(), unit_.c_str(),
               human(seconds > 0 ? items / seconds : 0.0).c_str(), seconds, status_.c_str(),
               final ? "\n" : "");
  std::fflush(stderr);
}

}  // namespace headroom::util
