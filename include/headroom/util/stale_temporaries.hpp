// The names of headroom's temporaries and what a killed headroom process leaves of them. Every
// atomic write (file_writer.hpp, the store builder, staged_directory.hpp) goes through a sibling
// named `<target>.tmp-headroom-<pid>-<token>`, the token 16 random hex digits drawn for that one
// temporary, so no name a user or another program picks looks like one by accident. Clean-up
// touches only names of exactly that form whose pid no longer runs: a run still writing keeps its
// temporary, and a directory needs more proof than its name (staged_directory.hpp).
// Thread-safe (file-system calls and a locked random source only).
#pragma once

#include <filesystem>
#include <string_view>

namespace headroom::util {

// A fresh temporary name beside `target`: `<target>.tmp-headroom-<this pid>-<new token>`.
std::filesystem::path temporary_path_for(const std::filesystem::path& target);

// Whether `entry` is named exactly `<target_name>.tmp-headroom-<pid>-<16 lowercase hex digits>`
// (pid: 1-9 decimal digits, no leading zero) and no process `pid` runs. Names only: the caller
// decides what else it needs before deleting.
bool is_stale_temporary(const std::filesystem::path& entry, std::string_view target_name);

// Removes the stale temporary *files* of `target` (regular files whose name is_stale_temporary;
// never a directory, symbolic link or other name). Returns how many were removed; errors removing
// one are ignored (it stays for the next attempt).
int remove_stale_temporaries(const std::filesystem::path& target);

}  // namespace headroom::util
