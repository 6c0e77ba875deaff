// What a killed headroom process leaves behind: `<target>.tmp-<pid>` files and directories of its
// atomic writes (file_writer.hpp, the store builder, the synthetic generator). They are removed by
// the next write of the same target, once their process is gone. Only names of exactly that form
// whose pid is not a live process are touched: a run still writing keeps its temporary, and
// nothing headroom did not create matches. Thread-safe (file-system calls only).
#pragma once

#include <filesystem>
#include <string_view>

namespace headroom::util {

// Whether `entry` is named `<prefix><pid>` (pid: 1-9 decimal digits) and no process `pid` runs.
bool is_stale_temporary(const std::filesystem::path& entry, std::string_view prefix);

// Removes every stale `<target>.tmp-<pid>` (file or directory tree) beside `target`. Returns how
// many were removed; errors removing one are ignored (it stays for the next attempt).
int remove_stale_temporaries(const std::filesystem::path& target);

}  // namespace headroom::util
