// The flags only a text corpus reads (text/text_graph_builder.hpp), shared by `headroom
// preprocess` and `headroom run`; --threads, --seed, --val-fraction, --force and --wait-for-lock
// come from the shared preprocess flags (preprocess_flags.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "headroom/preprocess/preprocessor.hpp"
#include "headroom/text/text_graph_builder.hpp"

namespace CLI {
class App;
}

namespace headroom::cli {

// The help group of the text-corpus flags (run adds its own to it).
inline constexpr std::string_view kTextFlagsGroup =
    "Text corpora (labels.tsv + corpus.txt / corpus.clean.txt)";

// Binds the flags to its fields; call resolve() after parsing.
struct TextFlags {
  std::string source = "auto";
  std::string stop_words = "auto";
  std::uint32_t min_count = 0;  // 0: the default that goes with the stop-word decision
  std::size_t window = 20;
  std::string count_memory = "128MiB";

  void add_to(CLI::App& command);
  // The builder's options; the shared ones from `shared` (the validation fraction only when
  // --val-fraction was given: a text corpus's default is TextGCN's 10%). Throws
  // std::invalid_argument on a bad value.
  text::TextGraphOptions resolve(const preprocess::PreprocessOptions& shared,
                                 bool validation_fraction_given) const;
};

// Builds the node-graph store of `corpus`, then prints what the builder found and the store's
// summary: what `preprocess` and `run` show for a text corpus.
void build_text_graph_and_summarize(const std::filesystem::path& corpus,
                                    const std::filesystem::path& store,
                                    const text::TextGraphOptions& options);

}  // namespace headroom::cli
