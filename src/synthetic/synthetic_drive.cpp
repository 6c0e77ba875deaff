#include "synthetic_drive.hpp"

#include <algorithm>

namespace headroom::synthetic::detail {
namespace {

constexpr std::int64_t kTickUs = 10'000;
constexpr std::int32_t kMaxSpeed = 25'000;  // 250 km/h

// Upper speed of each gear (km/h) and engine rpm per km/h in that gear.
constexpr std::int32_t kGearTopKmh[] = {15, 30, 50, 70, 95};
constexpr std::int32_t kRpmPerKmh[] = {0, 130, 75, 50, 38, 30, 24};

std::int32_t gear_for(std::int32_t speed_centi_kmh) {
  if (speed_centi_kmh == 0) return 0;
  std::int32_t gear = 1;
  for (const std::int32_t top : kGearTopKmh) {
    if (speed_centi_kmh < top * 100) return gear;
    ++gear;
  }
  return gear;
}

}  // namespace

DriveModel::DriveModel(std::uint64_t seed, std::int64_t start_us)
    : rng_(seed), next_tick_us_(start_us) {}

void DriveModel::advance_to(std::int64_t time_us) {
  while (next_tick_us_ <= time_us) {
    tick();
    next_tick_us_ += kTickUs;
  }
}

void DriveModel::tick() {
  if (phase_ticks_left_ <= 0) {
    // A new leg of the trip: stop, city or highway, held for 5-30 s.
    const auto leg = rng_.below(100);
    if (leg < 12) {
      target_speed_ = 0;
    } else if (leg < 55) {
      target_speed_ = static_cast<std::int32_t>(rng_.between(2'000, 6'000));
    } else {
      target_speed_ = static_cast<std::int32_t>(rng_.between(7'000, 13'000));
    }
    max_accel_ = static_cast<std::int32_t>(rng_.between(3, 8));
    phase_ticks_left_ = static_cast<std::int32_t>(rng_.between(500, 3'000));
  }
  --phase_ticks_left_;

  const std::int32_t delta = std::clamp(target_speed_ - speed_, -12, max_accel_);
  // Nobody holds a speed exactly: small fluctuations while cruising.
  const std::int32_t wobble =
      speed_ > 0 && delta == 0 ? static_cast<std::int32_t>(rng_.between(-2, 2)) : 0;
  speed_ = std::clamp(speed_ + delta + wobble, 0, kMaxSpeed);

  gear_ = gear_for(speed_);
  const auto rpm_noise = static_cast<std::int32_t>(rng_.between(-15, 15));
  rpm_ = gear_ == 0 ? 780 + rpm_noise : std::max(900, speed_ * kRpmPerKmh[gear_] / 100) + rpm_noise;
  if (delta > 0) {
    throttle_ = std::min(100, 15 + delta * 9);
  } else if (delta < 0) {
    throttle_ = 0;
  } else {
    throttle_ = speed_ > 0 ? static_cast<std::int32_t>(rng_.between(10, 18)) : 0;
  }

  if (rng_.chance(1, 400)) {
    // Turns are sharp in town and gentle on the highway.
    const std::int32_t limit = speed_ < 5'000 ? 4'500 : 300;
    steering_target_ =
        rng_.chance(1, 2) ? 0 : static_cast<std::int32_t>(rng_.between(-limit, limit));
  }
  steering_ += std::clamp(steering_target_ - steering_, -30, 30) +
               static_cast<std::int32_t>(rng_.between(-2, 2));
}

}  // namespace headroom::synthetic::detail
