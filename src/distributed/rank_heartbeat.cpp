#include "rank_heartbeat.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace headroom::distributed::detail {
namespace {

std::string alive_key(int rank) { return fmt::format("headroom/alive/{}", rank); }
std::string failed_key(int rank) { return fmt::format("headroom/failed/{}", rank); }

}  // namespace

RankHeartbeat::RankHeartbeat(StoreConnector connect, int rank, int world_size,
                             std::chrono::milliseconds interval)
    : connect_(std::move(connect)), rank_(rank), world_size_(world_size), interval_(interval) {
  thread_ = std::thread([this] { beat(); });
}

RankHeartbeat::~RankHeartbeat() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  stop_signal_.notify_all();
  thread_.join();
}

void RankHeartbeat::beat() {
  try {
    const auto store = connect_();
    std::unique_lock lock(mutex_);
    while (!stopping_) {
      store->add(alive_key(rank_), 1);
      stop_signal_.wait_for(lock, interval_, [this] { return stopping_; });
    }
  } catch (const std::exception&) {
    // The store is gone (rank 0 ended): there is nobody left to tell. A collective that needs
    // the lost rank fails on its own and names it.
  }
}

std::string RankHeartbeat::lost_ranks(std::chrono::milliseconds grace) {
  try {
    const auto store = connect_();
    store->add(failed_key(rank_), 1);
    const auto counters = [&] {
      std::vector<std::int64_t> values;
      for (int r = 0; r < world_size_; ++r) values.push_back(store->add(alive_key(r), 0));
      return values;
    };
    const auto before = counters();
    std::this_thread::sleep_for(grace);
    const auto after = counters();
    std::vector<int> lost;
    for (int r = 0; r < world_size_; ++r)
      if (r != rank_ && after[static_cast<std::size_t>(r)] == before[static_cast<std::size_t>(r)] &&
          store->add(failed_key(r), 0) == 0)
        lost.push_back(r);
    if (lost.empty()) return "none found (every other rank is alive or failed itself)";
    return fmt::format("rank{} {} (no heartbeat for {:.1f} s)", lost.size() > 1 ? "s" : "",
                       fmt::join(lost, ", "), static_cast<double>(grace.count()) / 1000.0);
  } catch (const std::exception&) {
    return "rank 0 (its rendezvous store is unreachable)";
  }
}

}  // namespace headroom::distributed::detail
