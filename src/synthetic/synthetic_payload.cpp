#include "synthetic_payload.hpp"

#include <algorithm>
#include <span>

namespace headroom::synthetic::detail {
namespace {

// Oscillator amplitude in fixed point: large enough that the integer rotation stays smooth.
constexpr int kWaveBits = 20;
constexpr std::int64_t kWaveAmplitude = std::int64_t{1} << kWaveBits;

std::int64_t isqrt(std::int64_t n) {
  std::int64_t r = 0;
  for (std::int64_t bit = std::int64_t{1} << 62; bit > 0; bit >>= 2) {
    if (n >= r + bit) {
      n -= r + bit;
      r = (r >> 1) + bit;
    } else {
      r >>= 1;
    }
  }
  return r;
}

}  // namespace

void write_signal(const SignalField& field, std::int64_t raw, Payload& payload) {
  if (field.width == 2) {
    const auto v = static_cast<std::uint16_t>(std::clamp<std::int64_t>(raw, 0, 0xFFFF));
    payload[field.byte] = static_cast<std::uint8_t>(v >> 8);
    payload[field.byte + 1] = static_cast<std::uint8_t>(v & 0xFF);
  } else {
    payload[field.byte] = static_cast<std::uint8_t>(std::clamp<std::int64_t>(raw, 0, 0xFF));
  }
}

void write_counter(const EcuSpec& ecu, std::uint32_t value, Payload& payload) {
  if (!ecu.counter) return;
  const RollingCounterField& c = *ecu.counter;
  const auto mask = static_cast<std::uint8_t>(((1U << c.bits) - 1) << c.shift);
  const auto bits = static_cast<std::uint8_t>((value << c.shift) & mask);
  payload[c.byte] = static_cast<std::uint8_t>((payload[c.byte] & ~mask) | bits);
}

void seal_checksum(const EcuSpec& ecu, Payload& payload) {
  if (!ecu.checksum) return;
  payload[ecu.checksum->byte] = synthetic_checksum(ecu, std::span<const std::uint8_t>(payload));
}

EcuPayloadModel::EcuPayloadModel(const EcuSpec& ecu, SyntheticRng& rng)
    : ecu_(&ecu),
      states_(ecu.signals.size()),
      counter_start_(static_cast<std::uint32_t>(rng.below(256))) {
  for (std::size_t i = 0; i < ecu.signals.size(); ++i) {
    const SignalField& field = ecu.signals[i];
    SignalState& state = states_[i];
    switch (field.kind) {
      case SignalKind::kRandomWalk:
        state.value = field.center + rng.between(-field.spread / 2, field.spread / 2);
        break;
      case SignalKind::kStatus:
        state.value = field.center;
        break;
      case SignalKind::kWheelSpeed:
        state.value = rng.between(-40, 40);  // tyre wear and pressure differ per wheel
        break;
      case SignalKind::kSlowWave: {
        // One cycle every 20-300 s. The rotation below advances by about 2^-shift radians per
        // frame, so the shift follows from the cycle length in frames.
        const std::int64_t cycle_frames = rng.between(20'000'000, 300'000'000) / ecu.period_us;
        int shift = 2;
        while (shift < 16 && (std::int64_t{628} << (shift + 1)) <= cycle_frames * 100) ++shift;
        state.shift = shift;
        // A random starting point on the circle.
        state.x = rng.between(-kWaveAmplitude, kWaveAmplitude);
        state.y = isqrt(kWaveAmplitude * kWaveAmplitude - state.x * state.x);
        if (rng.chance(1, 2)) state.y = -state.y;
        break;
      }
      default:
        break;
    }
  }
}

std::int64_t EcuPayloadModel::next_raw(const SignalField& field, SignalState& state,
                                       const DriveModel& drive, SyntheticRng& rng) {
  switch (field.kind) {
    case SignalKind::kVehicleSpeed:
      return drive.speed_centi_kmh();
    case SignalKind::kWheelSpeed: {
      const std::int32_t speed = drive.speed_centi_kmh();
      return speed == 0 ? 0 : speed + state.value + rng.between(-5, 5);
    }
    case SignalKind::kEngineRpm:
      return drive.engine_rpm();
    case SignalKind::kSteeringAngle:
      return 32'768 + drive.steering_decideg();
    case SignalKind::kThrottle:
      return drive.throttle_percent();
    case SignalKind::kGear:
      return drive.gear();
    case SignalKind::kRandomWalk: {
      const std::int64_t step = std::max(1, field.spread / 16);
      state.value += rng.between(-step, step) - (state.value - field.center) / 16;
      state.value = std::clamp<std::int64_t>(state.value, field.center - field.spread,
                                             field.center + field.spread);
      return state.value;
    }
    case SignalKind::kSlowWave:
      // Minsky's integer rotation: exact, bounded, and no trigonometry whose last bit could
      // differ between C libraries.
      state.x -= state.y >> state.shift;
      state.y += state.x >> state.shift;
      return field.center + state.x * field.spread / kWaveAmplitude;
    case SignalKind::kStatus:
      if (rng.chance(1, 500)) {
        state.value = state.value == field.center ? field.center | (std::int64_t{1} << rng.below(4))
                                                  : field.center;
      }
      return state.value;
  }
  return 0;
}

void EcuPayloadModel::compose(std::uint64_t sequence, const DriveModel& drive, SyntheticRng& rng,
                              Payload& payload) {
  payload.fill(0);
  std::copy_n(ecu_->constant_bytes.begin(), ecu_->dlc, payload.begin());
  for (std::size_t i = 0; i < states_.size(); ++i) {
    const SignalField& field = ecu_->signals[i];
    write_signal(field, next_raw(field, states_[i], drive, rng), payload);
  }
  write_counter(*ecu_, static_cast<std::uint32_t>(counter_start_ + sequence), payload);
  seal_checksum(*ecu_, payload);
}

}  // namespace headroom::synthetic::detail
