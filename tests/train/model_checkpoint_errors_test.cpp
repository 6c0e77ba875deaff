// A best.pt that is not what headroom writes (edited, damaged, or another program's) is an error
// naming the file and the entry, never the archive's or the JSON library's message alone: the same
// probe as issue 45's item 10 (last.pt, metrics.jsonl, config.json), extended to model checkpoints.
#include <gtest/gtest.h>

#include <torch/torch.h>

#include <string>
#include <utility>
#include <vector>

#include "headroom/train/families/model_checkpoint.hpp"
#include "test_support.hpp"

namespace headroom::train {
namespace {

namespace fs = std::filesystem;

// A checkpoint archive holding `entries` (name, value) and an empty "model".
fs::path write_archive(const fs::path& file,
                       const std::vector<std::pair<std::string, c10::IValue>>& entries,
                       bool with_model = true) {
  torch::serialize::OutputArchive archive;
  if (with_model) {
    torch::serialize::OutputArchive model;
    archive.write("model", model);
  }
  for (const auto& [name, value] : entries) archive.write(name, value);
  save_archive_atomically(archive, file);
  return file;
}

std::string load_error(const fs::path& file) {
  return testing::error_message([&] { load_classifier_checkpoint(file, torch::kCPU); });
}

TEST(ModelCheckpointErrors, EntriesThatAreNotWhatHeadroomWritesAreNamedWithTheFile) {
  testing::TempDir dir;
  const auto config = nlohmann::json{{"num_ids", 5}, {"in_features", 3}}.dump();

  const auto not_json = write_archive(
      dir / "not_json.pt",
      {{"kind", c10::IValue(std::string("gat"))}, {"config", c10::IValue(std::string("{oops"))}});
  EXPECT_NE(load_error(not_json).find(not_json.string() + ": its \"config\" entry is not what "
                                                          "headroom writes (not a JSON object)"),
            std::string::npos)
      << load_error(not_json);

  const auto kind_number = write_archive(
      dir / "kind_number.pt", {{"kind", c10::IValue(int64_t{3})}, {"config", c10::IValue(config)}});
  EXPECT_NE(load_error(kind_number).find(kind_number.string() + ": its \"kind\" entry"),
            std::string::npos)
      << load_error(kind_number);

  const auto wrong_field =
      write_archive(dir / "wrong_field.pt",
                    {{"kind", c10::IValue(std::string("gat"))},
                     {"config", c10::IValue(nlohmann::json{{"num_ids", "many"}}.dump())}});
  const auto built = load_error(wrong_field);
  EXPECT_NE(
      built.find(wrong_field.string() + ": its recorded configuration cannot build a gat model"),
      std::string::npos)
      << built;

  const auto decision =
      write_archive(dir / "decision.pt", {{"kind", c10::IValue(std::string("gat"))},
                                          {"config", c10::IValue(config)},
                                          {"decision", c10::IValue(std::string("[1,2]"))}});
  EXPECT_NE(load_error(decision).find(decision.string() + ": its \"decision\" entry"),
            std::string::npos)
      << load_error(decision);
}

}  // namespace
}  // namespace headroom::train
