// The simulated car behind `headroom generate`: a fixed set of ECUs, each broadcasting one CAN ID
// periodically with its own payload layout (signals, rolling counter, checksum, constant bytes).
// The set is a pure function of a seed, so every file of a synthetic dataset shows the same car,
// and the same seed gives the same car on every platform.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace headroom::synthetic {

inline constexpr std::size_t kMinSyntheticEcus = 30;
inline constexpr std::size_t kMaxSyntheticEcus = 50;
inline constexpr std::int64_t kMinSyntheticPeriodUs = 10'000;     // 10 ms
inline constexpr std::int64_t kMaxSyntheticPeriodUs = 1'000'000;  // 1 s

// A rolling counter: `bits` (4 or 8) bits starting at bit `shift` (0 or 4) of payload byte `byte`.
// It goes up by one, modulo 2^bits, for every frame the ECU queues; a frame that is overwritten in
// the ECU's transmit buffer before it wins the bus (an overloaded bus) shows up as a skipped value.
struct RollingCounterField {
  std::uint8_t byte = 0;
  std::uint8_t shift = 0;
  std::uint8_t bits = 4;
};

enum class ChecksumKind : std::uint8_t {
  kSum,  // (sum of the other payload bytes + low byte of the arbitration ID) mod 256
  kXor,  // XOR of the other payload bytes
};

// A checksum byte computed over every other byte of the payload (see synthetic_checksum).
struct ChecksumField {
  std::uint8_t byte = 0;
  ChecksumKind kind = ChecksumKind::kSum;
};

// What a signal encodes. Multi-byte signals are big-endian (Motorola order, as most OEMs use).
enum class SignalKind : std::uint8_t {
  kVehicleSpeed,   // 2 bytes, 0.01 km/h per bit, shared by all ECUs that send it
  kWheelSpeed,     // 2 bytes, vehicle speed plus a small per-wheel deviation
  kEngineRpm,      // 2 bytes, 1 rpm per bit
  kSteeringAngle,  // 2 bytes, 0.1 degree per bit, 32768 = straight ahead
  kThrottle,       // 1 byte, percent
  kGear,           // 1 byte, 0 = standstill, 1..6
  kRandomWalk,     // 1-2 bytes, mean-reverting random walk within center ± spread
  kSlowWave,       // 1-2 bytes, sine-like oscillation around center with amplitude spread
  kStatus,         // 1 byte, `center` with one flag bit set now and then
};

struct SignalField {
  SignalKind kind = SignalKind::kRandomWalk;
  std::uint8_t byte = 0;    // first payload byte
  std::uint8_t width = 1;   // bytes, 1 or 2
  std::int32_t center = 0;  // raw value; used by kRandomWalk, kSlowWave, kStatus
  std::int32_t spread = 0;  // raw value; used by kRandomWalk, kSlowWave
};

struct EcuSpec {
  std::uint32_t id = 0;        // 11-bit arbitration ID, never 0 (0 is left to the DoS attacker)
  std::int64_t period_us = 0;  // nominal transmission period, microseconds
  std::int64_t jitter_us = 0;  // each frame is queued within ± jitter_us of its nominal time
  std::uint8_t dlc = 8;        // payload length in bytes, 1..8
  std::optional<RollingCounterField> counter;
  std::optional<ChecksumField> checksum;
  std::vector<SignalField> signals;  // non-overlapping, inside [0, dlc)
  // Value of every payload bit that no field above covers (including the spare nibble of a
  // 4-bit counter byte).
  std::array<std::uint8_t, 8> constant_bytes{};
};

struct SyntheticVehicle {
  std::vector<EcuSpec> ecus;  // sorted by id, ids distinct
};

// The car for `seed`: kMinSyntheticEcus..kMaxSyntheticEcus ECUs, periods between
// kMinSyntheticPeriodUs and kMaxSyntheticPeriodUs (faster periods on higher-priority IDs), a bus
// load of at most about half of a 500 kbit/s bus. Pure function; safe to call from any thread.
SyntheticVehicle make_synthetic_vehicle(std::uint64_t seed);

// The checksum byte `ecu` puts into `payload` (its first ecu.dlc bytes), computed from every byte
// except the checksum byte itself. Precondition: ecu.checksum has a value.
std::uint8_t synthetic_checksum(const EcuSpec& ecu, std::span<const std::uint8_t> payload);

// Bus time of one frame with `dlc` payload bytes on the simulated 500 kbit/s bus, microseconds
// (standard 11-bit data frame with interframe space and typical bit stuffing).
std::int64_t synthetic_frame_time_us(std::uint8_t dlc);

}  // namespace headroom::synthetic
