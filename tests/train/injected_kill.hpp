// Runs a headroom command that kills itself at an exact point (HEADROOM_INJECT_KILL,
// util/kill_injection.hpp), for the tests that check what a resumed run does after the kill.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <filesystem>
#include <string>
#include <vector>

namespace headroom::testing {

// How a command run by run_with_injected_kill ended when it died of SIGKILL.
inline std::string killed_by_sigkill() { return fmt::format("killed by signal {}", SIGKILL); }

// Runs `command` through /bin/sh with HEADROOM_INJECT_KILL=`kill_point` ("epoch-end:2",
// "checkpoint-write:2"), its output in `log`; exec'd, so a signal ends the command itself and not
// a shell around it. Says how it ended: killed_by_sigkill(), another "killed by signal N", or
// "exited with status N" (a run that finished, or failed, without reaching the point).
inline std::string run_with_injected_kill(const std::string& command, const std::string& kill_point,
                                          const std::filesystem::path& log) {
  // Built before fork: the child of a threaded test process only execs.
  const std::string line = "export HEADROOM_INJECT_KILL='" + kill_point + "'; exec " + command +
                           " > '" + log.string() + "' 2>&1";
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::execl("/bin/sh", "sh", "-c", line.c_str(), nullptr);
    ::_exit(127);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFSIGNALED(status) ? fmt::format("killed by signal {}", WTERMSIG(status))
                             : fmt::format("exited with status {}", WEXITSTATUS(status));
}

// The temporaries of `file` in its directory (util/file_writer.hpp names them
// <file>.tmp-headroom-<pid>-<token>): what a write killed before its rename leaves.
inline std::vector<std::filesystem::path> temporaries_of(const std::filesystem::path& file) {
  std::vector<std::filesystem::path> found;
  const auto prefix = file.filename().string() + ".tmp-headroom-";
  for (const auto& entry : std::filesystem::directory_iterator(file.parent_path()))
    if (entry.path().filename().string().rfind(prefix, 0) == 0) found.push_back(entry.path());
  return found;
}

}  // namespace headroom::testing
