#include "synthetic_bus.hpp"

#include <algorithm>

namespace headroom::synthetic::detail {

SyntheticBus::SyntheticBus(const SyntheticVehicle& vehicle, std::uint64_t seed,
                           std::int64_t start_us, AttackInjector* attacker)
    : rng_(seed), drive_(mix_seed(seed, 1), start_us), attacker_(attacker), bus_free_us_(start_us) {
  transmitters_.reserve(vehicle.ecus.size());
  for (const auto& ecu : vehicle.ecus) {
    // ECUs power up at unrelated moments, so their schedules have random phases.
    const std::int64_t first =
        start_us + ecu.jitter_us +
        static_cast<std::int64_t>(rng_.below(static_cast<std::uint64_t>(ecu.period_us)));
    transmitters_.push_back(
        Transmitter{&ecu, EcuPayloadModel(ecu, rng_), first, synthetic_frame_time_us(ecu.dlc)});
    Transmitter& t = transmitters_.back();
    t.ready_us = queue_time(t, 0);
    t.next_ready_us = queue_time(t, 1);
  }
}

std::int64_t SyntheticBus::queue_time(const Transmitter& t, std::uint64_t sequence) {
  const EcuSpec& ecu = *t.ecu;
  return t.first_us + static_cast<std::int64_t>(sequence) * ecu.period_us +
         rng_.between(-ecu.jitter_us, ecu.jitter_us);
}

void SyntheticBus::advance(Transmitter& t) {
  ++t.sequence;
  t.ready_us = t.next_ready_us;
  t.next_ready_us = queue_time(t, t.sequence + 1);
}

void SyntheticBus::next(SyntheticFrame& frame) {
  // Among frames already waiting when the bus goes idle, the lowest ID wins; if none is waiting,
  // the first to arrive takes the bus. Keys order by ID, the attacker after a real ECU of the same
  // ID (it sends with the same priority and loses the tie in this model).
  constexpr int kAttacker = -1;
  int winner = -2;
  bool winner_waiting = false;
  std::int64_t winner_ready = 0;
  std::uint64_t winner_key = 0;
  const auto consider = [&](int who, std::int64_t ready, std::uint64_t key) {
    if (ready <= bus_free_us_) {
      if (!winner_waiting || key < winner_key) {
        winner = who;
        winner_waiting = true;
        winner_ready = ready;
        winner_key = key;
      }
    } else if (!winner_waiting && (winner == -2 || ready < winner_ready ||
                                   (ready == winner_ready && key < winner_key))) {
      winner = who;
      winner_ready = ready;
      winner_key = key;
    }
  };
  for (std::size_t i = 0; i < transmitters_.size(); ++i) {
    const Transmitter& t = transmitters_[i];
    consider(static_cast<int>(i), t.ready_us, std::uint64_t{t.ecu->id} << 1);
  }
  if (attacker_ != nullptr && attacker_->ready_us() != AttackInjector::kNever) {
    consider(kAttacker, attacker_->ready_us(), (std::uint64_t{attacker_->pending().id} << 1) | 1);
  }

  const std::int64_t start = std::max(winner_ready, bus_free_us_);
  if (winner == kAttacker) {
    frame = attacker_->pending();
    frame.time_us = start + synthetic_frame_time_us(frame.dlc);
    attacker_->sent(start);
  } else {
    Transmitter& t = transmitters_[static_cast<std::size_t>(winner)];
    while (t.next_ready_us <= start) advance(t);  // overwritten in the transmit buffer
    drive_.advance_to(start);
    frame.id = t.ecu->id;
    frame.dlc = t.ecu->dlc;
    frame.label = 0;
    t.payload.compose(t.sequence, drive_, rng_, frame.data);
    frame.time_us = start + t.frame_time_us;
    advance(t);
  }
  bus_free_us_ = frame.time_us;
}

}  // namespace headroom::synthetic::detail
