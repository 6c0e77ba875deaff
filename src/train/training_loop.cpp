#include "headroom/train/training_loop.hpp"

#include <torch/torch.h>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <chrono>
#include <limits>
#include <optional>
#include <stdexcept>
#include <thread>

#include "headroom/loader/batch_prefetcher.hpp"
#include "headroom/loader/collate.hpp"
#include "headroom/loader/epoch_order.hpp"
#include "headroom/memory/rank_batches.hpp"
#include "headroom/memory/system_memory.hpp"
#include "headroom/memory/tensor_memory_meter.hpp"
#include "headroom/train/collectives.hpp"
#include "headroom/train/command_budget.hpp"
#include "headroom/train/host_memory.hpp"
#include "headroom/train/metrics_sink.hpp"
#include "headroom/train/oom_guard.hpp"
#include "headroom/train/precision.hpp"
#include "headroom/train/training_step.hpp"
#include "headroom/util/allocation_site.hpp"
#include "headroom/util/byte_size.hpp"
#include "headroom/util/printable_text.hpp"
#include "headroom/util/process_role.hpp"
#include "headroom/util/progress_bar.hpp"

#include <ATen/autocast_mode.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDACachingAllocator.h>

namespace headroom::train {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// What a run computes: the configuration without the settings that change only how it executes
// (a resumed run may differ in them), and in place of the store's path the store's content
// identity, so that a store rebuilt with other settings or from other data is a different run.
nlohmann::json semantic_config(const TrainingConfig& config, const store::GraphStore& store) {
  nlohmann::json json = config;
  for (const char* key : {"threads", "prefetch_depth", "runs_dir", "store", "models",
                          "clear_cache_every_n", "step_metrics_every", "offload_teacher_to_cpu"})
    json.erase(key);
  json["store"] = store::content_identity(store.metadata());
  return json;
}

// Each key in which `before` and `now` differ, nested ones dotted ("store.window"), with both
// values where they are scalars ("learning_rate (was 0.003, now 0.01)").
void collect_differences(const nlohmann::json& before, const nlohmann::json& now,
                         const std::string& prefix, std::vector<std::string>& out) {
  for (const auto& [key, value] : before.items()) {
    const auto name = prefix + key;
    if (!now.contains(key)) {
      out.push_back(name + " (no longer recorded)");
    } else if (value.is_object() && now.at(key).is_object()) {
      collect_differences(value, now.at(key), name + ".", out);
    } else if (now.at(key) != value) {
      out.push_back(value.is_primitive() && now.at(key).is_primitive()
                        ? fmt::format("{} (was {}, now {})", name, value.dump(), now.at(key).dump())
                        : name);
    }
  }
  for (const auto& [key, value] : now.items())
    if (!before.contains(key)) out.push_back(prefix + key + " (not recorded before)");
}

std::vector<at::Tensor> trained_parameters(const TrainingTask& task) {
  std::vector<at::Tensor> parameters = task.model->parameters();
  for (const auto& module : task.auxiliary)
    for (auto& p : module->parameters()) parameters.push_back(p);
  return parameters;
}

void set_training_mode(const TrainingTask& task, bool on) {
  task.model->train(on);
  for (const auto& module : task.auxiliary) module->train(on);
}

// What last.pt holds besides the modules: where the loop stands.
struct LoopState {
  std::int64_t epochs_done = 0;
  std::int64_t best_epoch = -1;
  double best_loss = std::numeric_limits<double>::infinity();
  std::int64_t bad_epochs = 0;
  double loss_scale = 0;
  nlohmann::json best_metrics = nlohmann::json::object();
  std::int64_t peak_tensor_bytes = 0;
};

void save_state(const RunDirectory& run, const TrainingTask& task,
                torch::optim::Optimizer& optimizer, const LoopState& state, bool cuda) {
  torch::serialize::OutputArchive archive;
  torch::serialize::OutputArchive model_archive;
  task.model->save(model_archive);
  archive.write("model", model_archive);
  for (std::size_t i = 0; i < task.auxiliary.size(); ++i) {
    torch::serialize::OutputArchive aux;
    task.auxiliary[i]->save(aux);
    archive.write(fmt::format("auxiliary_{}", i), aux);
  }
  torch::serialize::OutputArchive optimizer_archive;
  optimizer.save(optimizer_archive);
  archive.write("optimizer", optimizer_archive);
  const nlohmann::json loop = {{"epochs_done", state.epochs_done},
                               {"best_epoch", state.best_epoch},
                               {"best_loss", state.best_loss},
                               {"bad_epochs", state.bad_epochs},
                               {"loss_scale", state.loss_scale},
                               {"best_metrics", state.best_metrics},
                               {"peak_tensor_bytes", state.peak_tensor_bytes}};
  archive.write("loop", c10::IValue(loop.dump()));
  archive.write("rng_cpu", at::globalContext().defaultGenerator(at::kCPU).get_state(),
                /*is_buffer=*/true);
  if (cuda)
    archive.write("rng_cuda", at::globalContext().defaultGenerator(at::kCUDA).get_state(),
                  /*is_buffer=*/true);
  save_archive_atomically(archive, run.state_checkpoint());
}

LoopState load_state(const RunDirectory& run, const TrainingTask& task,
                     torch::optim::Optimizer& optimizer, const c10::Device& device) {
  torch::serialize::InputArchive archive;
  archive.load_from(run.state_checkpoint().string(), device);
  torch::serialize::InputArchive model_archive;
  archive.read("model", model_archive);
  task.model->load(model_archive);
  for (std::size_t i = 0; i < task.auxiliary.size(); ++i) {
    torch::serialize::InputArchive aux;
    archive.read(fmt::format("auxiliary_{}", i), aux);
    task.auxiliary[i]->load(aux);
  }
  torch::serialize::InputArchive optimizer_archive;
  archive.read("optimizer", optimizer_archive);
  optimizer.load(optimizer_archive);
  c10::IValue loop_value;
  archive.read("loop", loop_value);
  const auto loop = nlohmann::json::parse(loop_value.toStringRef());
  LoopState state;
  state.epochs_done = loop.at("epochs_done").get<std::int64_t>();
  state.best_epoch = loop.at("best_epoch").get<std::int64_t>();
  state.best_loss = loop.at("best_loss").is_null() ? std::numeric_limits<double>::infinity()
                                                   : loop.at("best_loss").get<double>();
  state.bad_epochs = loop.at("bad_epochs").get<std::int64_t>();
  state.loss_scale = loop.at("loss_scale").get<double>();
  state.best_metrics = loop.at("best_metrics");
  state.peak_tensor_bytes = loop.at("peak_tensor_bytes").get<std::int64_t>();
  at::Tensor rng;
  archive.read("rng_cpu", rng, /*is_buffer=*/true);
  at::Generator cpu_generator = at::globalContext().defaultGenerator(at::kCPU);  // a handle
  cpu_generator.set_state(rng.cpu());
  if (device.is_cuda() && archive.try_read("rng_cuda", rng, /*is_buffer=*/true)) {
    at::Generator cuda_generator = at::globalContext().defaultGenerator(at::kCUDA);
    cuda_generator.set_state(rng.cpu());
  }
  return state;
}

// A sampled step's memory: what metrics.jsonl records between epoch lines.
nlohmann::json step_memory_line(std::int64_t epoch, std::int64_t step, std::int64_t graphs,
                                std::int64_t oom_events, std::int64_t budget, int cuda_index) {
  const auto snapshot = memory::memory_snapshot(cuda_index);
  const bool cuda = cuda_index >= 0;
  const auto current = cuda ? snapshot.cuda.allocated_bytes : snapshot.cpu.current_bytes;
  const auto peak = memory::device_peak_bytes(snapshot, cuda);
  nlohmann::json line = {{"type", "step"},
                         {"epoch", epoch},
                         {"step", step},
                         {"graphs", graphs},
                         {"tensor_bytes", current},
                         {"peak_tensor_bytes", peak},
                         {"rss_bytes", snapshot.rss_bytes},
                         {"memory_budget", budget},
                         {"utilization", static_cast<double>(peak) / static_cast<double>(budget)},
                         {"oom_events", oom_events}};
  if (cuda) line["reserved_bytes"] = snapshot.cuda.reserved_bytes;
  return line;
}

}  // namespace

void to_json(nlohmann::json& json, const TrainingOutcome& o) {
  json = {{"epochs", o.epochs},
          {"best_epoch", o.best_epoch},
          {"best_validation_loss", o.best_validation_loss},
          {"early_stopped", o.early_stopped},
          {"resumed_after", o.resumed_after},
          {"seconds", o.seconds},
          {"batch_wait_seconds", o.batch_wait_seconds},
          {"graphs_per_second", o.graphs_per_second},
          {"peak_tensor_bytes", o.peak_tensor_bytes},
          {"best_metrics", o.best_metrics}};
}

void from_json(const nlohmann::json& json, TrainingOutcome& o) {
  o.epochs = json.at("epochs").get<std::int64_t>();
  o.best_epoch = json.at("best_epoch").get<std::int64_t>();
  o.best_validation_loss = json.at("best_validation_loss").get<double>();
  o.early_stopped = json.at("early_stopped").get<bool>();
  o.resumed_after = json.at("resumed_after").get<std::int64_t>();
  o.seconds = json.at("seconds").get<double>();
  o.batch_wait_seconds = json.at("batch_wait_seconds").get<double>();
  o.graphs_per_second = json.at("graphs_per_second").get<double>();
  o.peak_tensor_bytes = json.at("peak_tensor_bytes").get<std::int64_t>();
  o.best_metrics = json.at("best_metrics");
}

std::int64_t resolve_memory_budget(const MemoryOptions& memory, const c10::Device& device) {
  if (memory.budget > 0) return memory.budget;
  if (device.is_cuda())
    return static_cast<std::int64_t>(
        at::cuda::getDeviceProperties(std::max<int>(0, device.index()))->totalGlobalMem);
  // On CPU the tensors live in host memory: the default is what the host budget leaves.
  const auto left = static_cast<double>(host_memory_budget(memory).bytes) - host_baseline_bytes();
  return std::max<std::int64_t>(1, static_cast<std::int64_t>(left));
}

c10::Device training_device(const RunOptions& run) {
  const c10::Device device(run.device);
  if (device.is_cuda() && !torch::cuda::is_available())
    throw std::runtime_error("--device " + run.device +
                             ": no CUDA device is available on this machine (use --device cpu)");
  return device;
}

void apply_thread_count(const RunOptions& run) {
  const int threads = run.threads > 0
                          ? run.threads
                          : static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
  torch::set_num_threads(threads);
}

namespace {

// Inference needs no gradient bookkeeping: on OOM the batch is simply run in halves. A single
// graph that does not fit cannot be split further: the error, still an out-of-memory error (so
// that the training loop adds where and how to resume), names the graph and the device.
void run_splitting_on_oom(const store::GraphStore& store, const loader::GraphBatch& host,
                          const c10::Device& device,
                          const std::function<void(const loader::GraphBatch&)>& fn) {
  try {
    const util::AllocationSite site("inference");
    fn(host.to(device, /*non_blocking=*/true));
    return;
  } catch (const c10::OutOfMemoryError& error) {
    if (host.num_graphs <= 1)
      throw c10::OutOfMemoryError(fmt::format(
          "out of memory in inference (scoring, validation or evaluation) on one graph alone: "
          "graph {} ({} nodes, {} edges) on {}: {}",
          host.graph_id_list().front(), host.num_nodes, host.edge_index.size(1), device.str(),
          error.what_without_backtrace()));
    at::autocast::clear_cache();
    if (device.is_cuda()) c10::cuda::CUDACachingAllocator::emptyCache();
  }
  const auto ids = host.graph_id_list();
  loader::CollateOptions options;
  options.edge_features = host.edge_attr.defined();
  options.pin_memory = device.is_cuda();
  for (const auto& half : loader::chunk(ids, (ids.size() + 1) / 2))
    run_splitting_on_oom(store, loader::collate(store, half, options), device, fn);
}

}  // namespace

double for_each_batch(const store::GraphStore& store, std::span<const std::uint32_t> graph_ids,
                      std::int64_t batch_size, const c10::Device& device,
                      const std::function<void(const loader::GraphBatch&)>& fn,
                      std::size_t prefetch_depth) {
  loader::CollateOptions options;
  options.pin_memory = device.is_cuda();
  loader::BatchPrefetcher prefetcher(store,
                                     loader::chunk(graph_ids, static_cast<std::size_t>(batch_size)),
                                     options, prefetch_depth);
  while (auto batch = prefetcher.next()) run_splitting_on_oom(store, *batch, device, fn);
  return prefetcher.wait_seconds();
}

namespace {

// What one epoch's training pass measured.
struct EpochStats {
  std::uint64_t graphs = 0;
  std::int64_t steps = 0;
  double train_loss = 0;
  double train_seconds = 0;
  double wait_seconds = 0;
  std::int64_t oom_events = 0;
  std::int64_t split_steps = 0;
  std::int64_t max_parts = 1;
  nlohmann::json plan_info;
};

// The epoch loop of one run: owns the optimiser and the training step, and sends its metric
// lines to every sink. Built once the stage's `prepare` has run and the budget is applied.
class EpochLoop {
 public:
  EpochLoop(const TrainingConfig& config, RunDirectory& run, TrainingTask& task,
            const LoopHooks& hooks, std::int64_t budget, memory::HostMemoryBudget host_budget)
      : config_(config),
        run_(run),
        task_(task),
        device_(training_device(config.run)),
        cuda_index_(device_.is_cuda() ? std::max<int>(0, device_.index()) : -1),
        precision_(parse_precision(config.run.precision)),
        budget_(budget),
        host_budget_(std::move(host_budget)),
        parameters_((move_to_device(task, device_), trained_parameters(task))),
        optimizer_(parameters_, torch::optim::AdamOptions(effective_learning_rate(config))
                                    .weight_decay(config.optimisation.weight_decay)),
        step_(*task.store, parameters_, optimizer_, task.loss, step_settings()),
        file_sink_(run) {
    step_.set_gradient_hook(hooks.after_backward);
    sinks_.push_back(&file_sink_);
    for (auto* sink : hooks.metrics) sinks_.push_back(sink);
  }

  // Restores last.pt when resuming (and rewinds the sinks), else starts fresh and seeded.
  void start(bool resume, TrainingOutcome& outcome) {
    if (resume) {
      state_ = load_state(run_, task_, optimizer_, device_);
      for (auto* sink : sinks_) sink->rewind(state_.epochs_done);
      outcome.resumed_after = state_.epochs_done;
      run_.log(fmt::format("resuming {} after epoch {}", util::printable_path(run_.path()),
                           state_.epochs_done));
    } else {
      run_.clear();
      torch::manual_seed(config_.run.seed);
    }
    adopt_rank0_state();
  }

  // Trains the remaining epochs (early stopping included) and fills `outcome`.
  void run(TrainingOutcome& outcome) {
    const auto start = Clock::now();
    double step_seconds = 0;
    std::int64_t trained_graphs = 0;
    for (std::int64_t epoch = state_.epochs_done; epoch < config_.optimisation.max_epochs;
         ++epoch) {
      if (state_.bad_epochs >=
          config_.optimisation.patience) {  // resumed after the early-stopping epoch
        outcome.early_stopped = true;
        break;
      }
      const auto epoch_start = Clock::now();
      memory::reset_peak(cuda_index_);
      const auto stats = train_epoch(epoch);
      step_seconds += stats.train_seconds;
      trained_graphs += static_cast<std::int64_t>(stats.graphs);
      outcome.batch_wait_seconds += stats.wait_seconds;
      finish_epoch(epoch, stats, epoch_start);
      if (state_.bad_epochs >= config_.optimisation.patience) {
        outcome.early_stopped = true;
        run_.log(fmt::format("early stop: no better validation loss for {} epochs",
                             config_.optimisation.patience));
        break;
      }
    }
    outcome.epochs = state_.epochs_done;
    outcome.best_epoch = state_.best_epoch;
    outcome.best_validation_loss = state_.best_loss;
    outcome.best_metrics = state_.best_metrics;
    outcome.peak_tensor_bytes = state_.peak_tensor_bytes;
    outcome.seconds = seconds_since(start);
    outcome.graphs_per_second =
        step_seconds > 0 ? static_cast<double>(trained_graphs) / step_seconds : 0.0;
  }

 private:
  static void move_to_device(const TrainingTask& task, const c10::Device& device) {
    task.model->to(device);
    for (const auto& module : task.auxiliary) module->to(device);
  }

  StepSettings step_settings() const {
    StepSettings settings;
    settings.device = device_;
    settings.precision = precision_;
    settings.gradient_clip = config_.optimisation.gradient_clip;
    settings.loss_reduction = task_.loss_reduction;
    return settings;
  }

  // Every rank continues from rank 0's weights, buffers and optimiser state. They agree already
  // at a fresh start (same seed) and after a resume (same last.pt); this makes it so whatever a
  // rank read. In one process it does nothing.
  void adopt_rank0_state() {
    std::vector<at::Tensor> state = module_tensors(/*with_parameters=*/true);
    std::vector<torch::optim::AdamParamState*> adam_states;
    for (const auto& p : parameters_) {
      const auto found = optimizer_.state().find(p.unsafeGetTensorImpl());
      if (found == optimizer_.state().end()) continue;
      auto& adam = static_cast<torch::optim::AdamParamState&>(*found->second);
      state.push_back(adam.exp_avg());
      state.push_back(adam.exp_avg_sq());
      if (adam.max_exp_avg_sq().defined()) state.push_back(adam.max_exp_avg_sq());
      adam_states.push_back(&adam);
    }
    auto steps = torch::empty({static_cast<std::int64_t>(adam_states.size())}, torch::kInt64);
    for (std::size_t i = 0; i < adam_states.size(); ++i)
      steps[static_cast<std::int64_t>(i)] = adam_states[i]->step();
    state.push_back(steps);
    collectives().broadcast_from_rank0(state);
    for (std::size_t i = 0; i < adam_states.size(); ++i)
      adam_states[i]->step(steps[static_cast<std::int64_t>(i)].item<std::int64_t>());
  }

  // Rank 0's buffers (BatchNorm's running statistics, which each rank updates from its own
  // batches) on every rank, before validation and the checkpoints: every rank then evaluates the
  // model rank 0 saves. Training in train mode does not read them.
  void adopt_rank0_buffers() {
    auto buffers = module_tensors(/*with_parameters=*/false);
    collectives().broadcast_from_rank0(buffers);
  }

  // The model's and the auxiliary modules' buffers (and parameters), detached aliases.
  std::vector<at::Tensor> module_tensors(bool with_parameters) const {
    std::vector<at::Tensor> tensors;
    const auto add_module = [&](const torch::nn::Module& module) {
      if (with_parameters)
        for (const auto& p : module.parameters()) tensors.push_back(p.detach());
      for (const auto& b : module.buffers()) tensors.push_back(b.detach());
    };
    add_module(*task_.model);
    for (const auto& module : task_.auxiliary) add_module(*module);
    return tensors;
  }

  // Runs `work` (bookkeeping outside the guarded training step: metrics, validation) as the
  // allocation site `site`. Out of memory there cannot be retried like a step: it ends the run
  // with an error naming the epoch and the site, and saying how to resume.
  template <typename Work>
  auto outside_the_step(std::int64_t epoch, const char* site, Work&& work) {
    const util::AllocationSite marked(site);
    try {
      return work();
    } catch (const c10::OutOfMemoryError& error) {
      throw std::runtime_error(fmt::format(
          "out of memory in the {} of epoch {}, outside the guarded training step: {}; {}", site,
          epoch + 1, error.what_without_backtrace(), how_to_go_on()));
    }
  }

  std::string how_to_go_on() const {
    return state_.epochs_done > 0
               ? fmt::format("run the same command again to resume after epoch {} from {}",
                             state_.epochs_done, run_.state_checkpoint().string())
               : std::string("no epoch was completed: run the same command again to start over");
  }

  void emit(const nlohmann::json& line) {
    if (!util::process_role().writes()) return;
    for (auto* sink : sinks_) sink->record(line);
  }

  EpochStats train_epoch(std::int64_t epoch);
  void finish_epoch(std::int64_t epoch, const EpochStats& stats, Clock::time_point epoch_start);
  void save_state_named_on_oom(std::int64_t epoch, bool cuda);

  const TrainingConfig& config_;
  RunDirectory& run_;
  TrainingTask& task_;
  c10::Device device_;
  int cuda_index_;
  Precision precision_;
  std::int64_t budget_;
  memory::HostMemoryBudget host_budget_;
  std::vector<at::Tensor> parameters_;
  torch::optim::Adam optimizer_;
  TrainingStep step_;
  MetricsFileSink file_sink_;
  std::vector<MetricsSink*> sinks_;
  LoopState state_;
};

EpochStats EpochLoop::train_epoch(std::int64_t epoch) {
  const bool cuda = device_.is_cuda();
  EpochPlan plan = task_.plan_epoch(epoch);
  // This rank's share of the epoch (the whole epoch in one process).
  plan.batches = memory::batches_of_rank(std::move(plan.batches), collectives().rank(),
                                         collectives().world_size());
  EpochStats stats;
  stats.plan_info = std::move(plan.info);
  std::uint64_t rank_graphs = 0;
  for (const auto& b : plan.batches) rank_graphs += b.size();

  loader::CollateOptions collate_options;
  collate_options.pin_memory = cuda;
  loader::BatchPrefetcher prefetcher(*task_.store, std::move(plan.batches), collate_options,
                                     static_cast<std::size_t>(config_.run.prefetch_depth));
  util::ProgressBar bar(fmt::format("epoch {}/{}", epoch + 1, config_.optimisation.max_epochs),
                        rank_graphs, "graphs", config_.run.progress ? -1 : 0);
  set_training_mode(task_, true);
  auto loss_sum = outside_the_step(epoch, "metrics", [&] {
    return torch::zeros({}, torch::TensorOptions().dtype(torch::kDouble).device(device_));
  });
  std::int64_t done_graphs = 0;
  const auto train_start = Clock::now();
  while (auto host_batch = prefetcher.next()) {
    const auto outcome = step_.run(*host_batch);
    check_host_memory(host_budget_, fmt::format("epoch {} step {}", epoch + 1, stats.steps + 1),
                      how_to_go_on());
    stats.oom_events += outcome.oom_events;
    if (outcome.parts > 1) ++stats.split_steps;
    stats.max_parts = std::max(stats.max_parts, outcome.parts);
    if (outcome.oom_events > 0)
      run_.log(fmt::format(
          "out of memory in epoch {} step {}: the batch of {} graphs ran as {} micro-batches",
          epoch + 1, stats.steps + 1, host_batch->num_graphs, outcome.parts));
    const auto graphs = host_batch->num_graphs;
    outside_the_step(epoch, "metrics", [&] {
      loss_sum += outcome.loss.to(torch::kDouble) * static_cast<double>(graphs);
    });
    ++stats.steps;
    done_graphs += graphs;
    bar.advance(static_cast<std::uint64_t>(graphs), static_cast<std::uint64_t>(graphs));
    if (cuda && config_.memory.clear_cache_every_n > 0 &&
        stats.steps % config_.memory.clear_cache_every_n == 0)
      c10::cuda::CUDACachingAllocator::emptyCache();
    if (config_.memory.step_metrics_every > 0 &&
        stats.steps % config_.memory.step_metrics_every == 0)
      outside_the_step(epoch, "metrics", [&] {
        emit(step_memory_line(epoch, stats.steps, graphs, stats.oom_events, budget_, cuda_index_));
      });
    if (!cuda || stats.steps % 20 == 0)
      bar.set_status(
          fmt::format("loss {:.4f}", loss_sum.item<double>() / static_cast<double>(done_graphs)));
  }
  bar.finish();
  stats.train_seconds = seconds_since(train_start);
  stats.wait_seconds = prefetcher.wait_seconds();
  // The epoch's loss, graphs and OOM events over every rank (a rank that split its batches
  // shows in the job's metrics, which rank 0 writes).
  const auto count = [&](auto value) {
    return torch::full({}, static_cast<double>(value), loss_sum.options());
  };
  const auto summed = outside_the_step(epoch, "metrics", [&] {
    std::vector<at::Tensor> totals = {torch::stack(
        {loss_sum, count(rank_graphs), count(stats.oom_events), count(stats.split_steps)})};
    collectives().all_reduce_sum(totals);
    return totals[0].cpu();
  });
  stats.graphs = static_cast<std::uint64_t>(summed[1].item<double>());
  stats.oom_events = static_cast<std::int64_t>(summed[2].item<double>());
  stats.split_steps = static_cast<std::int64_t>(summed[3].item<double>());
  stats.train_loss =
      stats.graphs == 0 ? 0.0 : summed[0].item<double>() / static_cast<double>(stats.graphs);
  return stats;
}

void EpochLoop::finish_epoch(std::int64_t epoch, const EpochStats& stats,
                             Clock::time_point epoch_start) {
  const bool cuda = device_.is_cuda();
  set_training_mode(task_, false);
  adopt_rank0_buffers();
  // Validation batches that run out of memory are split (for_each_batch); what is left to fail
  // here is a single graph or the metrics computed over them.
  const ValidationResult validation = outside_the_step(epoch, "validation", [&] {
    torch::NoGradGuard no_grad;
    AutocastScope autocast(precision_, device_);
    return task_.validate();
  });
  const auto snapshot = memory::memory_snapshot(cuda_index_);
  const auto epoch_peak = memory::device_peak_bytes(snapshot, cuda);
  state_.peak_tensor_bytes = std::max(state_.peak_tensor_bytes, epoch_peak);

  const bool improved = validation.loss < state_.best_loss;
  if (improved) {
    state_.best_loss = validation.loss;
    state_.best_epoch = epoch;
    state_.best_metrics = validation.metrics;
    state_.bad_epochs = 0;
    CheckpointInfo info = task_.checkpoint;
    info.epoch = epoch;
    info.validation_loss = validation.loss;
    if (util::process_role().writes())
      outside_the_step(epoch, "checkpoint",
                       [&] { save_model_checkpoint(run_.best_checkpoint(), *task_.model, info); });
  } else {
    ++state_.bad_epochs;
  }
  state_.epochs_done = epoch + 1;
  state_.loss_scale = step_.loss_scaler().current_scale();

  const double graphs_per_second =
      stats.train_seconds > 0 ? static_cast<double>(stats.graphs) / stats.train_seconds : 0.0;
  nlohmann::json line = {
      {"type", "epoch"},
      {"epoch", epoch},
      {"train_loss", stats.train_loss},
      {"validation_loss", validation.loss},
      {"validation", validation.metrics},
      {"best", improved},
      {"graphs", stats.graphs},
      {"steps", stats.steps},
      {"seconds", seconds_since(epoch_start)},
      {"graphs_per_second", graphs_per_second},
      {"batch_wait_seconds", stats.wait_seconds},
      {"learning_rate", effective_learning_rate(config_)},
      {"memory", snapshot},
      {"plan", stats.plan_info},
      {"oom_events", stats.oom_events},
      {"split_steps", stats.split_steps},
      {"max_micro_batches", stats.max_parts},
      {"memory_budget", budget_},
      {"utilization", static_cast<double>(epoch_peak) / static_cast<double>(budget_)}};
  if (step_.loss_scaler().enabled()) line["loss_scale"] = step_.loss_scaler().current_scale();
  emit(line);
  run_.log(fmt::format(
      "epoch {:>3}/{}  train loss {:.5f}  val loss {:.5f}{}  {:.0f} graphs/s  wait {:.3f}s  "
      "peak {:.1f} MiB",
      epoch + 1, config_.optimisation.max_epochs, stats.train_loss, validation.loss,
      improved ? " *" : "", graphs_per_second, stats.wait_seconds,
      static_cast<double>(epoch_peak) / (1 << 20)));
  if (util::process_role().writes()) save_state_named_on_oom(epoch, cuda);
}

// last.pt is replaced atomically: when writing it runs out of memory, it still holds the epoch
// before, and that is where the same command resumes.
void EpochLoop::save_state_named_on_oom(std::int64_t epoch, bool cuda) {
  try {
    const util::AllocationSite site("checkpoint");
    save_state(run_, task_, optimizer_, state_, cuda);
  } catch (const c10::OutOfMemoryError&) {
    --state_.epochs_done;
    outside_the_step(epoch, "checkpoint", [] { throw; });
  }
}

// Runs the stage's `prepare` as its own memory phase and logs that phase's peak, so that a
// budget overrun before training (none is possible once the budget is applied) would show.
void run_prepare_within_budget(const TrainingTask& task, std::int64_t budget,
                               const c10::Device& device, RunDirectory& run) {
  const auto peak = run_phase(device, task.prepare);
  run.log("before training (probing, scoring, caches): " + phase_peak_text(peak, budget));
}

}  // namespace

std::optional<TrainingOutcome> finished_training(const TrainingConfig& config, RunDirectory& run,
                                                 const store::GraphStore& store) {
  const auto semantic = semantic_config(config, store);
  const auto previous = run.read_config();
  if (previous.is_null() || !config.run.resume) return std::nullopt;
  std::vector<std::string> diff;
  collect_differences(previous.value("semantic", nlohmann::json::object()), semantic, "", diff);
  if (!diff.empty())
    throw std::runtime_error(fmt::format(
        "{}: holds a run with a different configuration (differs in: {}); pass --resume false "
        "to start over there, or choose another --runs-dir",
        util::printable_path(run.path()), fmt::join(diff, ", ")));
  const auto result = run.read_result();
  if (result.is_null()) return std::nullopt;
  auto outcome = result.at("training").get<TrainingOutcome>();
  outcome.already_complete = true;
  run.log(fmt::format("{}: already complete ({} epochs, best epoch {}); nothing to do",
                      util::printable_path(run.path()), outcome.epochs, outcome.best_epoch + 1));
  return outcome;
}

bool resumable_training(const TrainingConfig& config, const RunDirectory& run) {
  return config.run.resume && std::filesystem::exists(run.state_checkpoint()) &&
         std::filesystem::exists(run.config_file());
}

void record_training_config(const TrainingConfig& config, const RunDirectory& run,
                            const store::GraphStore& store) {
  nlohmann::json config_json = config;
  run.write_config({{"config", config_json}, {"semantic", semantic_config(config, store)}});
}

TrainingOutcome run_training(const TrainingConfig& config, RunDirectory& run, TrainingTask& task,
                             const LoopHooks& hooks) {
  const auto device = training_device(config.run);
  if (auto finished = finished_training(config, run, *task.store)) return *finished;
  // Every rank resumes, or every rank starts over: rank 0 decides (it writes the run directory).

  // The budget holds from the first byte: probing, difficulty scoring and teacher caches in
  // `prepare` run inside it (a probe batch that does not fit is probed smaller), and what they
  // leave cached is released before the first epoch, which then measures its own peak.
  const auto budgets = apply_command_budgets(config, *task.store, run, CommandWork::kTraining);
  // Only the prefetch depth changes: it is not part of the configuration a resume must match.
  TrainingConfig adapted = config;
  adapted.run.prefetch_depth = budgets.host_plan.prefetch_depth;
  if (task.prepare) run_prepare_within_budget(task, budgets.device_budget, device, run);

  EpochLoop loop(adapted, run, task, hooks, budgets.device_budget, budgets.host);
  TrainingOutcome outcome;
  loop.start(agree_with_rank0(collectives(), resumable_training(config, run)), outcome);
  record_training_config(config, run, *task.store);
  loop.run(outcome);
  run.write_result({{"training", outcome}});
  // The other ranks go on to read what rank 0 wrote (best.pt): they wait until it has.
  agree_with_rank0(collectives(), true);
  return outcome;
}

}  // namespace headroom::train
