#include "headroom/preprocess/shard_plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <numeric>
#include <stdexcept>

namespace headroom::preprocess {
namespace {

bool parse_number(std::string_view text, std::uint32_t& value) {
  if (text.empty()) return false;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return error == std::errc() && end == text.data() + text.size();
}

}  // namespace

ShardSpec parse_shard(std::string_view text) {
  const auto slash = text.find('/');
  ShardSpec shard;
  const bool parsed = slash != std::string_view::npos &&
                      parse_number(text.substr(0, slash), shard.index) &&
                      parse_number(text.substr(slash + 1), shard.count);
  if (!parsed || shard.count == 0 || shard.count > kMaxShards)
    throw std::invalid_argument(fmt::format(
        "--shard must be I/N with N from 1 to {} (e.g. --shard 0/4), not '{}'", kMaxShards, text));
  if (shard.index >= shard.count)
    throw std::invalid_argument(
        fmt::format("--shard {}: the shard index counts from 0, so it must be below {} (0 to {})",
                    text, shard.count, shard.count - 1));
  return shard;
}

std::string shard_name(ShardSpec shard) {
  return fmt::format("{}-of-{}", shard.index, shard.count);
}

std::optional<ShardSpec> parse_shard_name(std::string_view name) {
  const auto of = name.find("-of-");
  ShardSpec shard;
  if (of == std::string_view::npos || !parse_number(name.substr(0, of), shard.index) ||
      !parse_number(name.substr(of + 4), shard.count) || shard.index >= shard.count ||
      shard_name(shard) != name)  // no leading zeros or signs: one name per shard
    return std::nullopt;
  return shard;
}

std::vector<std::uint32_t> assign_shards(const dataset::DatasetLayout& layout,
                                         std::uint32_t count) {
  if (count == 0) throw std::invalid_argument("assign_shards: at least one shard");
  std::vector<std::size_t> order(layout.files.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return layout.files[a].size_bytes > layout.files[b].size_bytes;
  });
  std::vector<std::uint64_t> bytes(count, 0);
  std::vector<std::uint32_t> shard_of(layout.files.size(), 0);
  for (const std::size_t file : order) {
    const auto lightest =
        static_cast<std::uint32_t>(std::min_element(bytes.begin(), bytes.end()) - bytes.begin());
    shard_of[file] = lightest;
    bytes[lightest] += layout.files[file].size_bytes;
  }
  return shard_of;
}

std::vector<std::size_t> files_of_shard(const dataset::DatasetLayout& layout, ShardSpec shard) {
  const auto shard_of = assign_shards(layout, shard.count);
  std::vector<std::size_t> files;
  for (std::size_t i = 0; i < shard_of.size(); ++i)
    if (shard_of[i] == shard.index) files.push_back(i);
  return files;
}

}  // namespace headroom::preprocess
