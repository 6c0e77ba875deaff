#include "headroom/text/pair_counter.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <queue>
#include <stdexcept>
#include <system_error>

#include "headroom/util/file_writer.hpp"
#include "headroom/util/printable_text.hpp"

namespace headroom::text {
namespace {

constexpr std::size_t kMinEntries = 16;
// Runs one merge reads at once: beyond it, runs are first merged in groups into longer runs,
// which keeps open files and read buffers bounded however small the memory bound is.
constexpr std::size_t kMaxFanIn = 64;

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

// Reads a run file sequentially through a fixed buffer.
class RunReader {
 public:
  RunReader(const std::filesystem::path& path, std::size_t buffer_entries)
      : path_(path), file_(std::fopen(path.c_str(), "rb")), buffer_(buffer_entries) {
    if (!file_)
      throw std::system_error(errno, std::generic_category(),
                              fmt::format("cannot open '{}'", util::printable_path(path)));
    refill();
  }
  bool done() const { return at_ == size_; }
  const KeyCount& current() const { return buffer_[at_]; }
  void next() {
    if (++at_ == size_) refill();
  }

 private:
  void refill() {
    size_ = std::fread(buffer_.data(), sizeof(KeyCount), buffer_.size(), file_.get());
    at_ = 0;
    if (size_ == 0 && std::ferror(file_.get()))
      throw std::system_error(errno, std::generic_category(),
                              fmt::format("cannot read '{}'", util::printable_path(path_)));
  }
  std::filesystem::path path_;
  std::unique_ptr<std::FILE, FileCloser> file_;
  std::vector<KeyCount> buffer_;
  std::size_t size_ = 0;
  std::size_t at_ = 0;
};

// Sorts entries[0, count) by key and sums equal keys into one entry; returns the new count.
std::size_t sort_and_sum(KeyCount* entries, std::size_t count) {
  std::sort(entries, entries + count,
            [](const KeyCount& a, const KeyCount& b) { return a.key < b.key; });
  std::size_t out = 0;
  for (std::size_t i = 0; i < count; ++i) {
    if (out > 0 && entries[out - 1].key == entries[i].key)
      entries[out - 1].count += entries[i].count;
    else
      entries[out++] = entries[i];
  }
  return out;
}

// k-way merge of sorted runs (keys distinct within each), summing equal keys across them.
void merge_runs(const std::vector<std::filesystem::path>& runs, std::size_t buffer_entries,
                const std::function<void(std::uint64_t, std::uint64_t)>& visit) {
  std::vector<RunReader> readers;
  readers.reserve(runs.size());
  for (const auto& run : runs) readers.emplace_back(run, buffer_entries);
  using Head = std::pair<std::uint64_t, std::size_t>;  // (key, reader)
  std::priority_queue<Head, std::vector<Head>, std::greater<>> heads;
  for (std::size_t r = 0; r < readers.size(); ++r)
    if (!readers[r].done()) heads.emplace(readers[r].current().key, r);
  while (!heads.empty()) {
    const std::uint64_t key = heads.top().first;
    std::uint64_t total = 0;
    while (!heads.empty() && heads.top().first == key) {
      const std::size_t r = heads.top().second;
      heads.pop();
      total += readers[r].current().count;
      readers[r].next();
      if (!readers[r].done()) heads.emplace(readers[r].current().key, r);
    }
    visit(key, total);
  }
}

}  // namespace

ExternalPairCounter::Producer::Producer(ExternalPairCounter& owner, std::size_t capacity)
    : owner_(owner), buffer_(capacity) {}

void ExternalPairCounter::Producer::compact() { used_ = sort_and_sum(buffer_.data(), used_); }

void ExternalPairCounter::Producer::make_room() {
  compact();
  if (used_ > buffer_.size() / 2) {
    owner_.write_run(buffer_.data(), used_);
    used_ = 0;
  }
}

ExternalPairCounter::ExternalPairCounter(std::size_t memory_bytes, unsigned producers,
                                         std::filesystem::path run_prefix)
    : memory_bytes_(memory_bytes), run_prefix_(std::move(run_prefix)) {
  if (producers == 0) throw std::invalid_argument("ExternalPairCounter: no producer");
  const std::size_t capacity = std::max(kMinEntries, memory_bytes / producers / sizeof(KeyCount));
  for (unsigned i = 0; i < producers; ++i)
    producers_.push_back(std::unique_ptr<Producer>(new Producer(*this, capacity)));
}

ExternalPairCounter::~ExternalPairCounter() {
  std::error_code ec;
  for (const auto& run : runs_) std::filesystem::remove(run, ec);
}

std::filesystem::path ExternalPairCounter::write_run(const KeyCount* entries, std::size_t count) {
  std::filesystem::path path;
  {
    std::lock_guard lock(runs_mutex_);
    path = run_prefix_;
    path += fmt::format("-{}", next_run_++);
  }
  util::ChecksummedFileWriter writer(path, 1 << 20, /*compute_checksum=*/false);
  writer.write_values(std::span<const KeyCount>(entries, count));
  writer.close(/*durable=*/false);
  std::lock_guard lock(runs_mutex_);
  runs_.push_back(path);
  ++statistics_.runs_written;
  statistics_.bytes_written += count * sizeof(KeyCount);
  return path;
}

void ExternalPairCounter::merge(
    const std::function<void(std::uint64_t key, std::uint64_t count)>& visit) {
  for (auto& producer : producers_) producer->compact();
  statistics_.added = 0;
  for (const auto& producer : producers_) statistics_.added += producer->added_;
  if (runs_.empty()) {
    // Everything fitted: merge the buffers in memory.
    std::vector<KeyCount> all;
    for (auto& producer : producers_) {
      all.insert(all.end(), producer->buffer_.begin(),
                 producer->buffer_.begin() + static_cast<std::ptrdiff_t>(producer->used_));
      producer->buffer_ = {};
      producer->used_ = 0;
    }
    all.resize(sort_and_sum(all.data(), all.size()));
    for (const auto& entry : all) visit(entry.key, entry.count);
    return;
  }
  // Spill what is left, free the buffers, then merge from disk with the memory they held.
  for (auto& producer : producers_) {
    if (producer->used_ > 0) write_run(producer->buffer_.data(), producer->used_);
    producer->buffer_ = {};
    producer->used_ = 0;
  }
  while (runs_.size() > kMaxFanIn) {
    ++statistics_.merge_passes;
    std::vector<std::filesystem::path> group(runs_.begin(), runs_.begin() + kMaxFanIn);
    runs_.erase(runs_.begin(), runs_.begin() + kMaxFanIn);
    const std::size_t buffer_entries =
        std::max(kMinEntries, memory_bytes_ / 2 / (kMaxFanIn + 1) / sizeof(KeyCount));
    std::filesystem::path merged;
    {
      std::lock_guard lock(runs_mutex_);
      merged = run_prefix_;
      merged += fmt::format("-{}", next_run_++);
    }
    util::ChecksummedFileWriter writer(merged, buffer_entries * sizeof(KeyCount), false);
    merge_runs(group, buffer_entries, [&](std::uint64_t key, std::uint64_t count) {
      const KeyCount entry{key, count};
      writer.write_values(std::span<const KeyCount>(&entry, 1));
    });
    writer.close(false);
    ++statistics_.runs_written;
    statistics_.bytes_written += writer.bytes_written();
    for (const auto& run : group) std::filesystem::remove(run);
    runs_.push_back(merged);
  }
  const std::size_t buffer_entries =
      std::max(kMinEntries, memory_bytes_ / runs_.size() / sizeof(KeyCount));
  merge_runs(runs_, buffer_entries, visit);
  for (const auto& run : runs_) std::filesystem::remove(run);
  runs_.clear();
}

PairCounterStatistics ExternalPairCounter::statistics() const { return statistics_; }

}  // namespace headroom::text
