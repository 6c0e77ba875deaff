// Training throughput (graphs/s), peak tensor memory and batch wait, for the GAT and VGAE
// teacher and student presets at several batch sizes, on CPU (or --device cuda). Each case runs
// in a forked child so that its memory peak is its own. A case trains for at most --batches
// batches of one shuffled epoch (after one warm-up batch) with the real training step: forward,
// loss, backward, gradient clipping, Adam.
//
// Usage: build/bin/training_bench [--store DIR] [--batch-sizes 256,1024,4096] [--batches 12]
//        [--threads 2] [--device cpu] [--checkpointing true] [--precision 32]
//        [--attention fused,reference] [--keep-freed true]
// With both attention variants, each batch size runs them back to back (an A/B in one run).
// Default store: stores/hcrl_sa when present, else the synthetic default (built under
// build/bench-data). One JSON line per case goes to stdout after the table.
#include <sys/wait.h>
#include <unistd.h>

#include <torch/torch.h>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "bench_store.hpp"
#include "headroom/loader/batch_prefetcher.hpp"
#include "headroom/loader/epoch_order.hpp"
#include "headroom/memory/tensor_memory_meter.hpp"
#include "headroom/nn/cuda_runtime.hpp"
#include "headroom/nn/gat_conv.hpp"
#include "headroom/store/store_metadata.hpp"
#include "headroom/train/families/model_family.hpp"
#include "headroom/train/step/precision.hpp"
#include "headroom/train/step/training_step.hpp"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

struct Case {
  std::string family;  // a model family (train/families/model_family.hpp): gat, gcn, vgae
  headroom::models::ModelSize size;
  std::int64_t batch_size;
  bool fused = true;  // GATConv's fused kernel, or the reference formulation (A/B)
};

struct Settings {
  fs::path store;
  std::int64_t batches = 12;
  int threads = 2;
  std::string device = "cpu";
  bool checkpointing = true;
  std::string precision = "32";
  bool keep_freed = true;  // memory::keep_freed_host_memory(), as headroom-train runs
};

nlohmann::json run_case(const Settings& settings, const Case& c) {
  using namespace headroom;
  torch::manual_seed(1);
  torch::set_num_threads(settings.threads);
  const c10::Device device(settings.device);
  const auto precision = train::parse_precision(settings.precision);
  const auto store = store::GraphStore::open(settings.store);
  const auto labels = store.size_index().label;
  const auto& family = train::model_family(c.family);
  // An autoencoder trains on the normal graphs, as its stage does.
  const bool classifier = family.role() == train::FamilyRole::kClassifier;
  std::vector<std::uint32_t> ids;
  for (const auto id : store.train_ids())
    if (classifier || labels[id] == 0) ids.push_back(id);
  auto batches = loader::chunk(loader::shuffled(ids, 1, 0), static_cast<std::size_t>(c.batch_size));
  if (static_cast<std::int64_t>(batches.size()) > settings.batches + 1)
    batches.resize(static_cast<std::size_t>(settings.batches + 1));

  // The family's preset for the store's identity classes and node features, and its undistilled
  // loss, as training builds them.
  auto model = train::preset_model(store, c.family, c.size);
  model.config["gradient_checkpointing"] = settings.checkpointing;
  const auto subject = family.plain_subject(model.config);
  const auto& module = subject.modules.front();
  const auto& loss = subject.loss;
  for (const auto& child : module->modules()) {
    if (auto* conv = dynamic_cast<nn::GATConvImpl*>(child.get())) conv->use_fused_kernel(c.fused);
  }
  module->to(device);
  module->train();
  torch::optim::Adam optimizer(module->parameters(),
                               torch::optim::AdamOptions(1e-3).weight_decay(1e-4));
  // The step training runs (train/step/training_step.hpp): autocast, loss, backward, clipping,
  // Adam.
  train::StepSettings step_settings;
  step_settings.device = device;
  step_settings.precision = precision;
  step_settings.loss_reduction = subject.loss_reduction;
  train::TrainingStep step(store, module->parameters(), optimizer, loss, step_settings);

  loader::CollateOptions collate;
  collate.pin_memory = device.is_cuda();
  loader::BatchPrefetcher prefetcher(store, batches, collate, 4);
  const int cuda_index = device.is_cuda() ? 0 : -1;
  std::int64_t graphs = 0, nodes = 0, edges = 0, steps = 0;
  double seconds = 0, wait_after_warmup = 0;
  Clock::time_point start;
  while (auto host = prefetcher.next()) {
    if (steps == 1) {  // the first step pays one-time allocations; time the rest
      if (device.is_cuda()) torch::cuda::synchronize();
      headroom::memory::reset_peak(cuda_index);
      wait_after_warmup = prefetcher.wait_seconds();
      start = Clock::now();
    }
    const auto& batch = *host;
    step.run(batch);
    if (steps >= 1) {
      graphs += batch.num_graphs;
      nodes += batch.num_nodes;
      edges += batch.num_edges;
    }
    ++steps;
  }
  if (device.is_cuda()) torch::cuda::synchronize();
  seconds = std::chrono::duration<double>(Clock::now() - start).count();
  const auto memory = headroom::memory::memory_snapshot(cuda_index);
  const double epoch_graphs = static_cast<double>(ids.size());
  const double wait = prefetcher.wait_seconds() - wait_after_warmup;
  return {{"model", c.family},
          {"attention", c.fused ? "fused" : "reference"},
          {"size", models::to_string(c.size)},
          {"batch_size", c.batch_size},
          {"steps_timed", steps - 1},
          {"graphs", graphs},
          {"nodes", nodes},
          {"edges", edges},
          {"seconds", seconds},
          {"graphs_per_second", static_cast<double>(graphs) / seconds},
          {"peak_tensor_bytes",
           device.is_cuda() ? memory.cuda.peak_allocated_bytes : memory.cpu.peak_bytes},
          {"peak_rss_bytes", memory.peak_rss_bytes},
          {"batch_wait_seconds", wait},
          // Waiting scaled to a whole epoch of this case's graphs.
          {"batch_wait_seconds_per_epoch",
           graphs > 0 ? wait * epoch_graphs / static_cast<double>(graphs) : 0.0},
          {"epoch_graphs", ids.size()}};
}

// Runs the case in a child; its JSON comes back through a pipe.
nlohmann::json run_isolated(const Settings& settings, const Case& c) {
  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error("pipe failed");
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    if (settings.keep_freed) headroom::memory::keep_freed_host_memory();
    headroom::memory::install_counting_cpu_allocator();
    std::string text;
    try {
      text = run_case(settings, c).dump();
    } catch (const std::exception& e) {
      text = nlohmann::json{{"error", e.what()}}.dump();
    }
    const auto written = write(fds[1], text.data(), text.size());
    _exit(written == static_cast<ssize_t>(text.size()) ? 0 : 1);
  }
  close(fds[1]);
  std::string text;
  char buffer[4096];
  ssize_t n = 0;
  while ((n = read(fds[0], buffer, sizeof buffer)) > 0)
    text.append(buffer, static_cast<std::size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (text.empty()) return {{"error", fmt::format("child exited with status {}", status)}};
  return nlohmann::json::parse(text);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"headroom training throughput and memory benchmark"};
  Settings settings;
  std::string store;
  std::vector<std::int64_t> batch_sizes = {256, 1024, 4096};
  std::vector<std::string> models = {"gat,teacher", "gat,student", "vgae,teacher", "vgae,student"};
  app.add_option("--store", store, "Graph store (default: stores/hcrl_sa or synthetic)");
  app.add_option("--batch-sizes", batch_sizes)->delimiter(',');
  app.add_option("--models", models, "MODEL,SIZE presets")->delimiter(';');
  app.add_option("--batches", settings.batches, "Timed batches per case at most");
  app.add_option("--threads", settings.threads);
  app.add_option("--device", settings.device);
  app.add_option("--checkpointing", settings.checkpointing);
  app.add_option("--precision", settings.precision);
  app.add_option("--keep-freed", settings.keep_freed,
                 "Cache freed host blocks (as headroom-train)");
  std::vector<std::string> attentions = {"fused"};
  app.add_option("--attention", attentions, "fused and/or reference GATConv")
      ->delimiter(',')
      ->check(CLI::IsMember({"fused", "reference"}));
  CLI11_PARSE(app, argc, argv);
  settings.store = store.empty() ? headroom::bench::default_store() : fs::path(store);
  // CUDA comes with the plugin (nn/cuda_runtime.hpp), loaded before anything asks LibTorch about
  // CUDA (each case's torch::manual_seed does).
  if (c10::Device(settings.device).is_cuda()) headroom::nn::load_cuda_plugin();

  fmt::print("store {}, {} threads, device {}, precision {}, checkpointing {}\n",
             settings.store.string(), settings.threads, settings.device, settings.precision,
             settings.checkpointing);
  fmt::print("{:<6} {:<8} {:<9} {:>6} {:>6} {:>12} {:>16} {:>14} {:>16}\n", "model", "size",
             "attention", "batch", "steps", "graphs/s", "peak tensor MiB", "peak RSS MiB",
             "wait s/epoch");
  std::vector<nlohmann::json> results;
  for (const auto& preset : models) {
    const auto comma = preset.find(',');
    const Case base{std::string(headroom::train::model_family(preset.substr(0, comma)).name()),
                    headroom::models::parse_model_size(preset.substr(comma + 1)), 0};
    for (const auto batch : batch_sizes) {
      for (const auto& attention : attentions) {
        Case c = base;
        c.batch_size = batch;
        c.fused = attention == "fused";
        auto result = run_isolated(settings, c);
        result["threads"] = settings.threads;
        result["device"] = settings.device;
        result["precision"] = settings.precision;
        result["checkpointing"] = settings.checkpointing;
        result["keep_freed"] = settings.keep_freed;
        if (result.contains("error")) {
          fmt::print("{:<14} {:>6}  error: {}\n", preset, batch,
                     result["error"].get<std::string>());
        } else {
          fmt::print("{:<6} {:<8} {:<9} {:>6} {:>6} {:>12.0f} {:>16.1f} {:>14.1f} {:>16.4f}\n",
                     result["model"].get<std::string>(), result["size"].get<std::string>(),
                     attention, batch, result["steps_timed"].get<std::int64_t>(),
                     result["graphs_per_second"].get<double>(),
                     result["peak_tensor_bytes"].get<double>() / (1 << 20),
                     result["peak_rss_bytes"].get<double>() / (1 << 20),
                     result["batch_wait_seconds_per_epoch"].get<double>());
        }
        std::fflush(stdout);
        results.push_back(result);
      }
    }
  }
  for (const auto& r : results) fmt::print("{}\n", r.dump());
  return 0;
}
