// HEADROOM_INJECT_STOP (util/stop_injection.hpp): the one value it takes, and a process that
// stops itself once, however many host plans it makes.
#include "headroom/util/stop_injection.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "test_support.hpp"

namespace headroom::util {
namespace {

TEST(StopInjection, AValueOtherThanHostPlanIsRefusedNamingTheVariable) {
  setenv("HEADROOM_INJECT_STOP", "host-plan:2", 1);
  const auto message = testing::error_message([] { inject_stop_from_environment(); });
  unsetenv("HEADROOM_INJECT_STOP");
  EXPECT_NE(message.find("HEADROOM_INJECT_STOP='host-plan:2'"), std::string::npos) << message;
  EXPECT_NE(message.find("expected host-plan"), std::string::npos) << message;
}

// A child armed as at start-up reaches two host plans (two stages): it stops at the first only.
TEST(StopInjection, AnArmedProcessStopsOnceAtItsFirstHostPlan) {
  const pid_t pid = fork();
  if (pid == 0) {
    set_stop_at_host_plan(true);
    stop_if_injected_at_host_plan();
    stop_if_injected_at_host_plan();
    _exit(0);
  }
  ASSERT_GT(pid, 0);
  int stops = 0;
  int status = 0;
  while (waitpid(pid, &status, WUNTRACED) == pid && WIFSTOPPED(status)) {
    ++stops;
    kill(pid, SIGCONT);
  }
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_EQ(stops, 1);
}

}  // namespace
}  // namespace headroom::util
