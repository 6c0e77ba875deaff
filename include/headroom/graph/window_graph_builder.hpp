// Builds the KD-GAT graph of one window of frames (docs/graph-construction.md has the definition).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "headroom/can/can_frame.hpp"
#include "headroom/graph/node_features.hpp"
#include "headroom/graph/window_config.hpp"
#include "headroom/graph/window_graph.hpp"

namespace headroom::graph {

// Reuses its scratch buffers between windows, so building allocates nothing in steady state.
// Not thread-safe: one builder per thread.
class WindowGraphBuilder {
 public:
  explicit WindowGraphBuilder(WindowConfig config, NodeFeatureOptions features = {});

  // Builds the graph of `frames` (one window, at least one frame) into `out`. keys[i] is the node
  // key of frames[i] (a vocabulary index, or the raw CAN ID before the vocabulary exists: the
  // construction only needs keys to be ordered like the CAN IDs they stand for). Feature 0 is the
  // key under NodeIdentity::kCanId (the store maps raw IDs to indices later), else the identity
  // itself; a hashed identity hashes frames' raw IDs, so its keys must not merge distinct IDs.
  void build(std::span<const can::CanFrame> frames, std::span<const std::uint32_t> keys,
             WindowGraph& out);

 private:
  // Fills the per-node statistics and pairs_ from local_ (set for `frames`).
  void count_transitions(std::span<const can::CanFrame> frames, std::size_t num_nodes);
  // Sizes out's node features and fills the KD-GAT columns from those statistics.
  void set_kd_gat_features(WindowGraph& out) const;
  // Appends one edge per unique pair in pairs_, with its features (the reverse flag left at 0).
  void add_edges(WindowGraph& out);
  void group_frames_by_node(std::size_t num_nodes);
  void add_timing_features(std::span<const can::CanFrame> frames, WindowGraph& out);
  void add_payload_features(std::span<const can::CanFrame> frames, WindowGraph& out);
  void set_identity(std::span<const can::CanFrame> frames, WindowGraph& out);

  WindowConfig config_;
  NodeFeatureOptions features_;
  std::vector<std::uint32_t> local_;   // per frame: local node index
  std::vector<std::uint64_t> pairs_;   // packed (source, target, position) per transition
  std::vector<std::uint32_t> degree_;  // per node
  std::vector<std::uint32_t> source_count_;
  std::vector<std::uint32_t> last_source_position_;
  std::vector<double> byte_sums_;           // per node x 8
  std::vector<std::uint32_t> frame_order_;  // frame indices grouped by node, in time order
  std::vector<std::uint32_t> node_begin_;   // per node + 1: its range in frame_order_
  std::vector<std::uint32_t> fill_;         // scratch: per node
};

}  // namespace headroom::graph
