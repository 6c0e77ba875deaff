// Synced file output for the generator (the directory itself is published all-or-nothing by
// util::StagedDirectory).
#pragma once

#include <filesystem>
#include <string_view>

namespace headroom::synthetic::detail {

// Writes `content` to `file` and fsyncs it. Throws std::system_error on failure.
void write_synced_file(const std::filesystem::path& file, std::string_view content);

}  // namespace headroom::synthetic::detail
