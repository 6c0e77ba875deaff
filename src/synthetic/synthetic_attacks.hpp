// The attacker of the synthetic dataset: when it attacks (intervals) and what it injects.
#pragma once

#include <cstdint>
#include <limits>
#include <string_view>
#include <vector>

#include "headroom/synthetic/synthetic_vehicle.hpp"
#include "synthetic_frame.hpp"
#include "synthetic_random.hpp"

namespace headroom::synthetic::detail {

enum class AttackKind : std::uint8_t {
  kNone,
  kDos,       // ID 0x000 (wins every arbitration), all-zero payload, every 0.3 ms
  kFuzzing,   // random IDs 0x000-0x7FF, random DLC and payload, every 0.5 ms
  kSpoofing,  // one ECU's ID with a forged constant payload, every 1 ms beside the real ECU
};

// The attack type as it appears in file names: "attack-free", "DoS", "fuzzing", "spoofing".
std::string_view attack_type_name(AttackKind kind);

// Nominal time between two injected frames, microseconds.
std::int64_t attack_injection_period_us(AttackKind kind);

struct AttackInterval {
  std::int64_t begin_us = 0;  // microseconds since the Unix epoch, half-open [begin, end)
  std::int64_t end_us = 0;
};

// Normal frames an attack file begins with before its first attack (fewer in a short file).
inline constexpr std::uint64_t kAttackLeadInFrames = 25'000;

// 3-6 intervals spread over the expected duration of a file of `frames` frames starting at
// `start_us`, together covering about a fifth of it, the first after a lead-in of normal traffic
// as long as kAttackLeadInFrames normal frames take (at least a tenth of `frames`, at most 55%).
// The duration is an estimate (bus contention changes the real frame rate), so the last interval
// may fall past the end of the file or a little normal traffic may follow it.
std::vector<AttackInterval> plan_attack_intervals(AttackKind kind, const SyntheticVehicle& vehicle,
                                                  std::int64_t start_us, std::uint64_t frames,
                                                  SyntheticRng& rng);

// Produces the injected frames, one pending frame at a time. Holds a pointer into `vehicle`, which
// must outlive it. Not thread-safe.
class AttackInjector {
 public:
  static constexpr std::int64_t kNever = std::numeric_limits<std::int64_t>::max();

  AttackInjector(AttackKind kind, const SyntheticVehicle& vehicle,
                 std::vector<AttackInterval> intervals, std::uint64_t seed);

  // When the pending frame is queued for the bus; kNever once all intervals are over.
  std::int64_t ready_us() const { return ready_us_; }
  // The pending frame (id, dlc, data, label = 1; time_us unset).
  const SyntheticFrame& pending() const { return pending_; }
  // Reports that the pending frame started transmission at `start_us`; queues the next one the
  // way an injection loop does: one injection period (with timing noise) after the last send.
  void sent(std::int64_t start_us);

 private:
  void schedule(std::int64_t earliest_us);
  void prepare_frame();
  void forge_spoofed_payload();

  AttackKind kind_;
  std::vector<AttackInterval> intervals_;
  std::size_t interval_ = 0;
  SyntheticRng rng_;
  std::int64_t ready_us_ = kNever;
  SyntheticFrame pending_;
  const EcuSpec* spoof_target_ = nullptr;
  bool spoof_valid_checksum_ = false;
  std::array<std::uint8_t, 8> forged_{};
};

}  // namespace headroom::synthetic::detail
