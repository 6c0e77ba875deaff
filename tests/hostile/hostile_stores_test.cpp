// Stores, store parts, CAN logs and peak-fit caches as another tool (or a hostile hand) could leave
// them, fed to the real binaries (issue 25, items 7 to 10). A store here is re-sealed: its manifest
// is edited and its checksum recomputed the way headroom computes it, so that only the checks
// behind the checksum can refuse it. Every refusal is one line naming the store (or part, or file),
// what is wrong and why; none is a crash, a hang or a read outside the store.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "headroom/memory/peak_model.hpp"
#include "headroom/store/graph_store.hpp"
#include "headroom/util/file_writer.hpp"
#include "test_support.hpp"

namespace headroom {
namespace {

namespace fs = std::filesystem;
using testing::run_command;

std::string read_text(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Edits `store`'s manifest.json with `edit` and seals it again as headroom does: the checksum is
// the XXH3-64 (16 hex digits) of the compact dump, keys sorted, without the checksum field.
void reseal(const fs::path& store, const std::function<void(nlohmann::json&)>& edit) {
  auto json = nlohmann::json::parse(read_text(store / "manifest.json"));
  json.erase("manifest_xxh3");
  edit(json);
  const std::string canonical = json.dump();
  json["manifest_xxh3"] =
      util::checksum_hex(util::checksum_bytes(std::as_bytes(std::span(canonical))));
  testing::write_text_file(store / "manifest.json", json.dump(1) + "\n");
}

// `command` under a time limit: a read of a FIFO that headroom should never open would hang it
// (then the status is 124, not headroom's 1).
int run_limited(const std::string& command, std::string* output) {
  return run_command("timeout 60 " + command, output);
}

// The whole output is one line, `headroom: error: ...`, holding every one of `parts`.
void expect_one_line_error(const std::string& output, const std::vector<std::string>& parts) {
  EXPECT_EQ(output.rfind("headroom: error: ", 0), 0u) << output;
  EXPECT_EQ(output.find('\n'), output.size() - 1) << output;
  for (const auto& part : parts)
    EXPECT_NE(output.find(part), std::string::npos) << part << "\n" << output;
}

class HostileStore : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    pristine_ = std::make_unique<testing::TempDir>();
    testing::build_synthetic_store(pristine_->path(), 20'000, 5);
  }
  static void TearDownTestSuite() { pristine_.reset(); }

  void SetUp() override {
    fs::copy(pristine_->path() / "store", store(), fs::copy_options::recursive);
    fs::create_directory(outside());
    manifest_ = nlohmann::json::parse(read_text(store() / "manifest.json"));
  }

  fs::path store() const { return dir_ / "store"; }
  fs::path outside() const { return dir_ / "outside"; }
  const nlohmann::json& array_record(const std::string& name) const {
    return manifest_.at("arrays").at(name);
  }

  // `headroom inspect --verify STORE`: exit status and output.
  int inspect(std::string* output) const {
    return run_limited(fmt::format("'{}' inspect --verify '{}'", HEADROOM_BINARY, store().string()),
                       output);
  }
  // A one-epoch training stage on the store (it opens the store first thing).
  int train(std::string* output) const {
    return run_limited(fmt::format("'{}' autoencoder --store '{}' --runs-dir '{}' --max-epochs 1 "
                                   "--threads 1 --progress false",
                                   HEADROOM_BINARY, store().string(), (dir_ / "runs").string()),
                       output);
  }

  // A FIFO outside the store: opening it for reading would block until the test's time limit.
  fs::path outside_fifo(const std::string& name) const {
    const auto fifo = outside() / name;
    EXPECT_EQ(::mkfifo(fifo.c_str(), 0600), 0) << std::strerror(errno);
    return fifo;
  }

  testing::TempDir dir_;
  nlohmann::json manifest_;
  static inline std::unique_ptr<testing::TempDir> pristine_;
};

// The crash: edge_feature_count 1,000,000 made --verify read 100,000 rows past the array.
TEST_F(HostileStore, FeatureCountsLargerThanTheArraysAreRefusedBeforeAnyRead) {
  std::string output;
  reseal(store(), [](nlohmann::json& m) { m["edge_feature_count"] = 1'000'000; });
  EXPECT_EQ(inspect(&output), 1) << output;
  expect_one_line_error(output, {store().string(), "array 'edge_features'", "1000000"});

  testing::write_text_file(store() / "manifest.json", manifest_.dump(1) + "\n");
  reseal(store(), [](nlohmann::json& m) { m["node_feature_count"] = 1'000'000; });
  EXPECT_EQ(inspect(&output), 1) << output;
  expect_one_line_error(output, {store().string(), "array 'node_features'", "1000000"});
}

TEST_F(HostileStore, ShapesThatDisagreeWithTheCountsAreRefused) {
  const auto nodes = manifest_.at("num_nodes").get<std::uint64_t>();
  const auto edges = manifest_.at("num_edges").get<std::uint64_t>();
  struct Case {
    std::string what;
    std::function<void(nlohmann::json&)> edit;
    std::vector<std::string> expected;
  };
  const std::vector<Case> cases = {
      {"a wider node_features, bytes to match",
       [&](nlohmann::json& m) {
         m["arrays"]["node_features"]["shape"] = {nodes, 12};
         m["arrays"]["node_features"]["bytes"] = nodes * 12 * 4;
       },
       {"array 'node_features'", fmt::format("shape [{}, 12]", nodes),
        fmt::format("[{}, 11]", nodes)}},
      {"edge_index of rank 1",
       [&](nlohmann::json& m) { m["arrays"]["edge_index"]["shape"] = {edges * 2}; },
       {"array 'edge_index'", fmt::format("shape [{}]", edges * 2)}},
      {"one more node than the arrays have",
       [&](nlohmann::json& m) { m["num_nodes"] = nodes + 1; },
       {"array 'node_features'", fmt::format("[{}, 11]", nodes + 1)}},
      {"a shape whose bytes overflow 64 bits",
       [&](nlohmann::json& m) {
         m["num_nodes"] = std::uint64_t{1} << 62;
         m["arrays"]["node_features"]["shape"] = {std::uint64_t{1} << 62, 11};
         m["arrays"]["node_can_ids"]["shape"] = {std::uint64_t{1} << 62};
       },
       {"array 'node_features'", "larger than any file"}},
      {"a shape without dimensions",
       [&](nlohmann::json& m) { m["arrays"]["graph_label"]["shape"] = nlohmann::json::array(); },
       {"array 'graph_label'", "shape []"}},
  };
  const auto sealed = read_text(store() / "manifest.json");
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    testing::write_text_file(store() / "manifest.json", sealed);
    reseal(store(), c.edit);
    std::string output;
    EXPECT_EQ(inspect(&output), 1) << output;
    auto expected = c.expected;
    expected.push_back(store().string());
    expect_one_line_error(output, expected);
  }
}

// The escape: `file` of ../outside/x.f32 was followed, verified and trained on. Here the
// file outside holds the very bytes the store's own has (so a follower would find nothing wrong),
// and a second variant points at a FIFO (so a follower would hang).
TEST_F(HostileStore, AnArrayFileOutsideTheStoreIsNeverOpened) {
  fs::copy_file(store() / "node_features.f32", outside() / "x.f32");
  outside_fifo("fifo.f32");
  for (const std::string file : {"../outside/x.f32", "../outside/fifo.f32", "sub/../x.f32"}) {
    SCOPED_TRACE(file);
    testing::write_text_file(store() / "manifest.json", manifest_.dump(1) + "\n");
    reseal(store(), [&](nlohmann::json& m) { m["arrays"]["node_features"]["file"] = file; });
    std::string output;
    EXPECT_EQ(inspect(&output), 1) << output;
    expect_one_line_error(output,
                          {store().string(), "array 'node_features'", file, "not a plain name"});
    EXPECT_EQ(train(&output), 1) << output;
    expect_one_line_error(output, {store().string(), "array 'node_features'", "not a plain name"});
  }
}

TEST_F(HostileStore, AnAbsoluteArrayFileIsRefusedWithoutLookingAtIt) {
  fs::copy_file(store() / "node_features.f32", outside() / "x.f32");
  const auto fifo = outside_fifo("fifo.f32");
  // A system file: its size must not be printed (the issue: pointing at one printed it).
  const std::string system_file = "/etc/passwd";
  const auto system_size = fs::file_size(system_file);
  for (const std::string& file : {(outside() / "x.f32").string(), fifo.string(), system_file}) {
    SCOPED_TRACE(file);
    testing::write_text_file(store() / "manifest.json", manifest_.dump(1) + "\n");
    reseal(store(), [&](nlohmann::json& m) { m["arrays"]["node_features"]["file"] = file; });
    std::string output;
    EXPECT_EQ(inspect(&output), 1) << output;
    expect_one_line_error(output,
                          {store().string(), "array 'node_features'", "is an absolute path"});
    EXPECT_EQ(output.find(fmt::format("has {} bytes", system_size)), std::string::npos) << output;
  }
}

TEST_F(HostileStore, ASymbolicLinkLeavingTheStoreIsRefused) {
  // The link keeps the file's name, so the manifest needs no change at all; the target holds the
  // right bytes (checksums pass), then is a FIFO (a follower would hang).
  fs::rename(store() / "node_features.f32", outside() / "x.f32");
  fs::create_symlink(outside() / "x.f32", store() / "node_features.f32");
  std::string output;
  EXPECT_EQ(inspect(&output), 1) << output;
  expect_one_line_error(output, {store().string(), "array 'node_features'", "node_features.f32",
                                 "symbolic link leaving the store"});
  EXPECT_EQ(train(&output), 1) << output;
  expect_one_line_error(output, {"symbolic link leaving the store"});

  fs::remove(store() / "node_features.f32");
  fs::create_symlink("../outside/" + outside_fifo("fifo.f32").filename().string(),
                     store() / "node_features.f32");
  EXPECT_EQ(inspect(&output), 1) << output;
  expect_one_line_error(output, {"array 'node_features'", "symbolic link leaving the store"});
}

// The rule is "inside the store", not "no links": a link to a file beside it still opens.
TEST_F(HostileStore, ASymbolicLinkToAFileInsideTheStoreOpens) {
  fs::rename(store() / "node_features.f32", store() / "node_features.data");
  fs::create_symlink("node_features.data", store() / "node_features.f32");
  std::string output;
  EXPECT_EQ(inspect(&output), 0) << output;
  EXPECT_NE(output.find("all arrays verified"), std::string::npos) << output;
}

// A FIFO in the store itself, under an array's name: refused, not waited on.
TEST_F(HostileStore, AnArrayFileThatIsNotARegularFileIsRefused) {
  fs::remove(store() / "graph_label.u8");
  ASSERT_EQ(::mkfifo((store() / "graph_label.u8").c_str(), 0600), 0);
  std::string output;
  EXPECT_EQ(inspect(&output), 1) << output;
  expect_one_line_error(output, {store().string(), "array 'graph_label'", "not a regular file"});
}

// Item 8: a part's segment changed after the shard wrote it is refused by --assemble, naming the
// part and the file, before anything is written; the untouched run still assembles.
class HostileParts : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string output;
    ASSERT_EQ(run_command(fmt::format("'{}' generate --out '{}' --frames 8000 --seed 11",
                                      HEADROOM_BINARY, (dir_ / "data").string()),
                          &output),
              0)
        << output;
    for (int i = 0; i < 2; ++i)
      ASSERT_EQ(preprocess(fmt::format("--shard {}/2", i), &output), 0) << output;
  }

  int preprocess(const std::string& extra, std::string* output) {
    return run_command(
        fmt::format("'{}' preprocess '{}' --out '{}' --threads 1 --no-progress {}", HEADROOM_BINARY,
                    (dir_ / "data").string(), (dir_ / "store").string(), extra),
        output);
  }
  fs::path part(int index) const { return dir_ / "store.parts" / fmt::format("{}-of-2", index); }

  // The first part file with `suffix` that holds at least 8 bytes.
  fs::path part_file(int index, const std::string& suffix) const {
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(part(index)))
      if (entry.path().extension() == suffix && entry.file_size() >= 8)
        files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    EXPECT_FALSE(files.empty()) << suffix;
    return files.empty() ? fs::path() : files.front();
  }

  // Adds 1 to the float at byte `offset` of `file`: the file keeps its size.
  static void change_float(const fs::path& file, std::size_t offset) {
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    ASSERT_TRUE(f) << file;
    float value = 0;
    f.seekg(static_cast<std::streamoff>(offset));
    f.read(reinterpret_cast<char*>(&value), sizeof value);
    value += 1.0F;
    f.seekp(static_cast<std::streamoff>(offset));
    f.write(reinterpret_cast<const char*>(&value), sizeof value);
  }

  // Inverts the bits of the byte at `offset` of `file`.
  static void flip_byte(const fs::path& file, std::size_t offset) {
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    ASSERT_TRUE(f) << file;
    char byte = 0;
    f.seekg(static_cast<std::streamoff>(offset));
    f.get(byte);
    f.seekp(static_cast<std::streamoff>(offset));
    f.put(static_cast<char>(~byte));
  }

  testing::TempDir dir_;
};

TEST_F(HostileParts, AChangedFloatInAPartSegmentIsRefusedNamingThePart) {
  const auto segment = part_file(1, ".node_features");
  const auto original = read_text(segment);
  change_float(segment, 4);
  std::string output;
  EXPECT_EQ(preprocess("--assemble", &output), 1) << output;
  expect_one_line_error(output, {"part 1-of-2", segment.filename().string(),
                                 "does not match its checksum", "--shard 1/2"});
  EXPECT_FALSE(fs::exists(dir_ / "store"));
  EXPECT_TRUE(fs::exists(part(1) / "part.json")) << "a refused assembly keeps the parts";

  // The same for a test file's frames (the assembly rebuilds windows from them).
  testing::write_text_file(segment, original);
  const auto frames = part_file(0, ".frames");
  flip_byte(frames, 0);  // a bit of the first frame's timestamp
  EXPECT_EQ(preprocess("--assemble", &output), 1) << output;
  expect_one_line_error(output,
                        {"part 0-of-2", frames.filename().string(), "does not match its checksum"});
}

TEST_F(HostileParts, AnUntouchedRunStillAssemblesAndVerifies) {
  std::string output;
  ASSERT_EQ(preprocess("--assemble", &output), 0) << output;
  EXPECT_EQ(run_command(fmt::format("'{}' inspect --verify '{}'", HEADROOM_BINARY,
                                    (dir_ / "store").string()),
                        &output),
            0)
      << output;
}

// Item 9: CAN logs with extreme timestamps. The generated dataset's CSV files are rewritten with
// the timestamps `time_of(row)`; then preprocessing either refuses the file naming file, line and
// column, or builds a store whose features are all finite and whose timing features (columns
// 11 to 14 of the command line's default feature set) lie in [0, 1].
class HostileTimestamps : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string output;
    ASSERT_EQ(run_command(fmt::format("'{}' generate --out '{}' --frames 6000 --seed 4",
                                      HEADROOM_BINARY, data().string()),
                          &output),
              0)
        << output;
    for (const auto& entry : fs::recursive_directory_iterator(data()))
      if (entry.path().extension() == ".csv") csv_files_.push_back(entry.path());
    std::sort(csv_files_.begin(), csv_files_.end());
    ASSERT_FALSE(csv_files_.empty());
  }

  fs::path data() const { return dir_ / "data"; }

  // Rewrites the timestamp (first field) of every data row of every CSV file.
  void rewrite_timestamps(const std::function<std::string(std::size_t row)>& time_of) {
    for (const auto& file : csv_files_) {
      std::istringstream in(read_text(file));
      std::string line;
      std::string out;
      std::getline(in, line);
      out += line + "\n";  // header
      for (std::size_t row = 0; std::getline(in, line); ++row)
        out += time_of(row) + line.substr(line.find(',')) + "\n";
      testing::write_text_file(file, out);
    }
  }

  int preprocess(std::string* output) {
    return run_command(fmt::format("'{}' preprocess '{}' --out '{}' --threads 1 --no-progress",
                                   HEADROOM_BINARY, data().string(), store().string()),
                       output);
  }
  fs::path store() const { return dir_ / "store"; }

  // Every node feature finite, the timing ones in [0, 1]; and --verify agrees.
  void expect_sound_store() {
    const auto graphs = store::GraphStore::open(store());
    ASSERT_TRUE(graphs.metadata().node_features.timing);
    const std::size_t width = graphs.metadata().node_feature_count;
    std::size_t checked = 0;
    for (std::size_t g = 0; g < graphs.num_graphs(); ++g) {
      const auto view = graphs.graph(g);
      for (std::size_t i = 0; i < view.node_features.size(); ++i) {
        const float v = view.node_features[i];
        ASSERT_TRUE(std::isfinite(v)) << "graph " << g << " value " << i;
        const std::size_t column = i % width;
        if (column >= 11 && column < 15) {
          ASSERT_GE(v, 0.0F) << "graph " << g << " column " << column;
          ASSERT_LE(v, 1.0F) << "graph " << g << " column " << column;
          ++checked;
        }
      }
    }
    EXPECT_GT(checked, 0u);
    std::string output;
    EXPECT_EQ(
        run_command(fmt::format("'{}' inspect --verify '{}'", HEADROOM_BINARY, store().string()),
                    &output),
        0)
        << output;
  }

  testing::TempDir dir_;
  std::vector<fs::path> csv_files_;
};

// The input: one timestamp of 1e308 (before, the window duration feature became NaN).
TEST_F(HostileTimestamps, AnImplausibleTimestampIsRefusedWithFileLineAndColumn) {
  rewrite_timestamps([](std::size_t row) {
    return row == 41 ? std::string("1e308") : fmt::format("{}.000000", 1000 + row);
  });
  std::string output;
  EXPECT_EQ(preprocess(&output), 1) << output;
  expect_one_line_error(output, {data().string(), ".csv:43: column 'timestamp'",
                                 "timestamp '1e308' is not a plausible time"});
  EXPECT_FALSE(fs::exists(store()));
}

TEST_F(HostileTimestamps, GapsOf1e300SecondsGiveFiniteFeatures) {
  rewrite_timestamps([](std::size_t row) { return fmt::format("{}e-300", row + 1); });
  std::string output;
  ASSERT_EQ(preprocess(&output), 0) << output;
  expect_sound_store();
}

TEST_F(HostileTimestamps, HugePlausibleTimestampsOutOfOrderGiveFiniteFeatures) {
  rewrite_timestamps([](std::size_t row) {
    return row % 2 == 0 ? std::string("99999999999") : std::string("-99999999999");
  });
  std::string output;
  ASSERT_EQ(preprocess(&output), 0) << output;
  expect_sound_store();
}

TEST_F(HostileTimestamps, NegativeTimestampsGiveFiniteFeatures) {
  rewrite_timestamps([](std::size_t row) { return fmt::format("-{}.5", 100000 - row); });
  std::string output;
  ASSERT_EQ(preprocess(&output), 0) << output;
  expect_sound_store();
}

// Item 10: a peak-fit cache file edited into valid JSON. The first `plan` measures and stores a
// fit; each edit below is then discarded with a note on stderr and the fit measured again (the
// file rewritten with a fit of its own samples).
class HostilePeakFitCache : public ::testing::Test {
 protected:
  void SetUp() override { store_ = testing::build_synthetic_store(dir_.path(), 20'000, 9); }

  // `headroom plan --json`: the JSON on stdout, the notes on stderr into *notes.
  nlohmann::json plan(std::string* notes) {
    std::string output;
    const auto stderr_file = dir_ / "stderr.txt";
    // In a subshell: run_command sends stderr to stdout after the command's own redirections.
    EXPECT_EQ(run_command(fmt::format("(HEADROOM_CACHE_DIR='{}' '{}' plan --store '{}' --preset "
                                      "gat,student --batch-size 64 --threads 1 --json 2>'{}')",
                                      (dir_ / "cache").string(), HEADROOM_BINARY, store_.string(),
                                      stderr_file.string()),
                          &output),
              0)
        << output << read_text(stderr_file);
    if (notes != nullptr) *notes = read_text(stderr_file);
    return nlohmann::json::parse(output);
  }

  testing::TempDir dir_;
  fs::path store_;
};

TEST_F(HostilePeakFitCache, ZeroNegativeOrHugeCoefficientsAreDiscardedAndMeasuredAgain) {
  std::string notes;
  const auto first = plan(&notes);
  ASSERT_FALSE(first["fit_cache"]["hit"].get<bool>());
  const fs::path file = first["fit_cache"]["file"].get<std::string>();
  const auto pristine = nlohmann::json::parse(read_text(file));
  const auto second = plan(&notes);
  ASSERT_TRUE(second["fit_cache"]["hit"].get<bool>()) << "an untouched fit is used";
  EXPECT_EQ(notes.find("discarded"), std::string::npos) << notes;

  struct Case {
    std::string what;
    std::function<void(nlohmann::json&)> edit;
    std::string reason;
  };
  const std::vector<Case> cases = {
      {"zero",
       [](nlohmann::json& j) {
         for (const char* c :
              {"fixed_bytes", "bytes_per_node", "bytes_per_edge", "bytes_per_graph"})
           j["fit"][c] = 0.0;
       },
       "are not the fit of its own probe samples"},
      {"negative", [](nlohmann::json& j) { j["fit"]["fixed_bytes"] = -1e12; },
       "are not the fit of its own probe samples"},
      {"huge", [](nlohmann::json& j) { j["fit"]["bytes_per_node"] = 1e15; },
       "are not the fit of its own probe samples"},
      // Samples and fit edited together, consistently: only a step measured now can tell.
      {"samples and fit scaled by 1000",
       [](nlohmann::json& j) {
         std::vector<memory::PeakSample> samples;
         for (auto& s : j["samples"]) {
           s["peak_bytes"] = s["peak_bytes"].get<double>() * 1000;
           samples.push_back(s.get<memory::PeakSample>());
         }
         j["fit"] = memory::fit_peak(samples);
       },
       "measured now"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    auto edited = pristine;
    c.edit(edited);
    testing::write_text_file(file, edited.dump(2));
    const auto planned = plan(&notes);
    EXPECT_NE(notes.find("note: peak-fit cache file " + file.string() + " discarded"),
              std::string::npos)
        << notes;
    EXPECT_NE(notes.find(c.reason), std::string::npos) << notes;
    EXPECT_FALSE(planned["fit_cache"]["hit"].get<bool>());
    // Measured again: the file now holds a fit of its own samples, with a positive prediction.
    const auto rewritten = nlohmann::json::parse(read_text(file));
    const auto fit = rewritten["fit"].get<memory::PeakFit>();
    const auto samples = rewritten["samples"].get<std::vector<memory::PeakSample>>();
    EXPECT_EQ(memory::peak_fit_problem(fit, samples), "");
    ASSERT_FALSE(samples.empty());
    const double measured_before = pristine["samples"][0]["peak_bytes"].get<double>();
    EXPECT_GT(samples[0].peak_bytes, measured_before / 2);
    EXPECT_LT(samples[0].peak_bytes, measured_before * 2);
  }
}

}  // namespace
}  // namespace headroom
