#include "headroom/train/stages/tfidf_baseline.hpp"

#include <torch/torch.h>

#include <chrono>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "headroom/store/document_tfidf.hpp"
#include "headroom/util/printable_text.hpp"

namespace headroom::train {
namespace {

// One split's documents: their TF-IDF rows as a CSR tensor and their class ids.
struct LabelledDocuments {
  at::Tensor features;  // documents × vocabulary, sparse CSR, float32
  at::Tensor labels;    // int64
  std::vector<std::int32_t> label_ids;
};

// torch notes once per process, on stderr, that sparse CSR support is "in beta"; the products
// used here are its long-standing CSR × dense ones, so a text run's output is spared the note.
// Every other warning goes on to the handler that was installed.
class WithoutCsrBetaNote : public c10::WarningHandler {
 public:
  explicit WithoutCsrBetaNote(c10::WarningHandler* next) : next_(next) {}
  void process(const c10::Warning& warning) override {
    if (warning.msg().find("Sparse CSR tensor support is in beta") == std::string::npos)
      next_->process(warning);
  }

 private:
  c10::WarningHandler* next_;
};

at::Tensor csr_tensor(const store::DocumentTermRows& rows) {
  WithoutCsrBetaNote quiet(c10::WarningUtils::get_warning_handler());
  const c10::WarningUtils::WarningHandlerGuard guard(&quiet);
  return torch::sparse_csr_tensor(
      torch::tensor(rows.offsets, torch::kInt64), torch::tensor(rows.columns, torch::kInt64),
      torch::tensor(rows.values, torch::kFloat32),
      {static_cast<std::int64_t>(rows.num_rows()), static_cast<std::int64_t>(rows.num_columns)},
      torch::TensorOptions().dtype(torch::kFloat32));
}

LabelledDocuments documents_of(const store::NodeGraphStore& store, store::NodeSplit split) {
  const auto nodes = store.nodes_in(split);
  LabelledDocuments documents;
  documents.features = csr_tensor(store::document_tfidf(store, nodes));
  for (const auto node : nodes) documents.label_ids.push_back(store.node_label()[node]);
  documents.labels = torch::tensor(documents.label_ids, torch::kInt32).to(torch::kInt64);
  return documents;
}

struct LinearModel {
  at::Tensor weight;  // vocabulary × classes
  at::Tensor bias;    // classes

  at::Tensor logits(const at::Tensor& features) const { return torch::mm(features, weight) + bias; }
  LinearModel clone() const { return {weight.detach().clone(), bias.detach().clone()}; }
};

// Minimises mean cross-entropy + λ/2 ||W||² over the training documents by L-BFGS from the
// model's current weights. The gradient is written by hand (Xᵀ (softmax − Y) / n + λW): autograd
// through a sparse product would transpose X at every step, where `transposed` is built once.
void fit_l2(LinearModel& model, const LabelledDocuments& training, const at::Tensor& transposed,
            double l2, int max_iterations) {
  const auto count = static_cast<double>(training.labels.numel());
  const auto one_hot = torch::one_hot(training.labels, model.bias.size(0)).to(torch::kFloat32);
  torch::optim::LBFGS optimiser({model.weight, model.bias}, torch::optim::LBFGSOptions(1.0)
                                                                .max_iter(max_iterations)
                                                                .history_size(10)
                                                                .tolerance_grad(1e-5)
                                                                .tolerance_change(1e-9)
                                                                .line_search_fn("strong_wolfe"));
  optimiser.step([&] {
    const torch::NoGradGuard no_grad;
    const auto log_probabilities = torch::log_softmax(model.logits(training.features), 1);
    const auto loss =
        -(log_probabilities * one_hot).sum() / count + 0.5 * l2 * model.weight.square().sum();
    const auto residual = (log_probabilities.exp() - one_hot) / count;
    model.weight.mutable_grad() = torch::mm(transposed, residual) + l2 * model.weight;
    model.bias.mutable_grad() = residual.sum(0);
    return loss;
  });
}

std::vector<std::int32_t> predictions(const LinearModel& model, const at::Tensor& features) {
  const auto predicted = model.logits(features).argmax(1).to(torch::kInt32).contiguous();
  return {predicted.data_ptr<std::int32_t>(),
          predicted.data_ptr<std::int32_t>() + predicted.numel()};
}

eval::ClassMetrics metrics_of(const LinearModel& model, const LabelledDocuments& documents,
                              std::size_t classes) {
  return eval::class_metrics(documents.label_ids, predictions(model, documents.features), classes);
}

}  // namespace

TfidfBaselineResult fit_tfidf_baseline(const store::NodeGraphStore& store,
                                       const TfidfBaselineOptions& options) {
  const auto started = std::chrono::steady_clock::now();
  if (options.l2_strengths.empty())
    throw std::invalid_argument("tf-idf baseline: no L2 strength to try");
  const torch::NoGradGuard no_grad;
  std::map<std::string, LabelledDocuments> splits;
  for (const auto split :
       {store::NodeSplit::kTrain, store::NodeSplit::kValidation, store::NodeSplit::kTest})
    if (auto documents = documents_of(store, split); documents.labels.numel() > 0)
      splits.emplace(store::kNodeSplitNames[static_cast<std::size_t>(split)], std::move(documents));
  if (!splits.contains("train"))
    throw std::invalid_argument(fmt::format("{}: no training documents to fit the baseline on",
                                            util::printable_path(store.path())));
  const auto& training = splits.at("train");
  const auto classes = store.metadata().classes.size();
  const auto transposed = training.features.t().to_sparse_csr();
  LinearModel model{torch::zeros({training.features.size(1), static_cast<std::int64_t>(classes)},
                                 torch::requires_grad()),
                    torch::zeros({static_cast<std::int64_t>(classes)}, torch::requires_grad())};
  TfidfBaselineResult result;
  std::optional<LinearModel> best;
  double best_accuracy = -1;
  const auto validation = splits.find("validation");
  for (const auto l2 : options.l2_strengths) {
    fit_l2(model, training, transposed, l2, options.max_iterations);
    if (validation == splits.end()) {
      result.l2 = l2;
      best = model.clone();
      break;
    }
    const double accuracy = metrics_of(model, validation->second, classes).accuracy;
    result.validation_accuracy_by_l2.emplace_back(l2, accuracy);
    if (accuracy > best_accuracy) {  // a tie keeps the stronger penalty, tried first
      best_accuracy = accuracy;
      result.l2 = l2;
      best = model.clone();
    }
  }
  for (const auto& [name, documents] : splits)
    result.splits[name] = metrics_of(*best, documents, classes);
  result.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return result;
}

void to_json(nlohmann::json& json, const TfidfBaselineResult& result) {
  nlohmann::json tried = nlohmann::json::array();
  for (const auto& [l2, accuracy] : result.validation_accuracy_by_l2)
    tried.push_back({{"l2", l2}, {"accuracy", accuracy}});
  nlohmann::json splits = nlohmann::json::object();
  for (const auto& [name, metrics] : result.splits) splits[name] = metrics;
  json = {{"method", "tf-idf + logistic regression"},
          {"l2", result.l2},
          {"l2_chosen_by",
           tried.empty() ? "the first strength (no validation documents)" : "validation accuracy"},
          {"validation_accuracy_by_l2", tried},
          {"splits", splits}};
}

std::string describe_tfidf_baseline(const TfidfBaselineResult& result) {
  const auto how = fmt::format(
      "L2 {:g}{}; {:.1f} s", result.l2,
      result.validation_accuracy_by_l2.empty() ? "" : " chosen on the validation documents",
      result.seconds);
  const auto test = result.splits.find("test");
  if (test == result.splits.end()) return fmt::format("no test documents ({})", how);
  return fmt::format("test accuracy {:.4f}, macro-F1 {:.4f} on {} documents ({})",
                     test->second.accuracy, test->second.macro_f1, test->second.count, how);
}

}  // namespace headroom::train
