// How a dataset's CAN files were read (a --format and, for --format csv, the column mapping), as
// a store's manifest records it: everything that reads those files again after preprocessing
// (the classical baseline, a detector) must read them the same way, or a CSV that only a mapping
// describes cannot be read back at all. Stateless: thread-safe.
#pragma once

#include <nlohmann/json.hpp>

#include "headroom/can/log_format.hpp"

namespace headroom::can {

// The format and mapping of `options` as JSON: {"format": NAME} and, for the mapped CSV,
// {"csv_mapping": {...every CsvColumnMapping field...}}. null for --format auto (the default:
// each file's format is detected again from the file), so a default store's manifest is unchanged.
nlohmann::json render_reader_settings(const ReaderOptions& options);

// The inverse: `options` with the format and mapping of `settings` (null leaves them at auto).
// Throws std::invalid_argument naming the field for an unknown format or a mistyped field.
ReaderOptions parse_reader_settings(const nlohmann::json& settings, ReaderOptions options = {});

}  // namespace headroom::can
