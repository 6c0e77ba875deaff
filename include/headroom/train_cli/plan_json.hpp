// `headroom plan` as a value, for callers inside this process (the Python module): the same flags,
// the same validation and the same numbers as the command, without printing.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

namespace headroom::cli {

// The JSON that `headroom plan ARGS --json` prints. `args` are the command's arguments after
// "plan", without --json (e.g. {"--store", "stores/hcrl_sa", "--preset", "gat,teacher"}).
// Throws CLI::ParseError (its message names the flag) for arguments the command refuses, and what
// the command throws otherwise (store::StoreError, std::invalid_argument, ...). Measuring runs
// training steps on this process's device, as the command does; not thread-safe.
nlohmann::json plan_json(const std::vector<std::string>& args);

}  // namespace headroom::cli
