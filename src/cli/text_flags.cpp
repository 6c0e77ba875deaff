#include "headroom/cli/text_flags.hpp"

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <stdexcept>

#include "headroom/store/node_graph_store.hpp"
#include "headroom/store/node_graph_summary.hpp"
#include "headroom/util/byte_size.hpp"
#include "headroom/util/printable_text.hpp"

namespace headroom::cli {

void TextFlags::add_to(CLI::App& command) {
  const std::string group(kTextFlagsGroup);
  command
      .add_option("--text-source", source,
                  "Which corpus file: auto (corpus.clean.txt when present, else corpus.txt), raw "
                  "(corpus.txt, cleaned here) or clean (corpus.clean.txt, taken as cleaned)")
      ->check(CLI::IsMember({"auto", "raw", "clean"}))
      ->capture_default_str()
      ->group(group);
  command
      .add_option("--text-stop-words", stop_words,
                  "English stop words: auto (removed from a raw corpus of long documents, kept "
                  "for short texts and cleaned files), remove or keep")
      ->check(CLI::IsMember({"auto", "remove", "keep"}))
      ->capture_default_str()
      ->group(group);
  command
      .add_option("--text-min-count", min_count,
                  "Drop words seen fewer times in the corpus (0: 5 where stop words are removed, "
                  "else 1)")
      ->capture_default_str()
      ->group(group);
  command.add_option("--text-window", window, "Words per sliding window for word-word PMI")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 20))
      ->capture_default_str()
      ->group(group);
  command
      .add_option("--text-count-memory", count_memory,
                  "Memory for counting word pairs; beyond it, sorted runs spill to disk")
      ->capture_default_str()
      ->group(group);
}

text::TextGraphOptions TextFlags::resolve(const preprocess::PreprocessOptions& shared,
                                          bool validation_fraction_given) const {
  text::TextGraphOptions o;
  o.source = source == "raw"     ? text::CorpusSource::kRaw
             : source == "clean" ? text::CorpusSource::kClean
                                 : text::CorpusSource::kAuto;
  o.stop_words = stop_words == "remove" ? text::StopWords::kRemove
                 : stop_words == "keep" ? text::StopWords::kKeep
                                        : text::StopWords::kAuto;
  if (min_count > 0) o.min_count = min_count;
  o.window = window;
  std::int64_t bytes = 0;
  try {
    bytes = util::parse_byte_size(count_memory);
  } catch (const std::invalid_argument& e) {  // it names the value, not the flag
    throw std::invalid_argument(std::string("--text-count-memory: ") + e.what());
  }
  if (bytes < (1 << 20))
    throw std::invalid_argument("--text-count-memory must be at least 1MiB, not '" +
                                util::printable(count_memory) + "'");
  o.count_memory_bytes = static_cast<std::size_t>(bytes);
  if (validation_fraction_given) o.validation_fraction = shared.validation_fraction;
  o.seed = shared.seed;
  o.threads = shared.threads;
  o.overwrite = shared.overwrite;
  o.when_locked = shared.when_locked;
  return o;
}

void build_text_graph_and_summarize(const std::filesystem::path& corpus,
                                    const std::filesystem::path& store,
                                    const text::TextGraphOptions& options) {
  const auto report = text::build_text_graph_store(corpus, store, options);
  for (const auto& line : report.summary_lines()) fmt::print("{}\n", line);
  fmt::print("built the graph in {:.2f} s\n", report.seconds);
  fmt::print("{}", store::render_node_graph_summary(
                       store::summarize_node_graph(store::NodeGraphStore::open(store))));
}

}  // namespace headroom::cli
