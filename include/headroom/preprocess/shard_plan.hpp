// Which files of a dataset each shard of a sharded preprocess reads (`headroom preprocess
// --shard I/N`). Every shard scans the same dataset, so every shard computes the same plan without
// talking to the others: the plan is a pure function of the layout and N.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "headroom/dataset/dataset_layout.hpp"

namespace headroom::preprocess {

// Shard `index` of `count`, 0-based (SLURM_ARRAY_TASK_ID of `--array=0-(N-1)`, or SLURM_PROCID).
struct ShardSpec {
  std::uint32_t index = 0;
  std::uint32_t count = 1;

  friend bool operator==(const ShardSpec&, const ShardSpec&) = default;
};

inline constexpr std::uint32_t kMaxShards = 100000;

// Parses "I/N" (e.g. "2/4"). Throws std::invalid_argument, naming the text, unless both are
// decimal numbers with 1 <= N <= kMaxShards and 0 <= I < N.
ShardSpec parse_shard(std::string_view text);

// "I-of-N": the name of the shard's part directory (store_part.hpp).
std::string shard_name(ShardSpec shard);
// The shard a part directory name stands for, or nothing for any other name (a staging directory
// "I-of-N.tmp-<pid>", a file of the user's).
std::optional<ShardSpec> parse_shard_name(std::string_view name);

// The shard of each layout file (index = file index) for `count` shards: files taken largest
// first (ties in layout order) go to the shard with the fewest bytes so far (ties: the lowest
// index), so shards get about equal bytes. With more shards than files, some get none.
std::vector<std::uint32_t> assign_shards(const dataset::DatasetLayout& layout, std::uint32_t count);

// The layout indices of the files of `shard`, ascending.
std::vector<std::size_t> files_of_shard(const dataset::DatasetLayout& layout, ShardSpec shard);

}  // namespace headroom::preprocess
