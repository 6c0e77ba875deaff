#include "headroom/util/stop_injection.hpp"

#include <signal.h>

#include <fmt/format.h>

#include <atomic>
#include <cstdlib>
#include <stdexcept>

namespace headroom::util {
namespace {

constexpr const char* kVariable = "HEADROOM_INJECT_STOP";
constinit std::atomic<bool> g_stop_at_host_plan{false};

}  // namespace

void inject_stop_from_environment() {
  const char* spec = std::getenv(kVariable);
  if (spec == nullptr || *spec == '\0') return;
  if (std::string_view(spec) != "host-plan")
    throw std::invalid_argument(fmt::format(
        "{}='{}': expected host-plan (stop once the host memory plan is logged)", kVariable, spec));
  set_stop_at_host_plan(true);
}

void set_stop_at_host_plan(bool armed) { g_stop_at_host_plan.store(armed); }

void stop_if_injected_at_host_plan() {
  if (g_stop_at_host_plan.exchange(false)) ::raise(SIGSTOP);
}

}  // namespace headroom::util
