// Payload synthesis for one ECU: fills its signals, rolling counter and checksum frame by frame.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "headroom/synthetic/synthetic_vehicle.hpp"
#include "synthetic_drive.hpp"
#include "synthetic_random.hpp"

namespace headroom::synthetic::detail {

using Payload = std::array<std::uint8_t, 8>;

// Writes `raw` into the field's bytes (big-endian), clamped to what the field can hold.
void write_signal(const SignalField& field, std::int64_t raw, Payload& payload);
// Puts `value` (taken modulo 2^bits) into the ECU's counter bits; no-op without a counter.
void write_counter(const EcuSpec& ecu, std::uint32_t value, Payload& payload);
// Sets the checksum byte from the other bytes; no-op without a checksum.
void seal_checksum(const EcuSpec& ecu, Payload& payload);

// The evolving payload of one ECU in one file. Holds a pointer to `ecu`, which must outlive it.
// Not thread-safe.
class EcuPayloadModel {
 public:
  // Draws the initial state (counter start, signal phases) from `rng`.
  EcuPayloadModel(const EcuSpec& ecu, SyntheticRng& rng);

  // Fills payload[0, dlc) for the ECU's `sequence`-th queued frame (bytes past dlc are 0).
  // Signals advance one step per call, so call it once per transmitted frame, in time order.
  void compose(std::uint64_t sequence, const DriveModel& drive, SyntheticRng& rng,
               Payload& payload);

 private:
  struct SignalState {
    std::int64_t value = 0;  // random walk, status, wheel offset
    std::int64_t x = 0;      // slow-wave oscillator
    std::int64_t y = 0;
    int shift = 0;
  };

  std::int64_t next_raw(const SignalField& field, SignalState& state, const DriveModel& drive,
                        SyntheticRng& rng);

  const EcuSpec* ecu_;
  std::vector<SignalState> states_;  // parallel to ecu_->signals
  std::uint32_t counter_start_ = 0;
};

}  // namespace headroom::synthetic::detail
