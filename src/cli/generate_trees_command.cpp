// `headroom generate-trees`: synthetic geometric trees (synthetic/synthetic_trees.hpp) written as a
// geometric graph store, the default data of the SGMP / GT-SSL task.
#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <chrono>
#include <memory>
#include <string>

#include "headroom/cli/commands.hpp"
#include "headroom/cli/not_negative.hpp"
#include "headroom/synthetic/synthetic_trees.hpp"
#include "headroom/util/printable_text.hpp"

namespace headroom::cli {
namespace {

void run_generate_trees(const std::string& out, synthetic::SyntheticTreeOptions options) {
  const auto started = std::chrono::steady_clock::now();
  options.created_by = fmt::format("headroom {} generate-trees", HEADROOM_VERSION);
  const auto summary = synthetic::generate_synthetic_trees(out, options);
  const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - started;
  fmt::print(
      "wrote {}: {} trees in {}-D ({} train, {} test; {} of label 1), {} nodes, {} edges; "
      "3rd-order paths per tree min {} / mean {:.0f} / max {}; seed {}, {:.2f} s\n",
      util::printable_path(out), summary.trees, options.dimensions,
      summary.trees - summary.test_trees, summary.test_trees, summary.label_1_trees, summary.nodes,
      summary.edges, summary.min_third_order_paths,
      static_cast<double>(summary.third_order_paths) / static_cast<double>(summary.trees),
      summary.max_third_order_paths, options.seed, elapsed.count());
}

}  // namespace

void add_generate_trees_command(CLI::App& app) {
  auto out = std::make_shared<std::string>("stores/synthetic-trees");
  auto options = std::make_shared<synthetic::SyntheticTreeOptions>();
  CLI::App* cmd = app.add_subcommand(
      "generate-trees",
      "Write synthetic 2-D/3-D branching trees (positions, parents, five node features; two "
      "classes that grow differently) into a geometric graph store");
  cmd->add_option("--out", *out, "Graph store directory to create")->capture_default_str();
  cmd->add_option("--trees", options->trees, "Number of trees")
      ->capture_default_str()
      ->check(CLI::Range(1U, 100'000'000U));
  cmd->add_option("--min-nodes", options->min_nodes, "Fewest nodes of a tree (at least 2)")
      ->capture_default_str()
      ->check(CLI::Range(2U, 1U << 24));
  cmd->add_option("--max-nodes", options->max_nodes,
                  "Most nodes of a tree; each tree draws its size in [min, max]")
      ->capture_default_str()
      ->check(CLI::Range(2U, 1U << 24));
  cmd->add_option("--dimensions", options->dimensions, "2 or 3")
      ->capture_default_str()
      ->check(CLI::IsMember({2U, 3U}));
  cmd->add_option("--test-fraction", options->test_fraction,
                  "Fraction of the trees that are test trees (spread evenly)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 0.99));
  cmd->add_option("--validation-fraction", options->validation_fraction,
                  "Fraction of the training trees drawn (seeded) for validation")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 0.99));
  cmd->add_option("--seed", options->seed, "Seed; the same options give the same store")
      ->check(not_negative())
      ->capture_default_str();
  cmd->add_flag("--force", options->overwrite, "Replace --out if it is a graph store");
  cmd->footer("Example: headroom generate-trees --out stores/trees --trees 200 --dimensions 2");
  cmd->callback([out, options] { run_generate_trees(*out, *options); });
}

}  // namespace headroom::cli
