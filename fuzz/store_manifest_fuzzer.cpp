// libFuzzer target: a real store (built once at start-up from synthetic traffic) whose manifest is
// edited field by field, as another tool could, and re-sealed with a correct checksum, so that
// every input reaches the checks behind the checksum (issue 25 item 7). The input is a program:
// each edit takes an opcode byte and operand bytes, and sets
//   - a count (node_feature_count, edge_feature_count, num_graphs, num_nodes, num_edges),
//   - an array's shape (rank and dimensions) or byte count, or its dtype,
//   - an array's file name: ../ paths, absolute paths, a system file, a link leaving the store, a
//     link to a FIFO outside it, a link inside it, a FIFO in it, another array's file, odd names,
//   - a source file's split or attack-type index, or the node feature groups,
// to values near the real ones, at the edges of their types, or to another JSON type.
// Opening the store (both verification levels) and reading everything a consumer reads may only
// throw StoreError. An open that succeeds while an array file is not a plain name directly in the
// store, or a read that blocks on a FIFO (libFuzzer's -timeout), is a finding.
#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fuzz_support.hpp"
#include "headroom/store/graph_store.hpp"
#include "headroom/store/store_arrays.hpp"
#include "headroom/store/store_error.hpp"
#include "headroom/store/store_metadata.hpp"
#include "headroom/util/file_reader.hpp"
#include "headroom/util/file_writer.hpp"

namespace fs = std::filesystem;
namespace store = headroom::store;

namespace {

// The scratch layout: pristine/store (built once), outside/ (files a hostile name could reach),
// run/store (the copy each input edits).
fs::path scratch(const char* name) { return headroom::fuzz::scratch_directory() / name; }

// The shared pristine store, plus what lies outside it: a copy of a real array (a follower would
// find it sound) and a FIFO (a follower would block on it).
const fs::path& pristine_store() {
  static const bool outside_written = [] {
    fs::create_directories(scratch("outside"));
    fs::copy_file(headroom::fuzz::pristine_store() / "node_features.f32",
                  scratch("outside") / "x.f32", fs::copy_options::overwrite_existing);
    ::mkfifo((scratch("outside") / "fifo.f32").c_str(), 0600);
    return true;
  }();
  (void)outside_written;
  return headroom::fuzz::pristine_store();
}

const nlohmann::json& pristine_manifest() {
  static const nlohmann::json json =
      nlohmann::json::parse(headroom::util::read_file(pristine_store() / store::kManifestFileName));
  return json;
}

// Reads the input front to back; past its end every read gives 0.
class Operands {
 public:
  Operands(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}
  bool empty() const { return position_ >= size_; }
  std::uint8_t byte() { return position_ < size_ ? data_[position_++] : 0; }
  std::uint64_t u64() {
    std::uint64_t value = 0;
    for (int i = 0; i < 8; ++i) value = (value << 8) | byte();
    return value;
  }

 private:
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t position_ = 0;
};

// A value for a count or a dimension: near one of the store's own counts, at a type's edge, or
// (rarely) not a number at all.
nlohmann::json number(Operands& in) {
  const auto& m = pristine_manifest();
  const std::array<std::uint64_t, 12> anchors = {0,
                                                 1,
                                                 2,
                                                 11,
                                                 19,
                                                 m.at("num_nodes").get<std::uint64_t>(),
                                                 m.at("num_edges").get<std::uint64_t>(),
                                                 m.at("num_graphs").get<std::uint64_t>(),
                                                 std::numeric_limits<std::uint32_t>::max(),
                                                 std::uint64_t{1} << 32,
                                                 std::uint64_t{1} << 62,
                                                 std::numeric_limits<std::uint64_t>::max()};
  const std::uint8_t how = in.byte();
  switch (how % 8) {
    case 0:
      return in.u64();
    case 1:
      return -static_cast<std::int64_t>(in.byte());
    case 2:
      return 1.5;
    case 3:
      return "11";
    default: {
      const std::uint64_t anchor = anchors[in.byte() % anchors.size()];
      const auto delta = static_cast<std::int8_t>(in.byte() % 5) - 2;  // -2 .. 2
      return anchor + static_cast<std::uint64_t>(static_cast<std::int64_t>(delta));
    }
  }
}

// A name an array record's `file` may be given. Links and the FIFO are created in the store copy
// by run_one (names starting "link-" and "fifo").
std::string file_name(Operands& in, const nlohmann::json& arrays) {
  const std::array<std::string, 16> names = {"../outside/x.f32",
                                             (scratch("outside") / "x.f32").string(),
                                             "/etc/passwd",
                                             "../outside/fifo.f32",
                                             (scratch("outside") / "fifo.f32").string(),
                                             "link-out",
                                             "link-fifo",
                                             "link-in",
                                             "fifo",
                                             "",
                                             ".",
                                             "..",
                                             "sub/../node_features.f32",
                                             std::string("node_features.f32\0x", 19),
                                             std::string(300, 'a'),
                                             store::kManifestFileName};
  const std::uint8_t pick = in.byte();
  if (pick % 2 == 0) return names[(pick / 2) % names.size()];
  // Another array's file.
  auto it = arrays.begin();
  std::advance(it, in.byte() % arrays.size());
  return it.value().at("file").get<std::string>();
}

void edit(nlohmann::json& m, Operands& in) {
  constexpr std::array<const char*, 5> kCounts = {"node_feature_count", "edge_feature_count",
                                                  "num_graphs", "num_nodes", "num_edges"};
  auto& arrays = m.at("arrays");
  auto array_it = arrays.begin();
  std::advance(array_it, in.byte() % arrays.size());
  auto& record = array_it.value();
  switch (in.byte() % 8) {
    case 0:
      m[kCounts[in.byte() % kCounts.size()]] = number(in);
      break;
    case 1: {  // a shape of rank 0 to 3
      nlohmann::json shape = nlohmann::json::array();
      const int rank = in.byte() % 4;
      for (int d = 0; d < rank; ++d) shape.push_back(number(in));
      record["shape"] = shape;
      break;
    }
    case 2:
      record["shape"][in.byte() % 2] = number(in);
      break;
    case 3:
      record["bytes"] = number(in);
      break;
    case 4:
      record["file"] = file_name(in, arrays);
      break;
    case 5: {
      constexpr std::array<const char*, 4> kDtypes = {"float32", "uint8", "int64", "float64"};
      record["dtype"] = kDtypes[in.byte() % kDtypes.size()];
      break;
    }
    case 6: {
      auto& files = m.at("files");
      if (files.empty()) break;
      files[in.byte() % files.size()][in.byte() % 2 == 0 ? "split" : "attack_type"] = number(in);
      break;
    }
    default: {
      constexpr std::array<const char*, 4> kGroups = {"kd-gat", "timing", "payload", "bogus"};
      nlohmann::json groups = nlohmann::json::array();
      for (int g = in.byte() % 4; g > 0; --g) groups.push_back(kGroups[in.byte() % kGroups.size()]);
      m["node_feature_groups"] = groups;
      break;
    }
  }
}

// Seals the manifest as headroom does: XXH3-64 of the compact dump without the checksum field.
void write_sealed(const fs::path& dir, nlohmann::json manifest) {
  manifest.erase("manifest_xxh3");
  const std::string canonical = manifest.dump();
  manifest["manifest_xxh3"] = headroom::util::checksum_hex(
      headroom::util::checksum_bytes(std::as_bytes(std::span(canonical))));
  std::ofstream out(dir / store::kManifestFileName, std::ios::binary | std::ios::trunc);
  out << manifest.dump(1) << "\n";
  if (!out) std::abort();
}

// An opened store's array files are plain names of files directly inside it: anything else got
// past the checks.
void require_contained(const store::GraphStore& graphs, const fs::path& dir) {
  const auto inside = fs::canonical(dir);
  for (const auto& spec : store::arrays::kArraySpecs) {
    const auto record = graphs.metadata().arrays.find(std::string(spec.name));
    if (record == graphs.metadata().arrays.end() && spec.optional)
      continue;  // not a geometric store
    if (record == graphs.metadata().arrays.end()) std::abort();
    const std::string& file = record->second.file;
    if (file.find('/') != std::string::npos || file == "." || file == "..") std::abort();
    if (fs::canonical(dir / file).parent_path() != inside) std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  (void)pristine_manifest();
  // Seeds: a few one-edit programs, one per edit kind (scripts/sanitize.sh writes them into the
  // corpus through $HEADROOM_FUZZ_WRITE_SEEDS).
  if (const char* seeds = std::getenv("HEADROOM_FUZZ_WRITE_SEEDS")) {
    fs::create_directories(seeds);
    for (std::uint8_t kind = 0; kind < 8; ++kind) {
      const std::array<std::uint8_t, 8> program = {0, kind, 4, 4, 3, 1, 2, 0};
      std::ofstream out(fs::path(seeds) / ("seed-edit-" + std::to_string(kind)), std::ios::binary);
      out.write(reinterpret_cast<const char*>(program.data()), program.size());
    }
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Operands in(data, size);
  nlohmann::json manifest = pristine_manifest();
  for (int edits = 0; edits < 8 && !in.empty(); ++edits) edit(manifest, in);

  const fs::path dir = scratch("run") / "store";
  fs::remove_all(dir.parent_path());
  fs::create_directories(dir.parent_path());
  fs::copy(pristine_store(), dir);
  fs::create_symlink(scratch("outside") / "x.f32", dir / "link-out");
  fs::create_symlink(scratch("outside") / "fifo.f32", dir / "link-fifo");
  fs::create_symlink("node_features.f32", dir / "link-in");
  ::mkfifo((dir / "fifo").c_str(), 0600);
  write_sealed(dir, manifest);

  for (const auto verification :
       {store::StoreVerification::kMetadata, store::StoreVerification::kFull}) {
    try {
      const auto graphs = store::GraphStore::open(dir, verification);
      require_contained(graphs, dir);
      headroom::fuzz::read_every_graph(graphs);
    } catch (const store::StoreError&) {
    }
  }
  return 0;
}
