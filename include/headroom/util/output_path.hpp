// Guards for the paths a command writes to. Two promises: an output never overlaps an input (so a
// mistyped --out cannot replace or fill the data it reads), and --force only ever replaces what
// headroom itself created (a directory it recognises as its own, or an empty directory).
// Stateless and thread-safe; they read the file system, so a path can change after a check —
// callers that replace a directory check again just before the swap.
#pragma once

#include <filesystem>
#include <string_view>

#include "headroom/util/directory_ownership.hpp"

namespace headroom::util {

// Throws std::runtime_error when `output` and `input` are the same path, or one lies inside the
// other. Both are compared after resolving symlinks and `..` in the parts that exist, so a
// symlink or a relative spelling cannot slip past. `output_what` and `input_what` name the two in
// the message (e.g. "the store (--out)", "the dataset").
void require_disjoint(const std::filesystem::path& output, std::string_view output_what,
                      const std::filesystem::path& input, std::string_view input_what);

// Throws std::runtime_error unless `path` may be replaced under --force: it does not exist, or it
// is a directory (not a symlink) that is empty or that `kind` recognises as one headroom wrote
// (its record validates and it holds nothing else: directory_ownership.hpp). The message names
// `kind.what` and the first foreign entries.
void require_replaceable(const std::filesystem::path& path, const DirectoryKind& kind);

// Throws std::runtime_error when `output` would lie on a kernel pseudo file system (proc, sysfs,
// devtmpfs, cgroup, debugfs and their kind, read from /proc/self/mountinfo): what is written there
// is kernel state or vanishes at reboot, never storage. A RAM disk (tmpfs, e.g. /dev/shm) is
// storage and passes. The message names `output_what` and the file system. Resolves symlinks in
// the part of `output` that exists; when the mount table cannot be read, nothing is refused.
void require_storage_location(const std::filesystem::path& output, std::string_view output_what);

}  // namespace headroom::util
