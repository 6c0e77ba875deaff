// The output-path guards: an output never overlaps an input, and --force replaces only what
// headroom wrote.
#include "headroom/util/output_path.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

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

// A kind whose record is a manifest.json holding exactly {"format":"toy"}, and nothing else.
DirectoryKind manifest_kind() {
  const auto is_own = [](const fs::path& relative, bool is_directory) {
    return !is_directory && relative == "manifest.json";
  };
  return {"graph store",
          [is_own](const fs::path& directory) -> std::string {
            std::ifstream in(directory / "manifest.json");
            std::string text((std::istreambuf_iterator<char>(in)), {});
            if (text != R"({"format":"toy"})") return "not a toy manifest";
            return describe_foreign_entries(foreign_entries(directory, is_own));
          },
          is_own};
}

TEST(RequireReplaceable, OnlyRecognisedOrEmptyDirectories) {
  TempDir dir;
  EXPECT_NO_THROW(require_replaceable(dir / "absent", manifest_kind()));
  fs::create_directory(dir / "empty");
  EXPECT_NO_THROW(require_replaceable(dir / "empty", manifest_kind()));
  write_text_file(dir / "store" / "manifest.json", R"({"format":"toy"})");
  EXPECT_NO_THROW(require_replaceable(dir / "store", manifest_kind()));
  // A file named like the record is not the record (this used to be accepted).
  write_text_file(dir / "web" / "manifest.json", "{}");
  EXPECT_THROW(require_replaceable(dir / "web", manifest_kind()), std::runtime_error);

  write_text_file(dir / "mine" / "notes.txt", "precious");
  EXPECT_THROW(require_replaceable(dir / "mine", manifest_kind()), std::runtime_error);
  write_text_file(dir / "file", "precious");
  EXPECT_THROW(require_replaceable(dir / "file", manifest_kind()), std::runtime_error);
  fs::create_directory_symlink(dir / "store", dir / "link");
  EXPECT_THROW(require_replaceable(dir / "link", manifest_kind()), std::runtime_error);
  // A directory named like the marker is not the marker.
  fs::create_directories(dir / "fake" / "manifest.json");
  EXPECT_THROW(require_replaceable(dir / "fake", manifest_kind()), std::runtime_error);
}

// The file system type the mount table gives for `path`'s mount point, as the guard reads it.
std::string mount_type_of(const std::string& mount_point) {
  std::ifstream table("/proc/self/mountinfo");
  std::string line, type;
  while (std::getline(table, line)) {
    std::istringstream fields(line);
    std::string id, parent, device, root, point, field;
    fields >> id >> parent >> device >> root >> point;
    while (fields >> field && field != "-") {
    }
    if (point == mount_point) fields >> type;
  }
  return type;
}

// /proc and /sys exist on every Linux; /dev is checked where it is a devtmpfs (not in every container).
TEST(RequireStorageLocation, RefusesTheKernelsFileSystemsNamingThem) {
  try {
    require_storage_location("/proc/headroom-store", "the store");
    ADD_FAILURE() << "/proc was accepted";
  } catch (const std::runtime_error& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("the store '/proc/headroom-store'"), std::string::npos) << message;
    EXPECT_NE(message.find("a proc file system"), std::string::npos) << message;
  }
  EXPECT_THROW(require_storage_location("/sys/kernel/headroom", "out"), std::runtime_error);
  if (mount_type_of("/dev") == "devtmpfs") {
    EXPECT_THROW(require_storage_location("/dev/headroom", "out"), std::runtime_error);
  }
}

TEST(RequireStorageLocation, SeesThroughSymlinksAndPassesDisksAndRamDisks) {
  TempDir dir;
  EXPECT_NO_THROW(require_storage_location(dir / "store", "out"));
  EXPECT_NO_THROW(require_storage_location(dir / "no" / "such" / "store", "out"));
  fs::create_directory_symlink("/proc", dir / "looks-local");
  EXPECT_THROW(require_storage_location(dir / "looks-local" / "store", "out"), std::runtime_error);
  if (mount_type_of("/dev/shm") == "tmpfs") {
    EXPECT_NO_THROW(require_storage_location("/dev/shm/headroom-store", "out"));
  }
}

}  // namespace
}  // namespace headroom::util
