#include "scored_model.hpp"

#include <fmt/format.h>
#include <algorithm>

namespace headroom::train::detail {
namespace {

// A CSV field (RFC 4180): quoted, quotes doubled, when it holds a comma, quote or line break (file
// names may).
std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (const char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

}  // namespace

std::string scores_csv(const store::GraphStore& store, std::span<const std::uint32_t> ids,
                       const ScoredModel& scored) {
  const auto index = store.size_index();
  const auto& metadata = store.metadata();
  std::vector<std::uint32_t> validation(store.validation_ids().begin(),
                                        store.validation_ids().end());
  std::sort(validation.begin(), validation.end());
  std::string out = "graph,split,file,window,label,attack_type,score";
  out += scored.adapted_scores.empty() ? "\n" : ",label_free_score\n";
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const auto g = ids[i];
    const bool validates = std::binary_search(validation.begin(), validation.end(), g);
    out += fmt::format(
        "{},{},{},{},{},{},{:.9g}", g,
        validates ? std::string("validation") : csv_field(metadata.splits.at(index.split[g]).name),
        csv_field(metadata.files.at(index.file[g]).path), index.window[g], index.label[g],
        csv_field(metadata.attack_types.at(index.attack_type[g])), scored.scores[i]);
    if (!scored.adapted_scores.empty()) out += fmt::format(",{:.9g}", scored.adapted_scores[i]);
    out += '\n';
  }
  return out;
}

}  // namespace headroom::train::detail
