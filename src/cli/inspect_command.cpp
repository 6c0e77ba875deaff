#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <memory>
#include <nlohmann/json.hpp>

#include "headroom/cli/commands.hpp"
#include "headroom/store/graph_store.hpp"
#include "headroom/store/manifest_seal.hpp"
#include "headroom/store/node_graph_store.hpp"
#include "headroom/store/node_graph_summary.hpp"
#include "headroom/store/store_error.hpp"
#include "headroom/store/store_summary.hpp"

namespace headroom::cli {

void add_inspect_command(CLI::App& app) {
  auto* command = app.add_subcommand("inspect", "Summarise a graph store (windows or node graph)");
  struct State {
    std::string store;
    bool json = false;
    bool verify = false;
  };
  auto state = std::make_shared<State>();
  command->add_option("STORE", state->store, "Graph store directory")->required();
  command->add_flag("--json", state->json,
                    "Print the summary as JSON (with every source file and its graph count)");
  command->add_flag("--verify", state->verify,
                    "Also checksum the graph data arrays (reads the whole store)");
  command->footer("Example: headroom inspect stores/synthetic --json");
  command->callback([state] {
    const auto verification =
        state->verify ? store::StoreVerification::kFull : store::StoreVerification::kMetadata;
    bool node_graph = false;
    try {
      node_graph = store::store_kind_at(state->store) == store::kNodeGraphStoreKind;
    } catch (const store::StoreError&) {
      // Not a store of either kind: GraphStore::open below says why, as it always has.
    }
    if (node_graph) {
      const auto summary =
          store::summarize_node_graph(store::NodeGraphStore::open(state->store, verification));
      if (state->json) {
        fmt::print("{}\n", store::node_graph_summary_to_json(summary).dump(2));
      } else {
        fmt::print("{}", store::render_node_graph_summary(summary));
        if (state->verify) fmt::print("checksums  all arrays verified\n");
      }
      return;
    }
    const auto store =
        store::GraphStore::open(state->store, state->verify ? store::StoreVerification::kFull
                                                            : store::StoreVerification::kMetadata);
    const auto summary = store::summarize_store(store);
    if (state->json) {
      fmt::print("{}\n", store::summary_to_json(summary).dump(2));
    } else {
      fmt::print("{}", store::render_summary(summary));
      if (state->verify) fmt::print("checksums  all arrays verified\n");
    }
  });
}

}  // namespace headroom::cli
