// The output-path guards: an output never overlaps an input, and --force replaces only what
// headroom wrote.
#include "headroom/util/output_path.hpp"

#include <gtest/gtest.h>

#include <filesystem>

#include "test_support.hpp"

namespace headroom::util {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;
using testing::write_text_file;

TEST(RequireDisjoint, RefusesTheSamePathInsideAndContaining) {
  TempDir dir;
  fs::create_directories(dir / "data" / "train_01");
  EXPECT_THROW(require_disjoint(dir / "data", "out", dir / "data", "in"), std::runtime_error);
  EXPECT_THROW(require_disjoint(dir / "data/", "out", dir / "data", "in"), std::runtime_error);
  EXPECT_THROW(require_disjoint(dir / "data" / ".." / "data", "out", dir / "data", "in"),
               std::runtime_error);
  EXPECT_THROW(require_disjoint(dir / "data" / "store", "out", dir / "data", "in"),
               std::runtime_error);
  EXPECT_THROW(require_disjoint(dir.path(), "out", dir / "data", "in"), std::runtime_error);
}

TEST(RequireDisjoint, AllowsSiblingsAndPrefixNames) {
  TempDir dir;
  fs::create_directories(dir / "data");
  EXPECT_NO_THROW(require_disjoint(dir / "store", "out", dir / "data", "in"));
  EXPECT_NO_THROW(require_disjoint(dir / "data2", "out", dir / "data", "in"));
  EXPECT_NO_THROW(require_disjoint(dir / "dat", "out", dir / "data", "in"));
}

TEST(RequireDisjoint, SeesThroughSymlinks) {
  TempDir dir;
  fs::create_directories(dir / "data");
  fs::create_directory_symlink(dir / "data", dir / "alias");
  EXPECT_THROW(require_disjoint(dir / "alias", "out", dir / "data", "in"), std::runtime_error);
  EXPECT_THROW(require_disjoint(dir / "alias" / "store", "out", dir / "data", "in"),
               std::runtime_error);
}

TEST(RequireDisjoint, MessageNamesBothPaths) {
  TempDir dir;
  fs::create_directories(dir / "data");
  try {
    require_disjoint(dir / "data", "the store (--out)", dir / "data", "the dataset");
    FAIL() << "no throw";
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("the store (--out)"), std::string::npos) << what;
    EXPECT_NE(what.find("the dataset"), std::string::npos) << what;
    EXPECT_NE(what.find((dir / "data").string()), std::string::npos) << what;
  }
}

TEST(RequireReplaceable, OnlyMarkedOrEmptyDirectories) {
  TempDir dir;
  EXPECT_NO_THROW(require_replaceable(dir / "absent", "manifest.json", "graph store"));
  fs::create_directory(dir / "empty");
  EXPECT_NO_THROW(require_replaceable(dir / "empty", "manifest.json", "graph store"));
  write_text_file(dir / "store" / "manifest.json", "{}");
  EXPECT_NO_THROW(require_replaceable(dir / "store", "manifest.json", "graph store"));

  write_text_file(dir / "mine" / "notes.txt", "precious");
  EXPECT_THROW(require_replaceable(dir / "mine", "manifest.json", "graph store"),
               std::runtime_error);
  write_text_file(dir / "file", "precious");
  EXPECT_THROW(require_replaceable(dir / "file", "manifest.json", "graph store"),
               std::runtime_error);
  fs::create_directory_symlink(dir / "store", dir / "link");
  EXPECT_THROW(require_replaceable(dir / "link", "manifest.json", "graph store"),
               std::runtime_error);
  // A directory named like the marker is not the marker.
  fs::create_directories(dir / "fake" / "manifest.json");
  EXPECT_THROW(require_replaceable(dir / "fake", "manifest.json", "graph store"),
               std::runtime_error);
}

}  // namespace
}  // namespace headroom::util
