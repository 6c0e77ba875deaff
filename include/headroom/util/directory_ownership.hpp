// Whether a directory is one headroom wrote, decided by what only headroom writes: a record that
// parses and validates (a store's manifest, a dataset's synthetic.json) and nothing beside the
// entries its writer creates. A file name alone proves nothing (any web app has a manifest.json),
// so --force, a store rebuild and every clean-up delete a tree only after such a check, and a
// directory holding anything else is refused with the first foreign entries named.
// Stateless and thread-safe; the answers read the file system, so callers that delete check again
// just before.
#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace headroom::util {

// Whether the entry at `relative` (below the directory checked, e.g. "train_01/x.csv") is one the
// writer creates; `is_directory` tells a directory from a regular file (symbolic links and other
// kinds are never a writer's).
using OwnEntryPredicate =
    std::function<bool(const std::filesystem::path& relative, bool is_directory)>;

// What one kind of output directory is and how to recognise it.
struct DirectoryKind {
  std::string what;  // in messages: "graph store", "synthetic dataset"
  // Of a complete directory: empty when it is one headroom wrote, otherwise why not (one line,
  // naming the first foreign entries). Must not throw for any content.
  std::function<std::string(const std::filesystem::path& directory)> why_not_ours;
  // Every entry the writer may create while it builds the directory (a superset of the complete
  // directory's entries: scratch files, half-written temporaries).
  OwnEntryPredicate is_staged_entry;
};

// The entries under `root` (relative paths, depth first, at most `limit`) that `is_own` rejects,
// and every symbolic link or special file. A rejected directory is reported once, not descended.
// An unreadable directory is reported as foreign too: what cannot be listed cannot be proved ours.
std::vector<std::filesystem::path> foreign_entries(const std::filesystem::path& root,
                                                   const OwnEntryPredicate& is_own,
                                                   std::size_t limit = 3);

// "it holds 'a', 'b' that headroom did not write" for messages ("" for no entries).
std::string describe_foreign_entries(const std::vector<std::filesystem::path>& entries);

// Whether `directory` is a directory (not a symbolic link) with nothing in it.
bool is_empty_directory(const std::filesystem::path& directory);

// Deletes `directory` when it is empty or `kind` recognises it as headroom's; otherwise leaves it
// and prints one warning naming it and why. Returns whether it is gone.
bool remove_if_ours(const std::filesystem::path& directory, const DirectoryKind& kind);

}  // namespace headroom::util
