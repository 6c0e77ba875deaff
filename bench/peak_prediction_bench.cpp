// How well the planner predicts a training step's peak tensor memory. For every combination of
// model (GAT in stage normal, VGAE in stage autoencoder), size (teacher, student, and student
// distilled from a teacher), precision (fp32, bf16-mixed) and gradient checkpointing (on, off):
// the stage's step is prepared as the stage prepares it (train::prepare_stage: for a
// distilled student, its teacher output cache is built and the step runs the distillation loss),
// its peak fit is measured on the probe batches exactly as the stage does it
// (train::measure_step_peak, with the on-disk cache off), then the epoch-0 order of the stage's
// training graphs is packed by predicted bytes for every --budgets entry (at the default target
// utilisation), and the first --batches-per-budget packed batches are run as real training steps
// of that stage (fresh model and Adam, one warm-up step, then the measured step: forward, loss,
// backward, clipping, Adam) whose measured peak is compared with the prediction. The distilled
// students' teachers are freshly initialised checkpoints: their weights do not change the memory
// of the student's step.
//
// Usage: build/bin/peak_prediction_bench [--store DIR] [--budgets 128MiB,256MiB,512MiB,1GiB]
//        [--batches-per-budget 2] [--threads 2] [--families gat,vgae]
// One JSON line per measured batch goes to stdout after the tables.
#include <torch/torch.h>

#include <fmt/format.h>
#include <unistd.h>
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>

#include "bench_store.hpp"
#include "headroom/loader/epoch_order.hpp"
#include "headroom/memory/batch_packer.hpp"
#include "headroom/memory/tensor_memory_meter.hpp"
#include "headroom/train/batches/batch_sizing.hpp"
#include "headroom/train/families/model_checkpoint.hpp"
#include "headroom/train/families/model_family.hpp"
#include "headroom/train/pipeline/stage_registry.hpp"
#include "headroom/train/stages/autoencoder_stage.hpp"
#include "headroom/train/stages/classifier_stage.hpp"
#include "headroom/train/step/step_probe.hpp"
#include "headroom/util/byte_size.hpp"

namespace {

using namespace headroom;
using Clock = std::chrono::steady_clock;

struct Row {
  std::string model;
  double budget = 0;
  std::size_t batch = 0;
  std::uint64_t graphs = 0, nodes = 0, edges = 0;
  double predicted = 0, measured = 0;
  double error() const { return (predicted - measured) / measured; }
};

struct Variant {
  std::string family;  // gat (stage normal) or vgae (stage autoencoder)
  models::ModelSize size;
  bool distilled;
};

// A freshly initialised teacher of `family`, saved as a checkpoint a distilled stage can load.
std::filesystem::path write_teacher(const std::filesystem::path& dir, const std::string& family,
                                    const train::TrainingConfig& base,
                                    const models::ModelInputs& inputs) {
  train::TrainingConfig config = base;
  config.model.family = family;
  config.model.size = models::ModelSize::kTeacher;
  const auto& model_family = train::model_family(family);
  const auto model_config = model_family.resolve_config(config.model, inputs);
  const auto module = model_family.build(model_config);
  const auto file = dir / (family + "-teacher.pt");
  train::CheckpointInfo info;
  info.kind = family;
  info.model_config = model_config;
  train::save_model_checkpoint(file, *module, info);
  return file;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const auto n = values.size();
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("Predicted versus measured training-step peak over a grid of configurations");
  std::string store_path;
  std::vector<std::string> budget_texts = {"128MiB", "256MiB", "512MiB", "1GiB"};
  std::size_t batches_per_budget = 2;
  int threads = 2;
  std::vector<std::string> families = {"gat", "vgae"};
  app.add_option("--store", store_path, "Graph store (default: stores/hcrl_sa or synthetic)");
  app.add_option("--budgets", budget_texts, "Memory budgets")->delimiter(',');
  app.add_option("--batches-per-budget", batches_per_budget, "Packed batches measured per budget");
  app.add_option("--threads", threads, "Intra-op threads");
  app.add_option("--families", families,
                 "Model families to cover (gat: stage normal, vgae: "
                 "stage autoencoder)")
      ->delimiter(',')
      ->check(CLI::IsMember({"gat", "vgae"}));
  CLI11_PARSE(app, argc, argv);

  setenv("HEADROOM_CACHE_DIR", "off", 1);  // every fit is measured here, never read back
  memory::install_counting_cpu_allocator();
  memory::keep_freed_host_memory();
  torch::set_num_threads(threads);
  const std::filesystem::path store_dir =
      store_path.empty() ? bench::default_store() : std::filesystem::path(store_path);
  const auto store = store::GraphStore::open(store_dir);
  const auto inputs = train::model_inputs(store);
  const auto index = store.size_index();
  std::vector<double> budgets;
  for (const auto& text : budget_texts)
    budgets.push_back(static_cast<double>(util::parse_byte_size(text)));
  fmt::print("store {} ({} training graphs), {} threads\n", store_dir.string(),
             store.train_ids().size(), threads);

  const auto work_dir = std::filesystem::temp_directory_path() /
                        fmt::format("headroom-peak-bench-{}", static_cast<long>(getpid()));
  std::filesystem::create_directories(work_dir);
  train::TrainingConfig base;
  base.run.store = store_dir;
  base.run.runs_dir = work_dir / "runs";
  base.run.threads = threads;
  base.run.progress = false;
  base.optimisation.batch_size = 1 << 30;  // only the byte budget cuts batches
  const std::map<std::string, std::filesystem::path> teachers = {
      {"gat", write_teacher(work_dir, "gat", base, inputs)},
      {"vgae", write_teacher(work_dir, "vgae", base, inputs)}};

  std::vector<Row> rows;
  std::vector<nlohmann::json> fits;
  std::vector<Variant> variants;
  for (const auto& family : families)
    for (const auto& [size, distilled] : {std::pair{models::ModelSize::kTeacher, false},
                                          std::pair{models::ModelSize::kStudent, false},
                                          std::pair{models::ModelSize::kStudent, true}})
      variants.push_back({family, size, distilled});
  for (const auto& variant : variants)
    for (const std::string precision : {"32", "bf16-mixed"})
      for (const bool checkpointing : {true, false}) {
        train::TrainingConfig config = base;
        config.stage = variant.family == "vgae" ? train::Stage(train::kAutoencoderStage)
                                                : train::Stage(train::kNormalStage);
        config.model.family = variant.family;
        config.model.size = variant.size;
        config.distillation.enabled = variant.distilled;
        if (variant.distilled) config.distillation.teacher_path = teachers.at(variant.family);
        config.run.precision = precision;
        config.model.gradient_checkpointing =
            checkpointing ? train::Checkpointing::kOn : train::Checkpointing::kOff;
        const auto name =
            fmt::format("{} {}{} {} ckpt-{}", models::to_string(variant.size), variant.family,
                        variant.distilled ? " kd" : "", precision == "32" ? "fp32" : "bf16",
                        checkpointing ? "on" : "off");
        const auto prepared = train::prepare_stage(config);
        const auto step = prepared->probe_target();
        const auto probe_start = Clock::now();
        const auto context =
            train::resolve_run_context(config, store, train::CommandWork::kTraining);
        const auto measured =
            train::measure_step_peak(config, context, store, prepared->model(), step);
        const double probe_seconds =
            std::chrono::duration<double>(Clock::now() - probe_start).count();
        fits.push_back({{"model", name}, {"fit", measured.fit}, {"probe_seconds", probe_seconds}});

        const auto options = train::probe_options(config, context);
        const auto order = loader::shuffled(prepared->training_ids(), config.run.seed, 0);
        for (const double budget : budgets) {
          const auto packed = memory::pack_by_bytes(order, index.num_nodes, index.num_edges,
                                                    measured.fit.cost_model(),
                                                    config.memory.target_utilization * budget);
          for (std::size_t b = 0; b < std::min(batches_per_budget, packed.batches.size()); ++b) {
            const auto& batch = packed.batches[b];
            const auto sample = train::probe_step_peak(store, batch, step.make, options);
            Row row{name,
                    budget,
                    b,
                    sample.graphs,
                    sample.nodes,
                    sample.edges,
                    measured.fit.predict(sample.nodes, sample.edges, sample.graphs),
                    sample.peak_bytes};
            rows.push_back(row);
            fmt::print(
                "{:<30} budget {:>9}  batch {}  {:>5} graphs {:>7} nodes  predicted {:>10}"
                "  measured {:>10}  error {:+6.2f}%  ({:.0f}% of the budget)\n",
                name, util::format_byte_size(budget), b, row.graphs, row.nodes,
                util::format_byte_size(row.predicted), util::format_byte_size(row.measured),
                100.0 * row.error(), 100.0 * row.measured / budget);
            std::fflush(stdout);
          }
        }
      }
  std::filesystem::remove_all(work_dir);  // created above by this benchmark

  std::vector<double> absolute;
  for (const auto& row : rows) absolute.push_back(std::abs(row.error()));
  const auto worst = std::max_element(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
    return std::abs(a.error()) < std::abs(b.error());
  });
  fmt::print("\n{} measured batches over {} configurations x {} budgets\n", rows.size(),
             fits.size(), budgets.size());
  fmt::print("median |error| {:.2f}%   worst |error| {:.2f}% ({}, budget {}, batch {})\n",
             100.0 * median(absolute), 100.0 * std::abs(worst->error()), worst->model,
             util::format_byte_size(worst->budget), worst->batch);
  for (const auto& fit : fits) fmt::print("{}\n", fit.dump());
  for (const auto& row : rows)
    fmt::print("{}\n", nlohmann::json{{"model", row.model},
                                      {"budget_bytes", row.budget},
                                      {"batch", row.batch},
                                      {"graphs", row.graphs},
                                      {"nodes", row.nodes},
                                      {"edges", row.edges},
                                      {"predicted_bytes", row.predicted},
                                      {"measured_bytes", row.measured},
                                      {"relative_error", row.error()}}
                           .dump());
  return 0;
}
