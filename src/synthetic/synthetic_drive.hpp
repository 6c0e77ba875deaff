// The shared driving state of the simulated car (speed, engine speed, gear, throttle, steering).
// ECUs that broadcast the same physical quantity read it from here, so their signals agree the
// way they do in a real car -- structure a detector can learn and a spoofer breaks.
#pragma once

#include <cstdint>

#include "synthetic_random.hpp"

namespace headroom::synthetic::detail {

// Not thread-safe; one per generated file.
class DriveModel {
 public:
  DriveModel(std::uint64_t seed, std::int64_t start_us);

  // Steps the model in 10 ms ticks up to `time_us` (microseconds); time never goes back.
  void advance_to(std::int64_t time_us);

  std::int32_t speed_centi_kmh() const { return speed_; }  // 0.01 km/h
  std::int32_t engine_rpm() const { return rpm_; }
  std::int32_t gear() const { return gear_; }  // 0 = standstill, 1..6
  std::int32_t throttle_percent() const { return throttle_; }
  std::int32_t steering_decideg() const { return steering_; }  // 0.1 degree, + = left

 private:
  void tick();

  SyntheticRng rng_;
  std::int64_t next_tick_us_;
  std::int32_t phase_ticks_left_ = 0;
  std::int32_t target_speed_ = 0;
  std::int32_t max_accel_ = 5;  // 0.01 km/h per tick
  std::int32_t steering_target_ = 0;
  std::int32_t speed_ = 0;
  std::int32_t rpm_ = 800;
  std::int32_t gear_ = 0;
  std::int32_t throttle_ = 0;
  std::int32_t steering_ = 0;
};

}  // namespace headroom::synthetic::detail
