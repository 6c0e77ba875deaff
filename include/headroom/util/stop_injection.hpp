// A testing hook, like HEADROOM_INJECT_KILL (kill_injection.hpp): HEADROOM_INJECT_STOP=host-plan
// makes a training process stop itself (SIGSTOP) once, when its first host memory plan has been
// made and logged and before the device budget is applied, so that a test can read the process's
// memory from outside (/proc/<pid>/status) at the moment the plan's baseline stands for, and then
// let it go on (SIGCONT). The budget's claim is checked against that reading, not against what
// the process says of itself (tests/claims/host_rss_claim_test.cpp).
// Thread-safety: arm it once at start-up, before any training thread exists; the query may be
// called from any thread.
#pragma once

#include <string_view>

namespace headroom::util {

// Reads HEADROOM_INJECT_STOP and arms it (unset or empty: nothing is armed); throws
// std::invalid_argument naming the variable, its value and the one it takes for anything else.
void inject_stop_from_environment();

// Arms the stop (true) or disarms it.
void set_stop_at_host_plan(bool armed);

// Called once a command's host plan is logged: when armed, this process stops here (SIGSTOP) and
// the stop is disarmed, so a later plan (another stage) does not stop it again.
void stop_if_injected_at_host_plan();

}  // namespace headroom::util
