// The classical baseline of a text corpus's evaluation: multinomial logistic regression on the
// documents' TF-IDF vectors (store/document_tfidf.hpp), on the split stage `node` trains and
// evaluates on — fitted to the training documents, its L2 strength chosen by accuracy on the
// validation documents, scored on every split. A graph model that does not beat it has not
// earned its graph. Deterministic for a given store and thread count: full-batch L-BFGS from
// zero weights, every product a row-parallel sparse-dense product with no atomics.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "headroom/eval/class_metrics.hpp"
#include "headroom/store/node_graph_store.hpp"

namespace headroom::train {

struct TfidfBaselineOptions {
  // Strengths λ of the penalty λ/2 · ||W||² beside the mean cross-entropy (the bias is not
  // penalised), tried from the first, each fit starting from the previous one's weights. The
  // first is kept when the store has no validation documents.
  std::vector<double> l2_strengths = {1e-3, 1e-4, 1e-5, 1e-6};
  int max_iterations = 500;  // L-BFGS iterations per strength
};

struct TfidfBaselineResult {
  double l2 = 0;  // the strength chosen
  // Validation accuracy per strength tried, in the order tried.
  std::vector<std::pair<double, double>> validation_accuracy_by_l2;
  // The chosen fit's metrics by split name ("train", "validation", "test"; a split without
  // documents is absent).
  std::map<std::string, eval::ClassMetrics> splits;
  double seconds = 0;  // wall time of the whole fit, TF-IDF read-back included
};

// Fits and scores the baseline on a text corpus's store (store::holds_documents_and_words).
// Runs on the CPU with torch's intra-op threads; memory: the documents' TF-IDF rows twice (as
// rows and transposed) and about 25 copies of the weights (vocabulary × classes floats: L-BFGS's
// history). Throws std::invalid_argument when the store holds no documents and words or no
// training documents.
TfidfBaselineResult fit_tfidf_baseline(const store::NodeGraphStore& store,
                                       const TfidfBaselineOptions& options = {});

// {"method", "l2", "l2_chosen_by", "validation_accuracy_by_l2", "splits"} (no timing, so that
// the same store gives the same document).
void to_json(nlohmann::json& json, const TfidfBaselineResult& result);

// How runs name the baseline beside the model.
inline constexpr std::string_view kTfidfBaselineName = "baseline tf-idf+lr";

// "test accuracy 0.9708, macro-F1 0.9301 on 2189 documents (L2 1e-06 chosen on the validation
// documents; 0.5 s)": what runs print after kTfidfBaselineName.
std::string describe_tfidf_baseline(const TfidfBaselineResult& result);

}  // namespace headroom::train
