#include "headroom/util/kill_injection.hpp"

#include <signal.h>
#include <unistd.h>

#include <fmt/format.h>

#include <charconv>
#include <cstdlib>
#include <mutex>
#include <stdexcept>
#include <string>

namespace headroom::util {
namespace {

constexpr const char* kVariable = "HEADROOM_INJECT_KILL";

struct ArmedKill {
  std::mutex mutex;
  std::optional<KillInjection> injection;
  std::filesystem::path write_target;  // set by arm_kill_while_writing
};

ArmedKill& armed() {
  static ArmedKill state;
  return state;
}

}  // namespace

KillInjection parse_kill_injection(std::string_view spec) {
  const auto refuse = [&] {
    return std::invalid_argument(fmt::format(
        "{}='{}': expected epoch-end:N or checkpoint-write:N, N the epoch counted from 1 (e.g. "
        "epoch-end:2)",
        kVariable, spec));
  };
  const auto colon = spec.find(':');
  if (colon == std::string_view::npos) throw refuse();
  const auto point = spec.substr(0, colon);
  const auto number = spec.substr(colon + 1);
  KillInjection injection;
  if (point == "epoch-end")
    injection.point = KillPoint::kEpochEnd;
  else if (point == "checkpoint-write")
    injection.point = KillPoint::kCheckpointWrite;
  else
    throw refuse();
  // Decimal digits only, as the integer flags take them (no sign, no spaces, no "2e1").
  if (number.empty() || number.find_first_not_of("0123456789") != std::string_view::npos)
    throw refuse();
  const auto [end, error] =
      std::from_chars(number.data(), number.data() + number.size(), injection.epoch);
  if (error != std::errc() || end != number.data() + number.size() || injection.epoch < 1)
    throw refuse();
  return injection;
}

void inject_kill_from_environment() {
  const char* spec = std::getenv(kVariable);
  if (spec == nullptr || *spec == '\0') return;
  set_kill_injection(parse_kill_injection(spec));
}

void set_kill_injection(std::optional<KillInjection> injection) {
  auto& state = armed();
  const std::lock_guard lock(state.mutex);
  state.injection = injection;
  state.write_target.clear();
}

void kill_if_injected_at_epoch_end(std::int64_t epoch) {
  auto& state = armed();
  {
    const std::lock_guard lock(state.mutex);
    if (!state.injection || state.injection->point != KillPoint::kEpochEnd ||
        state.injection->epoch != epoch)
      return;
  }
  kill_this_process();
}

void arm_kill_while_writing(std::int64_t epoch, const std::filesystem::path& file) {
  auto& state = armed();
  const std::lock_guard lock(state.mutex);
  if (state.injection && state.injection->point == KillPoint::kCheckpointWrite &&
      state.injection->epoch == epoch)
    state.write_target = file;
}

bool kill_armed_while_writing(const std::filesystem::path& file) {
  auto& state = armed();
  const std::lock_guard lock(state.mutex);
  return !state.write_target.empty() && state.write_target == file;
}

void kill_this_process() {
  ::kill(::getpid(), SIGKILL);
  // SIGKILL cannot be caught or blocked; reaching this line means the kill itself failed.
  std::abort();
}

}  // namespace headroom::util
