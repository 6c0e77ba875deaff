// Creates a graph store atomically: everything is written into a temporary sibling directory and
// renamed into place only when complete, so a killed run never leaves something that opens.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <vector>

#include "headroom/graph/can_id_vocabulary.hpp"
#include "headroom/store/graph_segment_writer.hpp"
#include "headroom/store/store_metadata.hpp"
#include "headroom/util/exclusive_lock.hpp"
#include "headroom/util/staged_directory.hpp"

namespace headroom::store {

// Thread-safety: open_segment may be called concurrently for distinct segment numbers; commit is
// called once, by one thread, after all segments are finished.
class StoreBuilder {
 public:
  // Fails early (std::runtime_error) when `store_path` exists and `overwrite` is false, and even
  // with `overwrite` when it is anything but a graph store or an empty directory (a file, a
  // symlink, a directory holding anything but a valid manifest and array files:
  // store_ownership.hpp): --force never replaces what headroom did not write. One builder per
  // store at a time, across processes: it holds `<store>.headroom.lock` beside the store for its
  // lifetime, and while another process holds it throws naming that process (kFail) or waits for
  // it (kWait). Removes the staging directories killed runs left for the same store
  // (util/staged_directory.hpp).
  StoreBuilder(std::filesystem::path store_path, bool overwrite,
               util::WhenLocked when_locked = util::WhenLocked::kFail);
  ~StoreBuilder();  // removes the staging directory unless committed
  StoreBuilder(const StoreBuilder&) = delete;
  StoreBuilder& operator=(const StoreBuilder&) = delete;

  std::unique_ptr<GraphSegmentWriter> open_segment(std::size_t segment, SegmentKeys keys) const;

  // Deletes the files of a segment this builder opened that will not be committed (a duplicate
  // file's). Segments elsewhere (a store part's) are left alone: a builder deletes only its own.
  void discard_segment(const SegmentSummary& segment) const;

  // Concatenates the segments (in the order given; segment i belongs to metadata.files[i]) into
  // the store arrays, mapping raw-ID keys through `vocabulary`; fills the size index, the
  // train/validation/test index lists (validation = a seeded random fraction of the training
  // graphs), array checksums and graph counts in `metadata`; keeps the records of optional arrays
  // (store_arrays.hpp) the caller wrote into temporary_directory() itself and listed in
  // metadata.arrays (a geometric store's, GraphDatasetWriter); writes the manifest last; then
  // renames the directory into place. Segments opened by this builder are deleted as they are
  // consumed; segments elsewhere (a store part's) are only read.
  void commit(StoreMetadata metadata, const std::vector<SegmentSummary>& segments,
              const graph::CanIdVocabulary& vocabulary);

  // Where the store is built until commit renames it into place.
  const std::filesystem::path& temporary_directory() const { return staged_->staging(); }

 private:
  std::filesystem::path store_path_;
  // Declared before the staging directory: members are destroyed in reverse order, so the lock is
  // released only after an uncommitted staging directory is gone.
  std::optional<util::ExclusiveLock> lock_;
  std::unique_ptr<util::StagedDirectory> staged_;
  bool overwrite_;
};

// Splits training graph ids into (train, validation): a seeded shuffle, the first
// round(fraction * n) go to validation. Both results are sorted ascending. Deterministic across
// platforms for a seed.
struct TrainValidationSplit {
  std::vector<std::uint32_t> train;
  std::vector<std::uint32_t> validation;
};
TrainValidationSplit split_train_validation(const std::vector<std::uint32_t>& training_graphs,
                                            double validation_fraction, std::uint64_t seed);

// The same by whole files: `file_of[k]` is the file of training_graphs[k] and `label_of[k]` its
// label (1: attack). Files are stratified into those holding an attack graph and the all-normal
// ones, so that validation can measure F1 and calibrate a threshold where attacks and normal
// traffic come in separate recordings. Within each stratum files are taken in a seeded random
// order into validation while that brings its graph count closer to round(fraction * the
// stratum's graphs); a stratum of two or more files gives validation at least its smallest file
// when that rule took none (fraction > 0), and always keeps one file in training. Both results
// sorted ascending.
TrainValidationSplit split_train_validation_by_file(
    const std::vector<std::uint32_t>& training_graphs, const std::vector<std::uint32_t>& file_of,
    const std::vector<std::uint8_t>& label_of, double validation_fraction, std::uint64_t seed);

}  // namespace headroom::store
