// What a graph store records besides its arrays: how it was built, its vocabulary, its source
// files and split directories, and the table of its array files with their checksums.
// docs/store-format.md documents the on-disk form (manifest.json).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "headroom/can/log_format.hpp"
#include "headroom/graph/node_features.hpp"

namespace headroom::store {

inline constexpr const char* kStoreFormatName = "headroom-graph-store";
inline constexpr int kStoreFormatVersion = 1;
inline constexpr const char* kManifestFileName = "manifest.json";
inline constexpr const char* kGivenValidation = "given";            // validation_by
inline constexpr const char* kGivenValidationSplit = "validation";  // its split's name

struct SplitRecord {
  std::string name;  // directory name, e.g. "test_01_known_vehicle_known_attack"
  std::string role;  // "train" or "test"
};

struct SourceFileRecord {
  std::string path;               // relative to the dataset root, '/'-separated
  std::uint32_t split = 0;        // index into StoreMetadata::splits
  std::uint32_t attack_type = 0;  // index into StoreMetadata::attack_types
  std::uint64_t rows = 0;         // frames read
  std::uint64_t attack_rows = 0;
  std::uint64_t skipped_rows = 0;  // bad rows dropped under --on-bad-row skip
  std::uint64_t first_graph = 0;
  std::uint64_t graphs = 0;
  // Windows whose frames are mostly CAN IDs outside the training vocabulary (test files).
  std::uint64_t mostly_unknown_graphs = 0;
};

struct ArrayRecord {
  std::string file;   // inside the store directory
  std::string dtype;  // numpy name: "float32", "int32", "int64", "uint32", "uint16", "uint8"
  std::vector<std::uint64_t> shape;
  std::uint64_t bytes = 0;
  std::string xxh3;  // XXH3-64 of the file, 16 hex digits
};

struct StoreMetadata {
  std::string created_by;
  std::string dataset_root;
  std::uint32_t window = 0;
  std::uint32_t stride = 0;
  std::uint32_t node_feature_count = 0;
  std::uint32_t edge_feature_count = 0;
  std::uint64_t num_graphs = 0;
  std::uint64_t num_nodes = 0;
  std::uint64_t num_edges = 0;
  std::vector<std::uint32_t> vocabulary;  // sorted CAN IDs; index K = vocabulary.size() is OOV
  std::vector<SplitRecord> splits;
  std::vector<std::string> attack_types;
  std::vector<SourceFileRecord> files;
  std::vector<std::string> excluded_files;
  double validation_fraction = 0.2;
  std::uint64_t validation_seed = 0;
  // "graphs": a random fraction of the training graphs; "files": whole training files (no file's
  // windows on both sides; closer to testing on traffic not seen in training); "given": the
  // graphs of the split named kGivenValidationSplit, as the dataset fixed them (QM9's).
  std::string validation_by = "graphs";
  // The frames the vocabulary was built from: "all" training frames or "normal" ones only.
  std::string vocabulary_from = "all";
  // Feature 0's meaning and the optional node feature groups; node_feature_count is their count().
  graph::NodeFeatureOptions node_features;
  // How the source files were read (--format, and for csv its column mapping): whatever reads
  // them again (the baseline) reads them so. kAuto: each file's format is detected again.
  can::LogFormat source_format = can::LogFormat::kAuto;
  can::CsvColumnMapping source_mapping;       // when source_format is kMappedCsv
  std::map<std::string, ArrayRecord> arrays;  // by array name
  // A geometric store (docs/store-format.md, "Geometric stores"): 2 or 3 coordinates per node in
  // node_positions and each graph's path counts in graph_num_paths; 0 for every other store.
  std::uint32_t position_dimensions = 0;
  bool has_parents = false;  // node_parent holds each node's parent (trees)
  // A float target per graph (graph_target), for regression: its name as the source calls it
  // (QM9: "gap_hartree") and unit; empty: the store has none.
  std::string target_name;
  std::string target_unit;
};

// Distinct values of node feature 0 (the models' embedding rows): the vocabulary size + 1 for
// CAN-ID identity, the identity's class count otherwise.
std::uint32_t identity_classes(const StoreMetadata& metadata);

void to_json(nlohmann::json& json, const StoreMetadata& metadata);
void from_json(const nlohmann::json& json, StoreMetadata& metadata);

// What a model trained on the store depends on: the settings it was built with (window, stride,
// node identity and feature groups, vocabulary source, validation split) and `content`, a
// checksum of the whole manifest (vocabulary, source files and their graph counts, every array's
// checksum) without where it was built from and by which headroom version. A store rebuilt from
// the same input with the same settings has the same identity; a run directory records it, so that
// a finished stage is never reused on a different store (train/training_loop.hpp).
nlohmann::json content_identity(const StoreMetadata& metadata);

// The manifest text, including its own checksum (over the canonical dump without it).
std::string render_manifest(const StoreMetadata& metadata);
// Parses and checks format, version and the manifest checksum. Throws StoreError.
StoreMetadata parse_manifest(const std::string& text, const std::string& where);

}  // namespace headroom::store
