// A directory a command is told to write into (--runs-dir, --tensorboard), checked before the
// command starts: created later, as it is needed, it failed deep in a stage with a bare
// "filesystem error: cannot create directories: Not a directory [...]" that named no flag.
// Stateless and thread-safe; it reads the file system, so the answer holds for the moment.
#pragma once

#include <filesystem>
#include <string_view>

namespace headroom::util {

// Throws std::runtime_error, naming `what` (e.g. "--tensorboard /dev/null") and the first path
// that is in the way, when `directory` or one of its parents is something other than a
// directory (a file, a FIFO, a device such as /dev/null; links followed). Parts that do not exist
// yet are fine: the command creates them.
void require_directory_or_absent(const std::filesystem::path& directory, std::string_view what);

}  // namespace headroom::util
