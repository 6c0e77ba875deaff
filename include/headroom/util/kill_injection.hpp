// A testing hook, like HEADROOM_INJECT_OOM (memory/tensor_memory_meter.hpp): HEADROOM_INJECT_KILL
// makes a training process SIGKILL itself at one exact point of one epoch, so that a test of
// resumption kills a run where it means to, every time, instead of timing a kill from outside
// (polling metrics.jsonl, which raced the run's own progress).
//
//   HEADROOM_INJECT_KILL=epoch-end:N         once epoch N's metrics line and last.pt are durable
//   HEADROOM_INJECT_KILL=checkpoint-write:N  while epoch N's last.pt is written: its temporary
//   holds
//                                            half of the bytes (written and fsynced), not renamed
//
// N counts epochs from 1, as the log does ("epoch 2/4"). The graph stages, the node stage and
// fusion honour it; every process of a data-parallel job reads it, and only the one that writes
// last.pt (rank 0) can die in checkpoint-write.
// Thread-safety: arm it once at start-up, before any training thread exists; the queries may be
// called from any thread.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string_view>

namespace headroom::util {

enum class KillPoint {
  kEpochEnd,         // "epoch-end"
  kCheckpointWrite,  // "checkpoint-write"
};

struct KillInjection {
  KillPoint point = KillPoint::kEpochEnd;
  std::int64_t epoch = 1;  // counted from 1
};

// Parses a HEADROOM_INJECT_KILL value ("epoch-end:2"); throws std::invalid_argument naming the
// variable, the value and the expected form when it is malformed (an unknown point, an epoch that
// is not a whole number from 1 up).
KillInjection parse_kill_injection(std::string_view spec);

// Reads HEADROOM_INJECT_KILL and arms it (unset or empty: nothing is armed); throws as
// parse_kill_injection does.
void inject_kill_from_environment();

// Arms `injection`, replacing what was armed; std::nullopt disarms.
void set_kill_injection(std::optional<KillInjection> injection);

// A training loop calls this once epoch `epoch` (from 1) has ended durably (its metrics line and
// last.pt written): when epoch-end:`epoch` is armed, this process dies of SIGKILL here.
void kill_if_injected_at_epoch_end(std::int64_t epoch);

// A training loop calls this just before it writes epoch `epoch`'s last.pt to `file`: when
// checkpoint-write:`epoch` is armed, the next write_file_atomically of `file` (file_writer.hpp)
// writes half of its temporary and then this process dies of SIGKILL, before the rename.
void arm_kill_while_writing(std::int64_t epoch, const std::filesystem::path& file);

// Whether an armed checkpoint-write kill is aimed at `file` (write_file_atomically asks).
bool kill_armed_while_writing(const std::filesystem::path& file);

// SIGKILLs this process: no handler, no unwinding, no flush, as a kill -9 from outside.
[[noreturn]] void kill_this_process();

}  // namespace headroom::util
