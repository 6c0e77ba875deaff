#include "headroom/text/sliding_windows.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <thread>
#include <vector>

#include "headroom/util/split_mix.hpp"
#include "test_support.hpp"

namespace headroom::text {
namespace {

using PairCounts = std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint64_t>;

struct Counted {
  std::uint64_t windows = 0;
  std::vector<std::uint64_t> word_windows;
  PairCounts pairs;
  PairCounterStatistics statistics;
};

// The counter under test: documents dealt to `producers` threads.
Counted count_with_counter(const std::vector<std::vector<std::uint32_t>>& documents,
                           std::size_t vocabulary, std::size_t window, std::size_t memory,
                           unsigned producers, const std::filesystem::path& scratch) {
  Counted out;
  ExternalPairCounter counter(memory, producers, scratch / "runs");
  std::vector<std::vector<std::uint64_t>> word_windows(producers,
                                                       std::vector<std::uint64_t>(vocabulary));
  std::vector<std::uint64_t> windows(producers, 0);
  std::vector<std::thread> threads;
  for (unsigned p = 0; p < producers; ++p)
    threads.emplace_back([&, p] {
      for (std::size_t d = p; d < documents.size(); d += producers)
        windows[p] += count_windows(documents[d], window, word_windows[p], counter.producer(p));
    });
  for (auto& thread : threads) thread.join();
  out.word_windows.assign(vocabulary, 0);
  for (unsigned p = 0; p < producers; ++p) {
    out.windows += windows[p];
    for (std::size_t w = 0; w < vocabulary; ++w) out.word_windows[w] += word_windows[p][w];
  }
  std::uint64_t previous = 0;
  bool first = true;
  counter.merge([&](std::uint64_t key, std::uint64_t count) {
    EXPECT_TRUE(first || key > previous) << "keys must come ascending, each once";
    first = false;
    previous = key;
    out.pairs[{pair_first(key), pair_second(key)}] = count;
  });
  out.statistics = counter.statistics();
  return out;
}

// The definition, window by window: the distinct words of each window, every ordered pair of them.
Counted count_naively(const std::vector<std::vector<std::uint32_t>>& documents,
                      std::size_t vocabulary, std::size_t window) {
  Counted out;
  out.word_windows.assign(vocabulary, 0);
  for (const auto& document : documents) {
    if (document.empty()) continue;
    const std::size_t span = std::min(window, document.size());
    for (std::size_t start = 0; start + span <= document.size(); ++start) {
      const std::set<std::uint32_t> distinct(
          document.begin() + static_cast<std::ptrdiff_t>(start),
          document.begin() + static_cast<std::ptrdiff_t>(start + span));
      ++out.windows;
      for (const auto a : distinct) {
        ++out.word_windows[a];
        for (const auto b : distinct)
          if (a != b) ++out.pairs[{a, b}];
      }
    }
  }
  return out;
}

std::vector<std::vector<std::uint32_t>> random_corpus(std::uint64_t seed, std::size_t documents,
                                                      std::size_t vocabulary) {
  util::SplitMix64 random(seed);
  std::vector<std::vector<std::uint32_t>> corpus(documents);
  for (auto& document : corpus) {
    // Lengths around the window (shorter, equal, longer) and a skewed word distribution, so that
    // words repeat inside windows as in text.
    document.resize(random.below(60));
    for (auto& word : document) {
      const auto a = random.below(vocabulary);
      word = static_cast<std::uint32_t>(std::min(a, random.below(vocabulary)));
    }
  }
  corpus.push_back({});  // an empty document has no window
  return corpus;
}

TEST(SlidingWindows, HandCountedDocument) {
  // Words 0 1 0 2, windows of 2: {0,1} {1,0} {0,2}.
  const std::vector<std::vector<std::uint32_t>> documents = {{0, 1, 0, 2}};
  testing::TempDir dir;
  const Counted counted = count_with_counter(documents, 3, 2, 1 << 20, 1, dir.path());
  EXPECT_EQ(counted.windows, 3U);
  EXPECT_EQ(counted.word_windows, (std::vector<std::uint64_t>{3, 2, 1}));
  const PairCounts expected = {{{0, 1}, 2}, {{1, 0}, 2}, {{0, 2}, 1}, {{2, 0}, 1}};
  EXPECT_EQ(counted.pairs, expected);  // (1, 2) never share a window: absent
}

TEST(SlidingWindows, ShortDocumentIsOneWindow) {
  const std::vector<std::vector<std::uint32_t>> documents = {{4, 4, 1}};
  testing::TempDir dir;
  const Counted counted = count_with_counter(documents, 5, 20, 1 << 20, 1, dir.path());
  EXPECT_EQ(counted.windows, 1U);
  EXPECT_EQ(counted.word_windows, (std::vector<std::uint64_t>{0, 1, 0, 0, 1}));
  EXPECT_EQ(counted.pairs, (PairCounts{{{1, 4}, 1}, {{4, 1}, 1}}));
}

TEST(ExternalPairCounter, MatchesNaiveCountOnRandomCorpus) {
  const auto corpus = random_corpus(11, 300, 40);
  const Counted naive = count_naively(corpus, 40, 20);
  testing::TempDir dir;
  const Counted counted = count_with_counter(corpus, 40, 20, 64 << 20, 2, dir.path());
  EXPECT_EQ(counted.statistics.runs_written, 0U) << "64 MiB holds this corpus in memory";
  EXPECT_EQ(counted.windows, naive.windows);
  EXPECT_EQ(counted.word_windows, naive.word_windows);
  EXPECT_EQ(counted.pairs, naive.pairs);
}

TEST(ExternalPairCounter, MatchesNaiveCountWhenSpillingWithATinyMemoryBound) {
  const auto corpus = random_corpus(12, 400, 300);
  const Counted naive = count_naively(corpus, 300, 20);
  testing::TempDir dir;
  // 1 KiB: 32 entries per producer, so runs spill constantly and the merge needs passes.
  const Counted counted = count_with_counter(corpus, 300, 20, 1024, 2, dir.path());
  EXPECT_GT(counted.statistics.runs_written, 64U);
  EXPECT_GT(counted.statistics.merge_passes, 0U);
  EXPECT_EQ(counted.windows, naive.windows);
  EXPECT_EQ(counted.word_windows, naive.word_windows);
  EXPECT_EQ(counted.pairs, naive.pairs);
  EXPECT_TRUE(std::filesystem::is_empty(dir.path())) << "every run file is deleted after merging";
}

}  // namespace
}  // namespace headroom::text
