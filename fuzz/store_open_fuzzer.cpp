// libFuzzer target: opening a graph store and reading every graph of it, where one file of a
// small real store (built once at start-up from synthetic traffic) is replaced by the input.
//
// The first input byte picks how:
//   0: the input replaces a file byte for byte (the first checksum catches most of these);
//   1: the input replaces an array file and the manifest is re-sealed with that file's checksum,
//      as a store written by another tool would be: the contents must be checked, not the hash;
//   2: the input is a manifest (JSON) that is parsed, re-sealed and written: any values, a valid
//      checksum.
// The second byte picks the file. StoreError (the documented error for a bad store) is expected.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fuzz_support.hpp"
#include "headroom/store/graph_store.hpp"
#include "headroom/store/store_error.hpp"
#include "headroom/store/store_metadata.hpp"
#include "headroom/util/file_reader.hpp"
#include "headroom/util/file_writer.hpp"

namespace fs = std::filesystem;
namespace store = headroom::store;

namespace {

using headroom::fuzz::pristine_store;

std::vector<fs::path> store_files() {
  static const std::vector<fs::path> files = [] {
    std::vector<fs::path> names;
    for (const auto& entry : fs::directory_iterator(pristine_store()))
      names.push_back(entry.path().filename());
    std::sort(names.begin(), names.end());
    return names;
  }();
  return files;
}

void write(const fs::path& file, std::string_view bytes) {
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) std::abort();
}

// Re-seals the manifest of `dir` after `file` was replaced: its array record gets the new
// checksum. False when `file` is not an array.
bool reseal_array(const fs::path& dir, const fs::path& file) {
  const auto pristine = pristine_store() / store::kManifestFileName;
  store::StoreMetadata metadata =
      store::parse_manifest(headroom::util::read_file(pristine), pristine.string());
  for (auto& [name, record] : metadata.arrays) {
    if (record.file != file.string()) continue;
    record.xxh3 = headroom::util::checksum_hex(headroom::util::checksum_file(dir / file));
    write(dir / store::kManifestFileName, store::render_manifest(metadata));
    return true;
  }
  return false;
}

// Parses `text` as a manifest's JSON and writes it back sealed. False when it is not one.
bool write_sealed_manifest(const fs::path& dir, std::string_view text) {
  store::StoreMetadata metadata;
  try {
    nlohmann::json::parse(text).get_to(metadata);
  } catch (const std::exception&) {  // not a manifest: nothing of the store's to test
    return false;
  }
  write(dir / store::kManifestFileName, store::render_manifest(metadata));
  return true;
}

// Seeds: each file of the pristine store as it is, under modes 0 and 1, and its manifest under
// mode 2; written into $HEADROOM_FUZZ_WRITE_SEEDS when that is set (scripts/sanitize.sh).
void write_seeds(const fs::path& dir) {
  fs::create_directories(dir);
  const auto& files = store_files();
  for (std::size_t i = 0; i < files.size(); ++i) {
    const std::string content = headroom::util::read_file(pristine_store() / files[i]);
    for (char mode : {0, 1, 2}) {
      if (mode == 2 && files[i] != store::kManifestFileName) continue;
      const std::string prefix{mode, static_cast<char>(i)};
      write(dir / ("seed-" + std::to_string(mode) + "-" + files[i].string()), prefix + content);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  (void)store_files();
  if (const char* seeds = std::getenv("HEADROOM_FUZZ_WRITE_SEEDS")) write_seeds(seeds);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const int mode = data[0] % 3;
  const auto& files = store_files();
  const fs::path file =
      mode == 2 ? fs::path(store::kManifestFileName) : files[data[1] % files.size()];
  const std::string_view bytes(reinterpret_cast<const char*>(data + 2), size - 2);

  const fs::path dir = headroom::fuzz::scratch_directory() / "store";
  fs::remove_all(dir);
  fs::copy(pristine_store(), dir);
  if (mode == 2) {
    if (!write_sealed_manifest(dir, bytes)) return 0;
  } else {
    write(dir / file, bytes);
    if (mode == 1 && !reseal_array(dir, file)) return 0;
  }

  for (const auto verification :
       {store::StoreVerification::kMetadata, store::StoreVerification::kFull}) {
    try {
      headroom::fuzz::read_every_graph(store::GraphStore::open(dir, verification));
    } catch (const store::StoreError&) {
    }
  }
  return 0;
}
