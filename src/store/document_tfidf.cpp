#include "headroom/store/document_tfidf.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <stdexcept>
#include <string_view>

#include <fmt/format.h>

#include "headroom/util/printable_text.hpp"

namespace headroom::store {
namespace {

std::optional<std::uint8_t> kind_named(const NodeGraphStore& store, std::string_view name) {
  const auto& kinds = store.metadata().node_kinds;
  const auto found = std::find(kinds.begin(), kinds.end(), name);
  if (found == kinds.end()) return std::nullopt;
  return static_cast<std::uint8_t>(found - kinds.begin());
}

// Every node's column in the vocabulary: the word nodes numbered in node order, -1 elsewhere.
std::vector<std::int32_t> word_columns(const NodeGraphStore& store, std::uint8_t word_kind,
                                       std::size_t& vocabulary) {
  const auto kinds = store.node_kind();
  std::vector<std::int32_t> columns(kinds.size(), -1);
  vocabulary = 0;
  for (std::size_t node = 0; node < kinds.size(); ++node)
    if (kinds[node] == word_kind) columns[node] = static_cast<std::int32_t>(vocabulary++);
  return columns;
}

// Â(node, node) = 1 / deg(node); its columns are ascending, so a binary search finds it.
double self_loop_weight(const NodeGraphStore& store, std::uint32_t node) {
  const auto begin = store.column_index().begin() + store.row_offsets()[node];
  const auto end = store.column_index().begin() + store.row_offsets()[node + 1];
  const auto found = std::lower_bound(begin, end, static_cast<std::int32_t>(node));
  if (found == end || *found != static_cast<std::int32_t>(node) ||
      !(store.edge_weight()[static_cast<std::size_t>(found - store.column_index().begin())] > 0))
    throw std::invalid_argument(
        fmt::format("{}: node {} has no positive self-loop, so its TF-IDF cannot be read back",
                    util::printable_path(store.path()), node));
  return store.edge_weight()[static_cast<std::size_t>(found - store.column_index().begin())];
}

}  // namespace

bool holds_documents_and_words(const NodeGraphStore& store) {
  return kind_named(store, "document") && kind_named(store, "word");
}

DocumentTermRows document_tfidf(const NodeGraphStore& store,
                                std::span<const std::uint32_t> documents) {
  const auto document_kind = kind_named(store, "document");
  const auto word_kind = kind_named(store, "word");
  if (!document_kind || !word_kind)
    throw std::invalid_argument(fmt::format(
        "{}: its nodes are not documents and words (a text corpus's graph), so it holds no TF-IDF",
        util::printable_path(store.path())));
  DocumentTermRows rows;
  const auto columns = word_columns(store, *word_kind, rows.num_columns);
  // Â(w, w) of every word, looked up once (a word is in many documents' rows); -1: not yet.
  std::vector<double> word_self(rows.num_columns, -1.0);
  const auto offsets = store.row_offsets();
  for (const auto document : documents) {
    if (document >= store.num_nodes() || store.node_kind()[document] != *document_kind)
      throw std::invalid_argument(fmt::format("{}: node {} is not a document",
                                              util::printable_path(store.path()), document));
    const double document_self = self_loop_weight(store, document);
    const auto row_begin = rows.columns.size();
    double squared_length = 0;
    for (auto entry = offsets[document]; entry < offsets[document + 1]; ++entry) {
      const auto node = static_cast<std::uint32_t>(store.column_index()[entry]);
      const auto column = columns[node];
      if (column < 0) continue;
      auto& self = word_self[static_cast<std::size_t>(column)];
      if (self < 0) self = self_loop_weight(store, node);
      const double tfidf = store.edge_weight()[entry] / std::sqrt(document_self * self);
      rows.columns.push_back(column);
      rows.values.push_back(static_cast<float>(tfidf));
      squared_length += tfidf * tfidf;
    }
    // Unit length: a long document and a short one on the same topic get the same direction.
    const double scale = squared_length > 0 ? 1.0 / std::sqrt(squared_length) : 0.0;
    for (auto entry = row_begin; entry < rows.values.size(); ++entry)
      rows.values[entry] = static_cast<float>(rows.values[entry] * scale);
    rows.offsets.push_back(static_cast<std::int64_t>(rows.columns.size()));
  }
  return rows;
}

}  // namespace headroom::store
