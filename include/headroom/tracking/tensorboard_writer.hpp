// TensorBoard event files: one directory per stage under --tensorboard DIR, each holding an
// events.out.tfevents.* file of the stage's scalars (metric_scalars.hpp) that the tensorboard
// package reads. Records are TFRecord-framed serialized tensorboard.Event protobufs (the schema
// compiled at build time from the tensorboard package's .proto files); the framing's CRC32C
// comes from Boost.CRC.
//
// The file is appended and flushed record by record, like metrics.jsonl: a crash loses at most
// the record being written, and TensorBoard skips a torn last record.
// Thread-safety: none; the training thread owns writers and observers.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "headroom/train/stage_observer.hpp"

namespace headroom::tracking {

// One events file. Throws std::runtime_error naming the file when it cannot be created or
// written.
class EventFileWriter {
 public:
  // Creates `directory` (and parents) and a new events.out.tfevents.<seconds>.<host> file in it,
  // starting with the file-version event TensorBoard expects first.
  explicit EventFileWriter(const std::filesystem::path& directory);
  const std::filesystem::path& path() const { return path_; }
  // One scalar summary event; `wall_time` in seconds since the Unix epoch.
  void add_scalar(const std::string& tag, double value, std::int64_t step, double wall_time);

 private:
  void write_record(std::string_view data);
  std::filesystem::path path_;
  std::ofstream out_;
};

// The TFRecord checksum of `data`: CRC32C, rotated and offset as TFRecord masks it.
std::uint32_t masked_crc32c(std::string_view data);

// A StageObserver that writes each stage's scalars to DIR/<stage name>/.
class TensorBoardObserver final : public train::StageObserver {
 public:
  explicit TensorBoardObserver(std::filesystem::path directory);
  ~TensorBoardObserver() override;
  std::vector<train::MetricsSink*> stage_started(const std::string& name,
                                                 const train::TrainingConfig& config,
                                                 const std::filesystem::path& run_dir) override;
  void stage_ended(std::string_view error) override;

 private:
  class StageSink;
  std::filesystem::path directory_;
  std::vector<std::unique_ptr<StageSink>> sinks_;  // alive until destruction
};

}  // namespace headroom::tracking
