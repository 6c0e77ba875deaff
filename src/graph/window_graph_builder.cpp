#include "headroom/graph/window_graph_builder.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>

namespace headroom::graph {
namespace {

// Packing (source, target, position) into one integer lets a single sort both group the
// occurrences of each edge and order them by position. Windows are far below these limits.
constexpr int kPositionBits = 24;
constexpr int kNodeBits = 20;

constexpr std::uint64_t pack(std::uint32_t source, std::uint32_t target, std::uint32_t position) {
  return (static_cast<std::uint64_t>(source) << (kNodeBits + kPositionBits)) |
         (static_cast<std::uint64_t>(target) << kPositionBits) | position;
}
constexpr std::uint32_t source_of(std::uint64_t packed) {
  return static_cast<std::uint32_t>(packed >> (kNodeBits + kPositionBits));
}
constexpr std::uint32_t target_of(std::uint64_t packed) {
  return static_cast<std::uint32_t>((packed >> kPositionBits) & ((1U << kNodeBits) - 1));
}
constexpr std::uint32_t position_of(std::uint64_t packed) {
  return static_cast<std::uint32_t>(packed & ((1U << kPositionBits) - 1));
}

// The window duration (s) at which the squashed duration feature is 0.5: ~100 frames of a
// 500 kbit/s bus at typical load. Squashing keeps the feature in [0, 1) on any bus.
constexpr double kDurationScale_s = 0.1;

// x / (1 + x) for x >= 0, and 1 for +infinity (where the quotient would be NaN): in [0, 1].
double squash(double value) { return std::isinf(value) ? 1.0 : value / (1.0 + value); }

// The time from `earlier` to `later` (s): 0 when they are out of order, the largest finite value
// where the difference of two finite timestamps overflows. So every gap is finite and >= 0.
double gap_between(double earlier, double later) {
  const double gap = later - earlier;
  if (!(gap > 0.0)) return 0.0;  // negative, zero, or NaN
  return std::min(gap, std::numeric_limits<double>::max());
}

// 1 when any frame of the window is an attack frame.
std::uint8_t window_label(std::span<const can::CanFrame> frames) {
  std::uint8_t label = 0;
  for (const auto& frame : frames) label |= static_cast<std::uint8_t>(frame.label != 0);
  return label;
}

// Nodes are the sorted unique keys: every frame is a source or a target (or both), so the union of
// sources and targets is the set of all keys in the window. `local` gets each frame's node index.
void index_nodes(std::span<const std::uint32_t> keys, std::vector<std::uint32_t>& node_keys,
                 std::vector<std::uint32_t>& local) {
  node_keys.assign(keys.begin(), keys.end());
  std::sort(node_keys.begin(), node_keys.end());
  node_keys.erase(std::unique(node_keys.begin(), node_keys.end()), node_keys.end());
  local.resize(keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) {
    local[i] = static_cast<std::uint32_t>(
        std::lower_bound(node_keys.begin(), node_keys.end(), keys[i]) - node_keys.begin());
  }
}

// The spacing of one edge's occurrences, in frame positions.
struct OccurrenceGaps {
  double mean = 0.0;
  double std_dev = 0.0;
  double regularity = 0.0;  // 1 / (1 + std_dev): 1 for evenly spaced occurrences
};

// `occurrences` are one edge's packed pairs in position order; `first` and `last` their positions.
OccurrenceGaps occurrence_gaps(std::span<const std::uint64_t> occurrences, double first,
                               double last) {
  OccurrenceGaps result;
  if (occurrences.size() < 2) return result;  // no gap
  const double gaps = static_cast<double>(occurrences.size() - 1);
  result.mean = (last - first) / gaps;  // the gaps telescope
  double squares = 0.0;
  for (std::size_t k = 1; k < occurrences.size(); ++k) {
    const double gap =
        static_cast<double>(position_of(occurrences[k])) - position_of(occurrences[k - 1]);
    squares += (gap - result.mean) * (gap - result.mean);
  }
  result.std_dev = std::sqrt(squares / gaps);
  result.regularity = result.std_dev > 0.0 ? 1.0 / (1.0 + result.std_dev) : 1.0;
  return result;
}

// Appends the edge s -> t with its features; `occurrences` are its packed pairs in position order,
// `degree` is per node, `window` the configured window length in frames.
void append_edge(std::uint32_t s, std::uint32_t t, std::span<const std::uint64_t> occurrences,
                 std::span<const std::uint32_t> degree, double window, WindowGraph& out) {
  const std::size_t count = occurrences.size();
  const double first = position_of(occurrences.front());
  const double last = position_of(occurrences.back());
  const OccurrenceGaps gaps = occurrence_gaps(occurrences, first, last);
  const double degree_s = degree[s];
  const double degree_t = degree[t];

  out.edge_index.push_back(static_cast<std::int32_t>(s));
  out.edge_index.push_back(static_cast<std::int32_t>(t));
  const float features[kEdgeFeatureCount] = {
      static_cast<float>(count),
      static_cast<float>(count / window),
      static_cast<float>(gaps.mean),
      static_cast<float>(gaps.std_dev),
      static_cast<float>(gaps.regularity),
      static_cast<float>(first / window),
      static_cast<float>(last / window),
      static_cast<float>(last / window - first / window),
      0.0F,  // reverse-edge flag, set by mark_reverse_edges once all edges are known
      static_cast<float>(degree_s * degree_t),
      static_cast<float>(degree_s / std::max(degree_t, 1e-8)),
  };
  out.edge_features.insert(out.edge_features.end(), std::begin(features), std::end(features));
}

// The entropy (bits per byte) of the payload bytes of `node_frames` (indices into `frames`), from
// `histogram`, which counts them (`bytes` in all). Each value's term is summed where it first
// occurs, and its count cleared, which leaves the histogram empty for the next node.
double byte_entropy(std::span<const can::CanFrame> frames,
                    std::span<const std::uint32_t> node_frames,
                    std::array<std::uint32_t, 256>& histogram, std::uint32_t bytes) {
  double entropy = 0.0;
  for (std::size_t k = 0; k < node_frames.size() && bytes > 0; ++k) {
    const can::CanFrame& frame = frames[node_frames[k]];
    const std::size_t length = std::min<std::size_t>(frame.dlc, can::kMaxPayloadBytes);
    for (std::size_t b = 0; b < length; ++b) {
      std::uint32_t& count = histogram[frame.data[b]];
      if (count == 0) continue;  // this value's term is already summed
      const double p = static_cast<double>(count) / bytes;
      entropy -= p * std::log2(p);
      count = 0;
    }
  }
  return entropy;
}

// Sets the reverse-edge flag (edge feature 8) of each edge whose reverse is also an edge. Edges
// are sorted by (source, target), so the reverse of each is found by binary search.
void mark_reverse_edges(WindowGraph& out) {
  const std::size_t num_edges = out.num_edges();
  auto edge_less = [&](std::size_t e, std::pair<std::int32_t, std::int32_t> key) {
    return std::pair(out.edge_index[2 * e], out.edge_index[2 * e + 1]) < key;
  };
  for (std::size_t e = 0; e < num_edges; ++e) {
    const std::pair<std::int32_t, std::int32_t> reverse{out.edge_index[2 * e + 1],
                                                        out.edge_index[2 * e]};
    std::size_t lo = 0;
    std::size_t hi = num_edges;
    while (lo < hi) {
      const std::size_t mid = (lo + hi) / 2;
      if (edge_less(mid, reverse))
        lo = mid + 1;
      else
        hi = mid;
    }
    const bool found = lo < num_edges && out.edge_index[2 * lo] == reverse.first &&
                       out.edge_index[2 * lo + 1] == reverse.second;
    out.edge_features[e * kEdgeFeatureCount + 8] = found ? 1.0F : 0.0F;
  }
}

}  // namespace

WindowGraphBuilder::WindowGraphBuilder(WindowConfig config, NodeFeatureOptions features)
    : config_(config), features_(features) {
  config_.validate();
  if (config_.window >= (1U << kPositionBits)) throw std::invalid_argument("window too large");
}

void WindowGraphBuilder::build(std::span<const can::CanFrame> frames,
                               std::span<const std::uint32_t> keys, WindowGraph& out) {
  if (frames.empty()) throw std::invalid_argument("a window needs at least one frame");
  if (keys.size() != frames.size()) throw std::invalid_argument("one key per frame expected");
  out.label = window_label(frames);
  index_nodes(keys, out.node_keys, local_);
  const std::size_t num_nodes = out.node_keys.size();
  count_transitions(frames, num_nodes);
  set_kd_gat_features(out);
  if (features_.timing || features_.payload || features_.identity != NodeIdentity::kCanId) {
    group_frames_by_node(num_nodes);
    if (features_.timing) add_timing_features(frames, out);
    if (features_.payload) add_payload_features(frames, out);
    if (features_.identity != NodeIdentity::kCanId) set_identity(frames, out);
  }
  add_edges(out);
  mark_reverse_edges(out);
}

void WindowGraphBuilder::count_transitions(std::span<const can::CanFrame> frames,
                                           std::size_t num_nodes) {
  // Node statistics over the frames where the node is a source (frames 0..L-2).
  degree_.assign(num_nodes, 0);
  source_count_.assign(num_nodes, 0);
  last_source_position_.assign(num_nodes, 0);
  byte_sums_.assign(num_nodes * can::kMaxPayloadBytes, 0.0);
  pairs_.clear();
  for (std::size_t i = 0; i + 1 < frames.size(); ++i) {
    const std::uint32_t s = local_[i];
    const std::uint32_t t = local_[i + 1];
    ++degree_[s];
    ++degree_[t];
    ++source_count_[s];
    last_source_position_[s] = static_cast<std::uint32_t>(i);
    for (std::size_t b = 0; b < can::kMaxPayloadBytes; ++b) {
      byte_sums_[s * can::kMaxPayloadBytes + b] += frames[i].data[b];
    }
    pairs_.push_back(pack(s, t, static_cast<std::uint32_t>(i)));
  }
}

void WindowGraphBuilder::set_kd_gat_features(WindowGraph& out) const {
  // The source counts are min-max scaled over the nodes that are sources at all.
  std::uint32_t min_count = UINT32_MAX;
  std::uint32_t max_count = 0;
  for (std::uint32_t count : source_count_) {
    if (count == 0) continue;
    min_count = std::min(min_count, count);
    max_count = std::max(max_count, count);
  }

  const double window = config_.window;
  const std::size_t num_nodes = out.node_keys.size();
  const std::size_t width = features_.count();
  out.node_feature_count = width;
  out.node_features.assign(num_nodes * width, 0.0F);
  for (std::size_t n = 0; n < num_nodes; ++n) {
    float* row = &out.node_features[n * width];
    row[0] = static_cast<float>(out.node_keys[n]);
    const std::uint32_t count = source_count_[n];
    if (count == 0) continue;  // only ever a target: its key and zeros
    for (std::size_t b = 0; b < can::kMaxPayloadBytes; ++b) {
      row[1 + b] = static_cast<float>(byte_sums_[n * can::kMaxPayloadBytes + b] / count / 255.0);
    }
    row[9] =
        max_count > min_count
            ? static_cast<float>(static_cast<double>(count - min_count) / (max_count - min_count))
            : static_cast<float>(count);
    row[10] = static_cast<float>(last_source_position_[n] / (window - 1.0));
  }
}

void WindowGraphBuilder::add_edges(WindowGraph& out) {
  // Edges: unique (source, target) pairs in lexicographic order; sorting the packed pairs groups
  // each edge's occurrences in position order.
  std::sort(pairs_.begin(), pairs_.end());
  out.edge_index.clear();
  out.edge_features.clear();
  std::size_t begin = 0;
  while (begin < pairs_.size()) {
    const std::uint32_t s = source_of(pairs_[begin]);
    const std::uint32_t t = target_of(pairs_[begin]);
    std::size_t end = begin + 1;
    while (end < pairs_.size() && source_of(pairs_[end]) == s && target_of(pairs_[end]) == t) ++end;
    append_edge(s, t, std::span<const std::uint64_t>(pairs_).subspan(begin, end - begin), degree_,
                config_.window, out);
    begin = end;
  }
}

void WindowGraphBuilder::group_frames_by_node(std::size_t num_nodes) {
  // A counting sort by node: stable, so each node's frames stay in time order.
  node_begin_.assign(num_nodes + 1, 0);
  for (const std::uint32_t node : local_) ++node_begin_[node + 1];
  std::partial_sum(node_begin_.begin(), node_begin_.end(), node_begin_.begin());
  frame_order_.resize(local_.size());
  fill_.assign(node_begin_.begin(), node_begin_.end() - 1);
  for (std::size_t i = 0; i < local_.size(); ++i)
    frame_order_[fill_[local_[i]]++] = static_cast<std::uint32_t>(i);
}

void WindowGraphBuilder::add_timing_features(std::span<const can::CanFrame> frames,
                                             WindowGraph& out) {
  const double duration = gap_between(frames.front().timestamp_s, frames.back().timestamp_s);
  const std::size_t column = kKdGatNodeFeatureCount;
  for (std::size_t n = 0; n + 1 < node_begin_.size(); ++n) {
    float* row = &out.node_features[n * out.node_feature_count + column];
    row[3] = static_cast<float>(squash(duration / kDurationScale_s));
    const std::uint32_t begin = node_begin_[n];
    const std::uint32_t end = node_begin_[n + 1];
    if (end - begin < 2) continue;  // no inter-arrival time
    double longest = 0.0;
    for (std::uint32_t k = begin + 1; k < end; ++k)
      longest = std::max(longest, gap_between(frames[frame_order_[k - 1]].timestamp_s,
                                              frames[frame_order_[k]].timestamp_s));
    if (longest == 0.0) continue;  // every frame at one instant: no rate to describe
    // The statistics of the gaps in units of the longest one, which lie in [0, 1]: no sum or
    // square overflows or underflows to 0 on any finite timestamps, and the ratios below are
    // the same in any unit.
    double sum = 0.0;
    double squares = 0.0;
    double shortest = 1.0;
    for (std::uint32_t k = begin + 1; k < end; ++k) {
      const double gap = gap_between(frames[frame_order_[k - 1]].timestamp_s,
                                     frames[frame_order_[k]].timestamp_s) /
                         longest;
      sum += gap;
      squares += gap * gap;
      shortest = std::min(shortest, gap);
    }
    const double gaps = end - begin - 1;
    const double mean = sum / gaps;  // >= 1 / gaps: the longest gap is 1
    const double variance = std::max(0.0, squares / gaps - mean * mean);
    // mean / duration in seconds; longest / duration overflows to +inf at worst, which min() caps.
    row[0] = duration > 0.0 ? static_cast<float>(std::min(1.0, mean * (longest / duration))) : 0.0F;
    row[1] = static_cast<float>(squash(std::sqrt(variance) / mean));
    row[2] = static_cast<float>(std::min(1.0, shortest / mean));
  }
}

void WindowGraphBuilder::add_payload_features(std::span<const can::CanFrame> frames,
                                              WindowGraph& out) {
  const std::size_t column =
      kKdGatNodeFeatureCount + (features_.timing ? kTimingNodeFeatureCount : 0);
  std::array<std::uint32_t, 256> histogram{};
  for (std::size_t n = 0; n + 1 < node_begin_.size(); ++n) {
    float* row = &out.node_features[n * out.node_feature_count + column];
    const std::uint32_t begin = node_begin_[n];
    const std::uint32_t end = node_begin_[n + 1];
    std::uint32_t bytes = 0;
    double dlc_sum = 0.0;
    double bit_flips = 0.0;
    double byte_changes = 0.0;
    for (std::uint32_t k = begin; k < end; ++k) {
      const can::CanFrame& frame = frames[frame_order_[k]];
      const std::size_t length = std::min<std::size_t>(frame.dlc, can::kMaxPayloadBytes);
      for (std::size_t b = 0; b < length; ++b) ++histogram[frame.data[b]];
      bytes += static_cast<std::uint32_t>(length);
      dlc_sum += static_cast<double>(length);
      if (k == begin) continue;
      const can::CanFrame& previous = frames[frame_order_[k - 1]];
      for (std::size_t b = 0; b < can::kMaxPayloadBytes; ++b) {
        const auto flipped = static_cast<std::uint8_t>(frame.data[b] ^ previous.data[b]);
        bit_flips += std::popcount(flipped);
        byte_changes += flipped != 0;
      }
    }
    const double entropy = byte_entropy(
        frames, std::span<const std::uint32_t>(frame_order_).subspan(begin, end - begin), histogram,
        bytes);
    const double frames_of_node = end - begin;
    row[0] = static_cast<float>(entropy / 8.0);
    if (frames_of_node > 1) {
      row[1] = static_cast<float>(bit_flips / (64.0 * (frames_of_node - 1)));
      row[2] = static_cast<float>(byte_changes / (8.0 * (frames_of_node - 1)));
    }
    row[3] = static_cast<float>(dlc_sum / (8.0 * frames_of_node));
  }
}

void WindowGraphBuilder::set_identity(std::span<const can::CanFrame> frames, WindowGraph& out) {
  const std::size_t num_nodes = node_begin_.size() - 1;
  if (features_.identity == NodeIdentity::kHashedId) {
    for (std::size_t n = 0; n < num_nodes; ++n) {
      const std::uint32_t can_id = frames[frame_order_[node_begin_[n]]].id;
      out.node_features[n * out.node_feature_count] = static_cast<float>(hashed_identity(can_id));
    }
    return;
  }
  // Frequency rank: most frames first; nodes are in key order, so a stable sort breaks ties by
  // the lower key (CAN ID).
  fill_.resize(num_nodes);
  std::iota(fill_.begin(), fill_.end(), 0U);
  const auto frames_of = [&](std::uint32_t n) { return node_begin_[n + 1] - node_begin_[n]; };
  std::stable_sort(fill_.begin(), fill_.end(),
                   [&](std::uint32_t a, std::uint32_t b) { return frames_of(a) > frames_of(b); });
  for (std::size_t rank = 0; rank < num_nodes; ++rank) {
    const auto identity = std::min<std::size_t>(rank, kFrequencyRankClasses - 1);
    out.node_features[fill_[rank] * out.node_feature_count] = static_cast<float>(identity);
  }
}

}  // namespace headroom::graph
