// A small text corpus whose classes have their own words, and its node-graph store: the node
// task's tests train on it, and planning probes it.
#pragma once

#include <fmt/format.h>

#include <filesystem>
#include <random>
#include <string>

#include "headroom/text/text_graph_builder.hpp"
#include "test_support.hpp"

namespace headroom::testing {

// A cleaned corpus of `classes` classes, `per_class` documents each: every document draws 60% of
// its 30 words from its class's own 12 words and the rest from 40 words all classes share. Every
// fourth document is a test document.
inline void write_separable_corpus(const std::filesystem::path& dir, int classes, int per_class) {
  std::mt19937 random(7);
  std::string labels = "index\tsplit\tlabel\n";
  std::string corpus;
  for (int d = 0; d < classes * per_class; ++d) {
    const int label = d % classes;
    labels += fmt::format("doc{}\t{}\tclass{}\n", d, d % 4 == 3 ? "test" : "train", label);
    for (int w = 0; w < 30; ++w) {
      if (w > 0) corpus += ' ';
      // Drawn in this order so that the corpus is the same whatever the compiler.
      const bool own = random() % 10 < 6;
      const auto word = random();
      corpus += own ? fmt::format("c{}w{}", label, word % 12) : fmt::format("shared{}", word % 40);
    }
    corpus += '\n';
  }
  write_text_file(dir / "labels.tsv", labels);
  write_text_file(dir / "corpus.clean.txt", corpus);
}

// The corpus's node-graph store in `dir`/store (the corpus in `dir`/corpus), 20% of the
// training documents held out for validation.
inline std::filesystem::path build_separable_store(const std::filesystem::path& dir, int classes,
                                                   int per_class) {
  write_separable_corpus(dir / "corpus", classes, per_class);
  text::TextGraphOptions options;
  options.threads = 2;
  options.validation_fraction = 0.2;
  text::build_text_graph_store(dir / "corpus", dir / "store", options);
  return dir / "store";
}

}  // namespace headroom::testing
