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

}  // namespace headroom::util
