// libFuzzer target: `headroom import-graphs` on a table directory of which one table is arbitrary
// bytes. The first input byte picks the table (graphs, nodes, edges) and the identity classes;
// the rest replaces that table in a copy of valid tables (HEADROOM_FUZZ_GRAPH_TABLES, written by
// tests/graph_tables/graph_table_fixtures.py; scripts/sanitize.sh sets it and seeds the corpus
// with the valid tables). InputError naming a file of the directory is the documented outcome for
// bad input; any other exception, crash or sanitizer report is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <span>

#include "fuzz_support.hpp"
#include "headroom/graph_tables/import_graph_tables.hpp"
#include "headroom/util/input_error.hpp"

namespace fs = std::filesystem;

namespace {

const fs::path& valid_tables() {
  static const fs::path path = [] {
    const char* dir = std::getenv("HEADROOM_FUZZ_GRAPH_TABLES");
    if (dir == nullptr || !fs::exists(fs::path(dir) / headroom::graph_tables::kGraphsFile)) {
      std::fprintf(stderr, "set HEADROOM_FUZZ_GRAPH_TABLES to a directory of valid graph tables\n");
      std::abort();
    }
    return fs::path(dir);
  }();
  return path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  namespace gt = headroom::graph_tables;
  const char* files[] = {gt::kGraphsFile, gt::kNodesFile, gt::kEdgesFile};
  const std::size_t replaced = data[0] % 3;
  const fs::path tables = headroom::fuzz::scratch_directory() / "tables";
  fs::create_directories(tables);
  for (std::size_t i = 0; i < 3; ++i) {
    if (i == replaced) continue;
    fs::copy_file(valid_tables() / files[i], tables / files[i],
                  fs::copy_options::overwrite_existing);
  }
  const fs::path written = headroom::fuzz::write_scratch_file(
      std::string("tables/") + files[replaced], std::span(data + 1, size - 1));
  const fs::path store = headroom::fuzz::scratch_directory() / "store";
  gt::ImportOptions options;
  options.identity_classes = data[0] / 3 % 4;
  options.overwrite = true;
  options.batch_rows = 5;
  try {
    gt::import_graph_tables(tables, store, options);
  } catch (const headroom::util::InputError& e) {
    if (e.file().parent_path() != tables) std::abort();
  }
  std::error_code ignored;
  fs::remove_all(store, ignored);
  fs::remove(written, ignored);
  return 0;
}
