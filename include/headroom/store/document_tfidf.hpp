// The TF-IDF vectors of a text corpus's documents, read back from its node-graph store
// (text/text_graph_builder.hpp), for the classical text baseline (a linear classifier on them,
// train/stages/tfidf_baseline.hpp). The store keeps no documents, only TextGCN's normalised
// graph Â = D^-1/2 (A + I) D^-1/2, whose document-word entries are TF-IDF / sqrt(deg(d) deg(w))
// and whose self-loops are 1 / deg: so TF-IDF(d, w) = Â(d, w) / sqrt(Â(d, d) Â(w, w)), exactly,
// up to float32 rounding. No torch; plain functions, safe to call concurrently.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "headroom/store/node_graph_store.hpp"

namespace headroom::store {

// Rows of a sparse matrix in compressed sparse rows: row r's entries are
// columns[offsets[r] .. offsets[r + 1]) (ascending) with their values beside them.
struct DocumentTermRows {
  std::vector<std::int64_t> offsets = {0};  // num_rows() + 1
  std::vector<std::int64_t> columns;
  std::vector<float> values;
  std::size_t num_columns = 0;

  std::size_t num_rows() const { return offsets.size() - 1; }
};

// Whether the store's nodes are documents and words (the node kinds a text corpus's graph has).
bool holds_documents_and_words(const NodeGraphStore& store);

// One row per node of `documents` (in that order): its TF-IDF over the vocabulary, scaled to unit
// Euclidean length (a document with no word of non-zero idf keeps an empty row). Column j is the
// j-th word node in node order (the store's vocabulary is sorted, so word j is the j-th word of
// it). Words in every document (idf 0) have no edge and so no column entries. Memory: the rows
// plus 12 bytes per node. Throws std::invalid_argument when the store's nodes are not documents
// and words, a listed node is not a document, or a node the rows read has no self-loop.
DocumentTermRows document_tfidf(const NodeGraphStore& store,
                                std::span<const std::uint32_t> documents);

}  // namespace headroom::store
