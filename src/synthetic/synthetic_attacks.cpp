#include "synthetic_attacks.hpp"

#include <algorithm>
#include <utility>

#include "synthetic_payload.hpp"

namespace headroom::synthetic::detail {
namespace {

bool carries_driving_signal(const EcuSpec& ecu) {
  return std::any_of(ecu.signals.begin(), ecu.signals.end(), [](const SignalField& s) {
    return s.kind != SignalKind::kRandomWalk && s.kind != SignalKind::kSlowWave &&
           s.kind != SignalKind::kStatus;
  });
}

}  // namespace

std::string_view attack_type_name(AttackKind kind) {
  switch (kind) {
    case AttackKind::kNone:
      return "attack-free";
    case AttackKind::kDos:
      return "DoS";
    case AttackKind::kFuzzing:
      return "fuzzing";
    case AttackKind::kSpoofing:
      return "spoofing";
  }
  return "attack-free";
}

std::int64_t attack_injection_period_us(AttackKind kind) {
  switch (kind) {
    case AttackKind::kDos:
      return 300;
    case AttackKind::kFuzzing:
      return 500;
    case AttackKind::kSpoofing:
      return 1'000;
    case AttackKind::kNone:
      break;
  }
  return AttackInjector::kNever;
}

std::vector<AttackInterval> plan_attack_intervals(AttackKind kind, const SyntheticVehicle& vehicle,
                                                  std::int64_t start_us, std::uint64_t frames,
                                                  SyntheticRng& rng) {
  if (kind == AttackKind::kNone) return {};
  // Frame rates in frames per 1000 s keep the arithmetic in integers.
  std::uint64_t normal_rate = 0;
  for (const auto& ecu : vehicle.ecus) {
    normal_rate += 1'000'000'000ULL / static_cast<std::uint64_t>(ecu.period_us);
  }
  // The attacker loses some of its nominal rate to arbitration and send-loop overhead.
  const std::uint64_t attack_rate =
      1'000'000'000ULL / static_cast<std::uint64_t>(attack_injection_period_us(kind)) * 4 / 5;
  const std::uint64_t rate = normal_rate + attack_rate / 5;  // attacking about a fifth of the time
  const auto expected_us = static_cast<std::int64_t>((frames / rate) * 1'000'000'000ULL +
                                                     (frames % rate) * 1'000'000'000ULL / rate);

  // Real captures begin with normal driving: the first attack of every hcrl_sa and set_01 test
  // file comes after 25,400 to 106,200 frames (17-48% of the file). The lead-in is the time of
  // kAttackLeadInFrames normal frames, at least a tenth and at most 55% of the file's frames.
  const std::uint64_t lead_frames =
      std::clamp<std::uint64_t>(kAttackLeadInFrames, frames / 10, frames * 55 / 100);
  const std::int64_t lead_us =
      std::min(static_cast<std::int64_t>(lead_frames * 1'000'000'000ULL / normal_rate),
               expected_us * 80 / 100);
  const std::int64_t usable_begin = start_us + lead_us;
  // The intervals share the time up to 95% of the file, covering about half of it.
  const auto count = rng.between(3, 6);
  const std::int64_t slot = std::max<std::int64_t>((expected_us * 95 / 100 - lead_us) / count, 10);
  std::vector<AttackInterval> intervals;
  for (std::int64_t i = 0; i < count; ++i) {
    const std::int64_t duration = std::max<std::int64_t>(slot * rng.between(30, 70) / 100, 1);
    const std::int64_t begin =
        usable_begin + i * slot +
        static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(slot - duration) + 1));
    intervals.push_back({begin, begin + duration});
  }
  return intervals;
}

AttackInjector::AttackInjector(AttackKind kind, const SyntheticVehicle& vehicle,
                               std::vector<AttackInterval> intervals, std::uint64_t seed)
    : kind_(kind), intervals_(std::move(intervals)), rng_(seed) {
  pending_.label = 1;
  if (kind_ == AttackKind::kSpoofing) {
    // Spoofers go for messages whose content matters: speed, rpm, steering, gear, throttle.
    std::vector<const EcuSpec*> targets;
    for (const auto& ecu : vehicle.ecus) {
      if (carries_driving_signal(ecu)) targets.push_back(&ecu);
    }
    if (targets.empty()) {
      for (const auto& ecu : vehicle.ecus) targets.push_back(&ecu);
    }
    spoof_target_ = targets[rng_.below(targets.size())];
    // A careless attacker replays bytes with a stale checksum; a careful one recomputes it.
    spoof_valid_checksum_ = rng_.chance(1, 2);
  }
  if (kind_ == AttackKind::kNone || intervals_.empty()) return;
  ready_us_ = intervals_.front().begin_us;
  if (kind_ == AttackKind::kSpoofing) forge_spoofed_payload();
  prepare_frame();
}

void AttackInjector::sent(std::int64_t start_us) {
  const std::int64_t period = attack_injection_period_us(kind_);
  schedule(start_us + period + rng_.between(-period / 10, period / 10));
}

void AttackInjector::schedule(std::int64_t earliest_us) {
  ready_us_ = earliest_us;
  while (ready_us_ >= intervals_[interval_].end_us) {
    if (++interval_ == intervals_.size()) {
      ready_us_ = kNever;
      return;
    }
    ready_us_ = std::max(ready_us_, intervals_[interval_].begin_us);
    if (kind_ == AttackKind::kSpoofing) forge_spoofed_payload();
  }
  prepare_frame();
}

void AttackInjector::forge_spoofed_payload() {
  // One forged message per interval, repeated unchanged: fixed signal values and a frozen counter.
  const EcuSpec& ecu = *spoof_target_;
  forged_.fill(0);
  std::copy_n(ecu.constant_bytes.begin(), ecu.dlc, forged_.begin());
  for (const auto& field : ecu.signals) {
    write_signal(field, static_cast<std::int64_t>(rng_.below(field.width == 2 ? 0x10000 : 0x100)),
                 forged_);
  }
  write_counter(ecu, static_cast<std::uint32_t>(rng_.below(256)), forged_);
  seal_checksum(ecu, forged_);
  if (ecu.checksum && !spoof_valid_checksum_) {
    forged_[ecu.checksum->byte] ^= static_cast<std::uint8_t>(rng_.between(1, 255));
  }
}

void AttackInjector::prepare_frame() {
  pending_.data.fill(0);
  switch (kind_) {
    case AttackKind::kDos:
      pending_.id = 0;
      pending_.dlc = 8;
      break;
    case AttackKind::kFuzzing:
      pending_.id = static_cast<std::uint32_t>(rng_.below(0x800));
      pending_.dlc = static_cast<std::uint8_t>(rng_.below(9));
      for (std::size_t i = 0; i < pending_.dlc; ++i) pending_.data[i] = rng_.byte();
      break;
    case AttackKind::kSpoofing:
      pending_.id = spoof_target_->id;
      pending_.dlc = spoof_target_->dlc;
      pending_.data = forged_;
      break;
    case AttackKind::kNone:
      break;
  }
}

}  // namespace headroom::synthetic::detail
