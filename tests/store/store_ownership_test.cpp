// What makes a directory a graph store headroom wrote (store_ownership.hpp): a manifest that
// validates and nothing but array files beside it. Look-alikes that used to pass on the name
// manifest.json alone are refused, naming why.
#include "headroom/store/store_ownership.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "headroom/util/file_reader.hpp"
#include "test_support.hpp"

namespace headroom::store {
namespace {

namespace fs = std::filesystem;

std::string why_not(const fs::path& directory) {
  return graph_store_kind().why_not_ours(directory);
}

TEST(StoreOwnership, ARealStoreIsRecognisedAndLookAlikesAreNot) {
  testing::TempDir dir;
  const auto store = testing::build_synthetic_store(dir.path(), 3000);
  EXPECT_EQ(why_not(store), "");

  testing::write_text_file(dir / "empty_manifest" / "manifest.json", "");
  EXPECT_NE(why_not(dir / "empty_manifest"), "");
  testing::write_text_file(dir / "web_app" / "manifest.json", R"({"name": "my app"})");
  EXPECT_NE(why_not(dir / "web_app").find("not a headroom graph store manifest"), std::string::npos)
      << why_not(dir / "web_app");
  fs::create_directories(dir / "no_manifest");
  EXPECT_NE(why_not(dir / "no_manifest").find("no manifest.json"), std::string::npos);

  // A store's manifest copied (or a store's files kept) beside someone's files.
  fs::copy(store, dir / "home", fs::copy_options::recursive);
  testing::write_text_file(dir / "home" / ".ssh" / "id_rsa", "secret");
  EXPECT_NE(why_not(dir / "home").find("'.ssh'"), std::string::npos) << why_not(dir / "home");
  // A manifest edited by hand no longer matches its checksum.
  fs::copy(store, dir / "edited", fs::copy_options::recursive);
  auto text = util::read_file(store / "manifest.json");
  const auto at = text.find("\"window\"");
  ASSERT_NE(at, std::string::npos);
  text.insert(text.find_first_of("0123456789", at), "1");
  testing::write_text_file(dir / "edited" / "manifest.json", text);
  EXPECT_NE(why_not(dir / "edited").find("checksum"), std::string::npos) << why_not(dir / "edited");
}

TEST(StoreOwnership, StagedEntriesAreTheBuildersOnly) {
  const auto kind = graph_store_kind();
  for (const char* own :
       {"manifest.json", "node_features.f32", "split_test.u32", "segment-000003.graphs",
        "segment-1234567.edge_features", "manifest.json.tmp-headroom-12-00000000000000ab"})
    EXPECT_TRUE(kind.is_staged_entry(own, false)) << own;
  for (const char* other : {"notes.txt", "segment-3.graphs", "segment-000003.txt", ".ssh",
                            "manifest.json.tmp-12", "thesis/ch1.tex"})
    EXPECT_FALSE(kind.is_staged_entry(other, false)) << other;
  EXPECT_FALSE(kind.is_staged_entry("manifest.json", true));
}

}  // namespace
}  // namespace headroom::store
