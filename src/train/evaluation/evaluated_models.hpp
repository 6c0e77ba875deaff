// Which checkpoints an evaluation scores, and the name each one's results go under: the models
// given (--models), or every run directory of the dataset that holds a best.pt. Private to the
// evaluation wing.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace headroom::train::detail {

// The run directories under `dataset_dir` holding a best.pt: teachers, then students, then
// fusions, then hybrids, each by name (the order the summary reads best in). Empty when
// `dataset_dir` is no directory.
std::vector<std::filesystem::path> discover_models(const std::filesystem::path& dataset_dir);

// The checkpoints of `sources` (run directories or checkpoint files), each once, with the name of
// its entry in evaluation.json (its run directory's name); `origin` says where `sources` came from
// ("--models"), for errors. Throws std::runtime_error naming both when two sources are one
// checkpoint (`--models X,X`, `X` and `./X`, a link) or two checkpoints would share one name, and
// as resolve_checkpoint_path does for a source without a checkpoint.
std::vector<std::pair<std::string, std::filesystem::path>> named_checkpoints(
    const std::vector<std::filesystem::path>& sources, std::string_view origin);

}  // namespace headroom::train::detail
