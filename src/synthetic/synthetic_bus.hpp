// A CAN bus with the vehicle's ECUs (and optionally an attacker) on it. Frames come out in the
// order they finish on the wire: a frame waits while the bus is busy, the lowest pending ID wins
// arbitration, and an ECU whose previous frame is still waiting when the next one is due
// overwrites it (single transmit buffer). That is what makes a flood of ID 0 starve the real
// traffic, as it does in a car.
#pragma once

#include <cstdint>
#include <vector>

#include "headroom/synthetic/synthetic_vehicle.hpp"
#include "synthetic_attacks.hpp"
#include "synthetic_drive.hpp"
#include "synthetic_frame.hpp"
#include "synthetic_payload.hpp"
#include "synthetic_random.hpp"

namespace headroom::synthetic::detail {

// Holds pointers to `vehicle` and `attacker` (null for attack-free traffic); both must outlive
// the bus. Not thread-safe.
class SyntheticBus {
 public:
  SyntheticBus(const SyntheticVehicle& vehicle, std::uint64_t seed, std::int64_t start_us,
               AttackInjector* attacker);

  // The next frame to complete on the bus; time_us strictly increases from call to call.
  void next(SyntheticFrame& frame);

 private:
  struct Transmitter {
    const EcuSpec* ecu;
    EcuPayloadModel payload;
    std::int64_t first_us;       // nominal time of frame 0
    std::int64_t frame_time_us;  // bus time of one frame
    std::uint64_t sequence = 0;  // frame currently queued
    std::int64_t ready_us = 0;   // when it was queued
    std::int64_t next_ready_us = 0;
  };

  std::int64_t queue_time(const Transmitter& t, std::uint64_t sequence);
  void advance(Transmitter& t);

  SyntheticRng rng_;
  DriveModel drive_;
  std::vector<Transmitter> transmitters_;
  AttackInjector* attacker_;
  std::int64_t bus_free_us_;
};

}  // namespace headroom::synthetic::detail
