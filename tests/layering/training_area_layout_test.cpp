// The training area's layout, read from the source tree: its files live in wings (sub-folders of
// src/train and include/headroom/train), and no two of its files include each other, directly or
// through others. That a wing includes no higher wing is held by the compiler (each wing builds
// against an include view of itself and the wings below it; tests/layering/CMakeLists.txt).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

const fs::path kSource = HEADROOM_SOURCE_DIR;

// A unit is a header and its source file: "loop/training_loop" for
// include/headroom/train/loop/training_loop.hpp and src/train/loop/training_loop.cpp.
using Unit = std::string;

Unit unit_of(const fs::path& file, const fs::path& root) {
  auto relative = fs::relative(file, root);
  relative.replace_extension();
  return relative.generic_string();
}

// The training-area units that `file` includes: "headroom/train/WING/NAME.hpp", or a private
// header beside it ("NAME.hpp" in src/train/WING/).
std::set<Unit> included_units(const fs::path& file, const fs::path& src_root) {
  static const std::regex area_include(R"re(#include "headroom/train/([a-z_]+/[a-z_]+)\.hpp")re");
  static const std::regex local_include(R"re(#include "([a-z_]+)\.hpp")re");
  std::set<Unit> units;
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    std::smatch match;
    if (std::regex_search(line, match, area_include)) {
      units.insert(match[1]);
    } else if (std::regex_search(line, match, local_include)) {
      units.insert(unit_of(file.parent_path() / (match[1].str() + ".hpp"), src_root));
    }
  }
  return units;
}

std::map<Unit, std::set<Unit>> training_area_includes() {
  std::map<Unit, std::set<Unit>> graph;
  const auto src_root = kSource / "src" / "train";
  for (const auto& root : {kSource / "include" / "headroom" / "train", src_root}) {
    for (const auto& entry : fs::recursive_directory_iterator(root)) {
      if (!entry.is_regular_file()) continue;
      const auto unit = unit_of(entry.path(), root);
      auto& edges = graph[unit];
      for (const auto& included : included_units(entry.path(), src_root))
        if (included != unit) edges.insert(included);
    }
  }
  return graph;
}

// A cycle through `unit`, as "a -> b -> a", or empty when none is reachable from it.
std::string find_cycle(const std::map<Unit, std::set<Unit>>& graph, const Unit& unit,
                       std::map<Unit, int>& state, std::vector<Unit>& path) {
  state[unit] = 1;  // on the current path
  path.push_back(unit);
  if (const auto edges = graph.find(unit); edges != graph.end()) {
    for (const auto& next : edges->second) {
      if (state[next] == 1) {
        std::string cycle;
        bool on = false;
        for (const auto& step : path) {
          on = on || step == next;
          if (on) cycle += step + " -> ";
        }
        return cycle + next;
      }
      if (state[next] == 0) {
        auto cycle = find_cycle(graph, next, state, path);
        if (!cycle.empty()) return cycle;
      }
    }
  }
  path.pop_back();
  state[unit] = 2;  // done, no cycle through it
  return {};
}

TEST(TrainingAreaLayout, NoTwoFilesIncludeEachOtherEvenThroughOthers) {
  const auto graph = training_area_includes();
  ASSERT_GT(graph.size(), 20U) << "the training area was not found under " << kSource;
  std::map<Unit, int> state;
  for (const auto& [unit, edges] : graph) {
    if (state[unit] != 0) continue;
    std::vector<Unit> path;
    const auto cycle = find_cycle(graph, unit, state, path);
    EXPECT_TRUE(cycle.empty()) << "include cycle: " << cycle;
  }
}

TEST(TrainingAreaLayout, AtMostThreeSourceFilesAreLeftFlat) {
  std::vector<std::string> flat;
  for (const auto& root : {kSource / "src" / "train", kSource / "include" / "headroom" / "train"})
    for (const auto& entry : fs::directory_iterator(root))
      if (entry.is_regular_file()) flat.push_back(entry.path().filename().string());
  EXPECT_LE(flat.size(), 3U) << "files outside a wing: " << ::testing::PrintToString(flat);
}

}  // namespace
