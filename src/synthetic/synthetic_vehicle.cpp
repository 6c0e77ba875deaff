#include "headroom/synthetic/synthetic_vehicle.hpp"

#include <algorithm>
#include <bitset>
#include <utility>

#include "synthetic_random.hpp"

namespace headroom::synthetic {
namespace {

using detail::SyntheticRng;

struct Weighted {
  std::int64_t value;
  std::uint64_t weight;
};

std::int64_t pick_weighted(SyntheticRng& rng, std::span<const Weighted> table) {
  std::uint64_t total = 0;
  for (const auto& entry : table) total += entry.weight;
  std::uint64_t ticket = rng.below(total);
  for (const auto& entry : table) {
    if (ticket < entry.weight) return entry.value;
    ticket -= entry.weight;
  }
  return table.back().value;
}

// Production cars use a handful of round periods; fast ones (10-100 ms) dominate.
constexpr Weighted kPeriodsUs[] = {
    {10'000, 15},  {20'000, 20}, {25'000, 5},  {40'000, 5},  {50'000, 15},
    {100'000, 20}, {200'000, 8}, {250'000, 2}, {500'000, 5}, {1'000'000, 5},
};

constexpr Weighted kWideSignals[] = {
    {static_cast<std::int64_t>(SignalKind::kVehicleSpeed), 2},
    {static_cast<std::int64_t>(SignalKind::kWheelSpeed), 2},
    {static_cast<std::int64_t>(SignalKind::kEngineRpm), 2},
    {static_cast<std::int64_t>(SignalKind::kSteeringAngle), 1},
    {static_cast<std::int64_t>(SignalKind::kRandomWalk), 3},
    {static_cast<std::int64_t>(SignalKind::kSlowWave), 2},
};

constexpr Weighted kByteSignals[] = {
    {static_cast<std::int64_t>(SignalKind::kThrottle), 2},
    {static_cast<std::int64_t>(SignalKind::kGear), 1},
    {static_cast<std::int64_t>(SignalKind::kRandomWalk), 3},
    {static_cast<std::int64_t>(SignalKind::kSlowWave), 2},
    {static_cast<std::int64_t>(SignalKind::kStatus), 2},
};

// IDs below 0x40 stay free so that a DoS flood of ID 0 outranks every ECU; 0x700+ is diagnostics.
constexpr std::uint32_t kLowestEcuId = 0x040;
constexpr std::uint32_t kHighestEcuId = 0x6FF;
// Keep normal traffic at most half of the bus: attacks need room to be visible and a real bus
// designer leaves head-room too.
constexpr std::int64_t kMaxBusLoadPpm = 500'000;

SignalField make_signal(SyntheticRng& rng, std::uint8_t byte, std::uint8_t available) {
  SignalField field;
  field.byte = byte;
  const bool wide = available >= 2 && rng.chance(6, 10);
  field.width = wide ? 2 : 1;
  field.kind =
      static_cast<SignalKind>(pick_weighted(rng, wide ? std::span<const Weighted>(kWideSignals)
                                                      : std::span<const Weighted>(kByteSignals)));
  const std::int32_t max_raw = wide ? 65'535 : 255;
  if (field.kind == SignalKind::kRandomWalk || field.kind == SignalKind::kSlowWave) {
    field.center =
        static_cast<std::int32_t>(wide ? rng.between(1'000, 64'535) : rng.between(20, 235));
    const std::int32_t room = std::min(field.center, max_raw - field.center);
    const std::int32_t max_spread = std::min(room, wide ? 8'000 : 40);
    field.spread = static_cast<std::int32_t>(rng.between(wide ? 50 : 2, max_spread));
  } else if (field.kind == SignalKind::kStatus) {
    field.center = rng.byte() & 0xF0;  // the low nibble holds the flags that come and go
  }
  return field;
}

EcuSpec make_ecu(SyntheticRng& rng, std::uint32_t id, std::int64_t period_us) {
  EcuSpec ecu;
  ecu.id = id;
  ecu.period_us = period_us;
  ecu.dlc = rng.chance(8, 10) ? 8 : static_cast<std::uint8_t>(rng.between(1, 7));
  for (auto& b : ecu.constant_bytes) {
    b = rng.chance(1, 2) ? 0x00 : (rng.chance(1, 3) ? 0xFF : rng.byte());
  }
  std::uint8_t free_end = ecu.dlc;
  if (ecu.dlc >= 4 && rng.chance(7, 10)) {
    ecu.checksum = ChecksumField{static_cast<std::uint8_t>(free_end - 1),
                                 rng.chance(1, 2) ? ChecksumKind::kSum : ChecksumKind::kXor};
    --free_end;
  }
  if (free_end >= 2 && rng.chance(8, 10)) {
    RollingCounterField counter;
    counter.byte = static_cast<std::uint8_t>(free_end - 1);
    counter.bits = rng.chance(7, 10) ? 4 : 8;
    counter.shift = counter.bits == 4 && rng.chance(1, 2) ? 4 : 0;
    ecu.counter = counter;
    --free_end;
  }
  std::uint8_t pos = 0;
  while (pos < free_end) {
    if (rng.chance(1, 4)) {  // a constant byte
      ++pos;
      continue;
    }
    const SignalField field = make_signal(rng, pos, static_cast<std::uint8_t>(free_end - pos));
    ecu.signals.push_back(field);
    pos = static_cast<std::uint8_t>(pos + field.width);
  }
  return ecu;
}

std::int64_t bus_load_ppm(const std::vector<EcuSpec>& ecus) {
  std::int64_t load = 0;
  for (const auto& ecu : ecus) load += synthetic_frame_time_us(ecu.dlc) * 1'000'000 / ecu.period_us;
  return load;
}

}  // namespace

std::int64_t synthetic_frame_time_us(std::uint8_t dlc) {
  // SOF..EOF of an 11-bit data frame is 44 bits + 8 per byte, plus 3 bits of interframe space;
  // stuffing adds about one bit per ten of the stuffable 34 + 8*dlc bits. 2 us per bit.
  const std::int64_t stuffable = 34 + 8 * static_cast<std::int64_t>(dlc);
  return (47 + 8 * static_cast<std::int64_t>(dlc) + stuffable / 10) * 2;
}

SyntheticVehicle make_synthetic_vehicle(std::uint64_t seed) {
  SyntheticRng rng(detail::mix_seed(seed, 0x7E41C1E));
  const auto count = static_cast<std::size_t>(rng.between(kMinSyntheticEcus, kMaxSyntheticEcus));

  std::bitset<0x800> taken;
  std::vector<std::uint32_t> ids;
  while (ids.size() < count) {
    const auto id = static_cast<std::uint32_t>(rng.between(kLowestEcuId, kHighestEcuId));
    if (taken[id]) continue;
    taken[id] = true;
    ids.push_back(id);
  }
  std::sort(ids.begin(), ids.end());

  // Higher-priority (lower) IDs carry the faster, more critical messages, but not strictly.
  std::vector<std::int64_t> periods;
  for (std::size_t i = 0; i < count; ++i) periods.push_back(pick_weighted(rng, kPeriodsUs));
  std::sort(periods.begin(), periods.end());
  for (std::size_t swaps = count / 3; swaps > 0; --swaps) {
    const auto i = static_cast<std::size_t>(rng.below(count - 1));
    std::swap(periods[i], periods[i + 1]);
  }

  SyntheticVehicle vehicle;
  for (std::size_t i = 0; i < count; ++i) vehicle.ecus.push_back(make_ecu(rng, ids[i], periods[i]));

  while (bus_load_ppm(vehicle.ecus) > kMaxBusLoadPpm) {
    auto fastest = std::min_element(
        vehicle.ecus.begin(), vehicle.ecus.end(),
        [](const EcuSpec& a, const EcuSpec& b) { return a.period_us < b.period_us; });
    fastest->period_us = std::min(fastest->period_us * 2, kMaxSyntheticPeriodUs);
  }
  // Real jitter comes from task scheduling and arbitration; it grows with the period but stays
  // well below it, so frames of one ECU never swap order.
  for (auto& ecu : vehicle.ecus) {
    ecu.jitter_us = std::clamp<std::int64_t>(ecu.period_us / 50, 100, 1'500);
  }
  return vehicle;
}

std::uint8_t synthetic_checksum(const EcuSpec& ecu, std::span<const std::uint8_t> payload) {
  const ChecksumField& field = *ecu.checksum;
  std::uint8_t acc =
      field.kind == ChecksumKind::kSum ? static_cast<std::uint8_t>(ecu.id & 0xFF) : 0;
  for (std::size_t i = 0; i < ecu.dlc && i < payload.size(); ++i) {
    if (i == field.byte) continue;
    acc = field.kind == ChecksumKind::kSum ? static_cast<std::uint8_t>(acc + payload[i])
                                           : static_cast<std::uint8_t>(acc ^ payload[i]);
  }
  return acc;
}

}  // namespace headroom::synthetic
