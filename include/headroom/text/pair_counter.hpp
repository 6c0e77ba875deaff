// Counting (key, count) pairs in bounded memory: word co-occurrences, where a V x V matrix (20
// Newsgroups: 42,757^2 x 4 B = 7.3 GB) or a hash map of every pair seen would grow with the corpus.
// Each producer (one per thread) fills a fixed-size buffer; a full buffer is sorted and its equal
// keys summed in place; when that frees less than half of it, the buffer goes to disk as a sorted
// run and starts again. merge() then visits every distinct key once, ascending, with its total:
// a k-way merge of the runs (in several passes when there are many).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace headroom::text {

struct KeyCount {
  std::uint64_t key = 0;
  std::uint64_t count = 0;
};

// The key of an ordered word pair: sorting keys sorts by (first, second).
constexpr std::uint64_t pair_key(std::uint32_t first, std::uint32_t second) {
  return (std::uint64_t{first} << 32) | second;
}
constexpr std::uint32_t pair_first(std::uint64_t key) {
  return static_cast<std::uint32_t>(key >> 32);
}
constexpr std::uint32_t pair_second(std::uint64_t key) { return static_cast<std::uint32_t>(key); }

struct PairCounterStatistics {
  std::uint64_t added = 0;         // add() calls
  std::uint64_t runs_written = 0;  // sorted runs spilled to disk (merge passes' included)
  std::uint64_t bytes_written = 0;
  std::uint64_t merge_passes = 0;  // intermediate passes (more runs than one merge reads)
};

// Thread-safety: producer(i) is used by one thread at a time; distinct producers concurrently.
// finish() and merge() run on one thread after every producer is done.
class ExternalPairCounter {
 public:
  // `memory_bytes` bounds the buffers of all producers together during counting, and the read
  // buffers during merging (at least 16 entries each, so a tiny bound still works: it spills
  // often). Run files are `run_prefix` + "-<n>" (the directory must exist); the counter deletes
  // them as they are consumed, and in its destructor.
  ExternalPairCounter(std::size_t memory_bytes, unsigned producers,
                      std::filesystem::path run_prefix);
  ~ExternalPairCounter();
  ExternalPairCounter(const ExternalPairCounter&) = delete;
  ExternalPairCounter& operator=(const ExternalPairCounter&) = delete;

  class Producer {
   public:
    void add(std::uint64_t key, std::uint64_t count) {
      if (used_ == buffer_.size()) make_room();
      buffer_[used_++] = {key, count};
      ++added_;
    }

   private:
    friend class ExternalPairCounter;
    explicit Producer(ExternalPairCounter& owner, std::size_t capacity);
    void make_room();
    void compact();  // sort, sum equal keys

    ExternalPairCounter& owner_;
    std::vector<KeyCount> buffer_;
    std::size_t used_ = 0;
    std::uint64_t added_ = 0;
  };

  Producer& producer(unsigned index) { return *producers_.at(index); }

  // Calls `visit(key, total)` for every distinct key, ascending. Call once, after every producer
  // is done.
  void merge(const std::function<void(std::uint64_t key, std::uint64_t count)>& visit);

  PairCounterStatistics statistics() const;

 private:
  std::filesystem::path write_run(const KeyCount* entries, std::size_t count);

  std::size_t memory_bytes_;
  std::filesystem::path run_prefix_;
  std::vector<std::unique_ptr<Producer>> producers_;
  std::mutex runs_mutex_;                    // producers spill concurrently
  std::vector<std::filesystem::path> runs_;  // sorted, keys distinct within each
  std::uint64_t next_run_ = 0;
  PairCounterStatistics statistics_;
};

}  // namespace headroom::text
