// The Python snippet of docs/store-format.md reads the same values headroom reads.
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "headroom/preprocess/preprocessor.hpp"
#include "headroom/store/graph_store.hpp"
#include "test_support.hpp"

namespace headroom {
namespace {

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string documented_snippet() {
  const std::string doc =
      read_file(std::filesystem::path(HEADROOM_SOURCE_DIR) / "docs/store-format.md");
  const auto begin = doc.find("<!-- python-snippet:begin -->");
  const auto end = doc.find("<!-- python-snippet:end -->");
  if (begin == std::string::npos || end == std::string::npos) return {};
  std::string block = doc.substr(begin, end - begin);
  const auto code_begin = block.find("```python\n");
  const auto code_end = block.rfind("```");
  return block.substr(code_begin + 10, code_end - code_begin - 10);
}

TEST(StorePythonSnippet, ReadsWhatHeadroomReads) {
  const std::string snippet = documented_snippet();
  ASSERT_FALSE(snippet.empty()) << "docs/store-format.md lost its snippet markers";

  testing::TempDir dir;
  std::string rows = "timestamp,arbitration_id,data_field,attack\n";
  for (int i = 0; i < 730; ++i) {
    rows += fmt::format("{}.5,{:X},{:02X}{:02X},{}\n", i, 0x100 + (i * 37) % 11, i % 256,
                        (i * 7) % 256, i > 400 && i < 420 ? 1 : 0);
  }
  testing::write_text_file(dir / "data/train_01/a-1.csv", rows);
  testing::write_text_file(dir / "data/test_01/b-1.csv", rows.substr(0, rows.size() / 2));
  preprocess::PreprocessOptions options;
  options.progress = 0;
  preprocess::preprocess_dataset(dir / "data", dir / "store", options);
  const auto store = store::GraphStore::open(dir / "store");

  const std::string driver = snippet + R"(
import sys
manifest, arrays = open_store(sys.argv[1])
out = {"num_graphs": manifest["num_graphs"],
       "validation": arrays["split_validation"].tolist(),
       "num_nodes": arrays["graph_num_nodes"].tolist(),
       "graphs": {}}
for g in range(manifest["num_graphs"]):
    d = graph(arrays, g)
    out["graphs"][str(g)] = {"x": d["x"].tolist(), "edge_index": d["edge_index"].tolist(),
                             "edge_attr": d["edge_attr"].tolist(), "y": d["y"]}
print(json.dumps(out))
)";
  testing::write_text_file(dir / "driver.py", driver);
  std::string output;
  const int status =
      testing::run_command(fmt::format("'{}' '{}' '{}'", HEADROOM_PYTHON,
                                       (dir / "driver.py").string(), (dir / "store").string()),
                           &output);
  ASSERT_EQ(status, 0) << output;
  const auto json = nlohmann::json::parse(output);

  ASSERT_EQ(json["num_graphs"].get<std::size_t>(), store.num_graphs());
  const auto validation = store.validation_ids();
  EXPECT_EQ(json["validation"].get<std::vector<std::uint32_t>>(),
            std::vector<std::uint32_t>(validation.begin(), validation.end()));
  const auto index = store.size_index();
  EXPECT_EQ(json["num_nodes"].get<std::vector<std::uint32_t>>(),
            std::vector<std::uint32_t>(index.num_nodes.begin(), index.num_nodes.end()));
  for (std::size_t g = 0; g < store.num_graphs(); ++g) {
    const auto view = store.graph(g);
    const auto& py = json["graphs"][std::to_string(g)];
    EXPECT_EQ(py["y"].get<int>(), view.label);
    const auto x = py["x"].get<std::vector<std::vector<float>>>();
    ASSERT_EQ(x.size(), view.num_nodes());
    for (std::size_t n = 0; n < x.size(); ++n) {
      for (std::size_t f = 0; f < 11; ++f) EXPECT_EQ(x[n][f], view.node_features[n * 11 + f]);
    }
    const auto edges = py["edge_index"].get<std::vector<std::vector<std::int32_t>>>();
    ASSERT_EQ(edges.size(), 2U);
    ASSERT_EQ(edges[0].size(), view.num_edges());
    for (std::size_t e = 0; e < view.num_edges(); ++e) {
      EXPECT_EQ(edges[0][e], view.edge_index[2 * e]);
      EXPECT_EQ(edges[1][e], view.edge_index[2 * e + 1]);
    }
    const auto attr = py["edge_attr"].get<std::vector<std::vector<float>>>();
    for (std::size_t e = 0; e < view.num_edges(); ++e) {
      for (std::size_t f = 0; f < 11; ++f) EXPECT_EQ(attr[e][f], view.edge_features[e * 11 + f]);
    }
  }
}

}  // namespace
}  // namespace headroom
