#include "headroom/train/loop/training_loop.hpp"

#include "headroom/nn/cuda_runtime.hpp"

#include <torch/torch.h>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <chrono>
#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>

#include "headroom/loader/ordered_prefetcher.hpp"
#include "headroom/memory/rank_batches.hpp"
#include "headroom/memory/system_memory.hpp"
#include "headroom/memory/tensor_memory_meter.hpp"
#include "headroom/train/context/collectives.hpp"
#include "headroom/train/context/command_budget.hpp"
#include "headroom/train/context/host_memory.hpp"
#include "headroom/train/loop/metrics_sink.hpp"
#include "headroom/train/step/oom_guard.hpp"
#include "headroom/train/step/precision.hpp"
#include "headroom/train/step/row_blocked_adam.hpp"
#include "headroom/train/step/training_step.hpp"
#include "headroom/util/allocation_site.hpp"
#include "headroom/util/byte_size.hpp"
#include "headroom/util/kill_injection.hpp"
#include "headroom/util/printable_text.hpp"
#include "headroom/util/process_role.hpp"
#include "headroom/util/progress_bar.hpp"

#include <ATen/autocast_mode.h>

namespace headroom::train {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
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

// A sampled step's memory: what metrics.jsonl records between epoch lines.
nlohmann::json step_memory_line(std::int64_t epoch, std::int64_t step, const std::string& units,
                                std::int64_t count, std::int64_t oom_events, std::int64_t budget,
                                int cuda_index) {
  const auto snapshot = memory::memory_snapshot(cuda_index);
  const bool cuda = cuda_index >= 0;
  const auto current = cuda ? snapshot.cuda.allocated_bytes : snapshot.cpu.current_bytes;
  const auto peak = memory::device_peak_bytes(snapshot, cuda);
  nlohmann::json line = {{"type", "step"},
                         {"epoch", epoch},
                         {"step", step},
                         {units, count},
                         {"tensor_bytes", current},
                         {"peak_tensor_bytes", peak},
                         {"rss_bytes", snapshot.rss_bytes},
                         {"memory_budget", budget},
                         {"utilization", static_cast<double>(peak) / static_cast<double>(budget)},
                         {"oom_events", oom_events}};
  if (cuda) line["reserved_bytes"] = snapshot.cuda.reserved_bytes;
  return line;
}

// What one epoch's training pass measured.
struct EpochStats {
  std::uint64_t units = 0;  // graphs or nodes trained on (the task's unit)
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
  EpochLoop(const TrainingConfig& config, const RunContext& context, RunDirectory& run,
            TrainingTask& task, const LoopHooks& hooks)
      : config_(config),
        run_(run),
        task_(task),
        // A task that trains its own epochs does so on the CPU in float32 (training_task.hpp).
        device_(task.own_epochs ? c10::Device(c10::kCPU) : context.device),
        cuda_index_(device_.is_cuda() ? std::max<int>(0, device_.index()) : -1),
        precision_(task.own_epochs ? Precision::kFloat32 : context.precision),
        budget_(context.device_budget),
        host_budget_(context.host),
        units_(std::string(task.own_epochs ? task.own_epochs->unit() : task.batches->unit()) + "s"),
        parameters_((move_to_device(task, device_), trained_parameters(task))),
        optimizer_(parameters_, torch::optim::AdamOptions(effective_learning_rate(config))
                                    .weight_decay(config.optimisation.weight_decay)),
        file_sink_(run) {
    if (!task.own_epochs) {
      step_.emplace(*task.batches, parameters_, optimizer_, task.loss, step_settings());
      step_->set_gradient_hook(hooks.after_backward);
    }
    sinks_.push_back(&file_sink_);
    for (auto* sink : hooks.metrics) sinks_.push_back(sink);
  }

  // Restores last.pt when resuming (and rewinds the sinks), else starts fresh and seeded.
  void start(bool resume, TrainingOutcome& outcome) {
    if (resume) {
      state_ = load_state(run_, config_, task_, optimizer_, device_);
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
    std::int64_t trained_units = 0;
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
      trained_units += static_cast<std::int64_t>(stats.units);
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
        step_seconds > 0 ? static_cast<double>(trained_units) / step_seconds : 0.0;
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

  // `where`: in the epoch ("step 3", "validation").
  [[noreturn]] void stop_diverged(std::int64_t epoch, const std::string& where,
                                  const char* loss_name, double loss, const EpochStats& stats);
  EpochStats train_epoch(std::int64_t epoch);
  EpochStats train_own_epoch(std::int64_t epoch);
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
  std::string units_;  // what the task's ids are, plural: "graphs" or "nodes"
  std::vector<at::Tensor> parameters_;
  RowBlockedAdam optimizer_;
  std::optional<TrainingStep> step_;  // absent for a task that trains its own epochs
  MetricsFileSink file_sink_;
  std::vector<MetricsSink*> sinks_;
  LoopState state_;
};

EpochStats EpochLoop::train_epoch(std::int64_t epoch) {
  if (task_.own_epochs) return train_own_epoch(epoch);
  const bool cuda = device_.is_cuda();
  EpochPlan plan = task_.plan_epoch(epoch);
  // This rank's share of the epoch (the whole epoch in one process).
  plan.batches = memory::batches_of_rank(std::move(plan.batches), collectives().rank(),
                                         collectives().world_size());
  EpochStats stats;
  stats.plan_info = std::move(plan.info);
  std::uint64_t rank_units = 0;
  for (const auto& b : plan.batches) rank_units += b.size();

  const BatchBuilder& builder = *task_.batches;
  loader::OrderedPrefetcher<std::unique_ptr<TaskBatch>> prefetcher(
      std::move(plan.batches),
      [&builder, cuda](std::span<const std::uint32_t> ids) { return builder.build(ids, cuda); },
      static_cast<std::size_t>(config_.run.prefetch_depth), builder.unit(), "collating");
  util::ProgressBar bar(fmt::format("epoch {}/{}", epoch + 1, config_.optimisation.max_epochs),
                        rank_units, units_, config_.run.progress ? -1 : 0);
  set_training_mode(task_, true);
  auto loss_sum = outside_the_step(epoch, "metrics", [&] {
    return torch::zeros({}, torch::TensorOptions().dtype(torch::kDouble).device(device_));
  });
  std::int64_t done_units = 0;
  const auto train_start = Clock::now();
  while (auto host_batch = prefetcher.next()) {
    const auto outcome = step_->run(**host_batch);
    const auto units = static_cast<std::int64_t>((*host_batch)->ids().size());
    check_host_memory(host_budget_, fmt::format("epoch {} step {}", epoch + 1, stats.steps + 1),
                      how_to_go_on());
    stats.oom_events += outcome.oom_events;
    if (outcome.parts > 1) ++stats.split_steps;
    stats.max_parts = std::max(stats.max_parts, outcome.parts);
    if (outcome.oom_events > 0)
      run_.log(fmt::format(
          "out of memory in epoch {} step {}: the batch of {} {} ran as {} micro-batches",
          epoch + 1, stats.steps + 1, units, units_, outcome.parts));
    outside_the_step(epoch, "metrics", [&] {
      loss_sum += outcome.loss.to(torch::kDouble) * static_cast<double>(units);
    });
    ++stats.steps;
    done_units += units;
    bar.advance(static_cast<std::uint64_t>(units), static_cast<std::uint64_t>(units));
    if (cuda && config_.memory.clear_cache_every_n > 0 &&
        stats.steps % config_.memory.clear_cache_every_n == 0)
      nn::empty_cuda_cache();
    if (config_.memory.step_metrics_every > 0 &&
        stats.steps % config_.memory.step_metrics_every == 0)
      outside_the_step(epoch, "metrics", [&] {
        emit(step_memory_line(epoch, stats.steps, units_, units, stats.oom_events, budget_,
                              cuda_index_));
      });
    if (!cuda || stats.steps % 20 == 0) {
      const double running = loss_sum.item<double>() / static_cast<double>(done_units);
      // One process stops at the step (every step on CPU, where reading the loss costs nothing;
      // every 20th on CUDA, where it synchronises). Data-parallel ranks stop together at the
      // epoch's summed loss below: one rank stopping alone would leave the others waiting in a
      // collective.
      if (!std::isfinite(running) && collectives().world_size() == 1)
        stop_diverged(epoch, fmt::format("step {}", stats.steps), "training loss", running, stats);
      bar.set_status(fmt::format("loss {:.4f}", running));
    }
  }
  bar.finish();
  stats.train_seconds = seconds_since(train_start);
  stats.wait_seconds = prefetcher.wait_seconds();
  // The epoch's loss, units and OOM events over every rank (a rank that split its batches
  // shows in the job's metrics, which rank 0 writes).
  const auto count = [&](auto value) {
    return torch::full({}, static_cast<double>(value), loss_sum.options());
  };
  const auto summed = outside_the_step(epoch, "metrics", [&] {
    std::vector<at::Tensor> totals = {torch::stack(
        {loss_sum, count(rank_units), count(stats.oom_events), count(stats.split_steps)})};
    collectives().all_reduce_sum(totals);
    return totals[0].cpu();
  });
  stats.units = static_cast<std::uint64_t>(summed[1].item<double>());
  stats.oom_events = static_cast<std::int64_t>(summed[2].item<double>());
  stats.split_steps = static_cast<std::int64_t>(summed[3].item<double>());
  stats.train_loss =
      stats.units == 0 ? 0.0 : summed[0].item<double>() / static_cast<double>(stats.units);
  if (!std::isfinite(stats.train_loss))
    stop_diverged(epoch, fmt::format("by step {}", stats.steps), "training loss", stats.train_loss,
                  stats);
  return stats;
}

// An epoch of a task that trains itself (training_task.hpp: OwnEpochs): no batches and no guarded
// step, so out of memory in it ends the run like any work outside the step.
EpochStats EpochLoop::train_own_epoch(std::int64_t epoch) {
  set_training_mode(task_, true);
  const auto start = Clock::now();
  const auto pass =
      outside_the_step(epoch, "training", [&] { return task_.own_epochs->train_epoch(epoch); });
  EpochStats stats;
  stats.train_seconds = seconds_since(start);
  stats.units = pass.units;
  stats.steps = pass.steps;
  stats.train_loss = pass.mean_loss;
  check_host_memory(host_budget_, fmt::format("epoch {}", epoch + 1), how_to_go_on());
  if (!std::isfinite(stats.train_loss))
    stop_diverged(epoch, "training", "training loss", stats.train_loss, stats);
  return stats;
}

void EpochLoop::finish_epoch(std::int64_t epoch, const EpochStats& stats,
                             Clock::time_point epoch_start) {
  const bool cuda = device_.is_cuda();
  set_training_mode(task_, false);
  adopt_rank0_buffers();
  // Validation batches that run out of memory are split (for_each_batch); what is left to fail
  // here is a single graph or the metrics computed over them.
  const auto validation_start = Clock::now();
  const ValidationResult validation = outside_the_step(epoch, "validation", [&] {
    torch::NoGradGuard no_grad;
    AutocastScope autocast(precision_, device_);
    return task_.validate();
  });
  const double validation_seconds = seconds_since(validation_start);
  if (!std::isfinite(validation.loss))
    stop_diverged(epoch, "validation", "validation loss", validation.loss, stats);
  const auto snapshot = memory::memory_snapshot(cuda_index_);
  const auto epoch_peak = memory::device_peak_bytes(snapshot, cuda);
  state_.peak_tensor_bytes = std::max(state_.peak_tensor_bytes, epoch_peak);

  const bool improved = validation.loss < state_.best_loss;
  double best_checkpoint_seconds = 0;
  if (improved) {
    state_.best_loss = validation.loss;
    state_.best_epoch = epoch;
    state_.best_metrics = validation.metrics;
    state_.bad_epochs = 0;
    CheckpointInfo info = task_.checkpoint;
    info.store_identity = task_.data_identity;
    info.epoch = epoch;
    info.validation_loss = validation.loss;
    const auto checkpoint_start = Clock::now();
    if (util::process_role().writes())
      outside_the_step(epoch, "checkpoint",
                       [&] { save_model_checkpoint(run_.best_checkpoint(), *task_.model, info); });
    best_checkpoint_seconds = seconds_since(checkpoint_start);
  } else {
    ++state_.bad_epochs;
  }
  state_.epochs_done = epoch + 1;
  state_.loss_scale = step_ ? step_->loss_scaler().current_scale() : 0.0;

  const double units_per_second =
      stats.train_seconds > 0 ? static_cast<double>(stats.units) / stats.train_seconds : 0.0;
  nlohmann::json line = {
      {"type", "epoch"},
      {"epoch", epoch},
      {"train_loss", stats.train_loss},
      {"validation_loss", validation.loss},
      {"validation", validation.metrics},
      {"best", improved},
      {units_, stats.units},
      {"steps", stats.steps},
      {"seconds", seconds_since(epoch_start)},
      // Where the epoch's seconds went besides the steps (last.pt is written after this line).
      {"train_seconds", stats.train_seconds},
      {"validation_seconds", validation_seconds},
      {"best_checkpoint_seconds", best_checkpoint_seconds},
      {units_ + "_per_second", units_per_second},
      {"batch_wait_seconds", stats.wait_seconds},
      {"learning_rate", effective_learning_rate(config_)},
      {"memory", snapshot},
      {"plan", stats.plan_info},
      {"oom_events", stats.oom_events},
      {"split_steps", stats.split_steps},
      {"max_micro_batches", stats.max_parts},
      {"memory_budget", budget_},
      {"utilization", static_cast<double>(epoch_peak) / static_cast<double>(budget_)}};
  if (step_ && step_->loss_scaler().enabled())
    line["loss_scale"] = step_->loss_scaler().current_scale();
  emit(line);
  run_.log(fmt::format(
      "epoch {:>3}/{}  train loss {:.5f}  val loss {:.5f}{}  {:.0f} {}/s  wait {:.3f}s  "
      "peak {:.1f} MiB",
      epoch + 1, config_.optimisation.max_epochs, stats.train_loss, validation.loss,
      improved ? " *" : "", units_per_second, units_, stats.wait_seconds,
      static_cast<double>(epoch_peak) / (1 << 20)));
  if (util::process_role().writes()) {
    util::arm_kill_while_writing(epoch + 1, run_.state_checkpoint());  // HEADROOM_INJECT_KILL
    save_state_named_on_oom(epoch, cuda);
  }
  util::kill_if_injected_at_epoch_end(epoch + 1);
}

// A loss that is NaN or infinite stays so (every later update is NaN): the run stops at the first
// one instead of training on to epochs of NaN, a NaN "best" model and metrics that fail far from
// the cause. metrics.jsonl gets a "diverged" line with what ran (a resume drops it with the
// epoch); last.pt keeps the last finite epoch; no result.json is written.
void EpochLoop::stop_diverged(std::int64_t epoch, const std::string& where, const char* loss_name,
                              double loss, const EpochStats& stats) {
  // JSON has no NaN or infinity: written as text, without the sign a NaN may carry.
  const std::string value = std::isnan(loss) ? "NaN" : loss > 0 ? "inf" : "-inf";
  emit({{"type", "diverged"},
        {"epoch", epoch},
        {"where", where},
        {"steps", stats.steps},
        {"loss_name", loss_name},
        {"loss", value},
        {"learning_rate", effective_learning_rate(config_)},
        {units_, stats.units},
        {"oom_events", stats.oom_events}});
  const auto message = fmt::format(
      "training diverged: the {} is {} in epoch {} ({}) of {} on store {}, at learning rate "
      "{}; stopped at the first non-finite loss. {}. Lower --learning-rate or set "
      "--gradient-clip; a loss that is not finite from the first step on points at the store's "
      "values (headroom inspect --verify)",
      loss_name, value, epoch + 1, where, util::printable_path(run_.path()),
      util::printable_path(config_.run.store), effective_learning_rate(config_),
      state_.epochs_done > 0
          ? fmt::format("last.pt keeps epoch {}, the last with finite losses", state_.epochs_done)
          : std::string("No epoch finished with finite losses"));
  // The log keeps the line; the message itself is printed once, by whoever catches it.
  run_.log(
      fmt::format("stopped: the {} is {} in epoch {} ({})", loss_name, value, epoch + 1, where));
  throw std::runtime_error(message);
}

// last.pt is replaced atomically: when writing it runs out of memory, it still holds the epoch
// before, and that is where the same command resumes.
void EpochLoop::save_state_named_on_oom(std::int64_t epoch, bool cuda) {
  try {
    const util::AllocationSite site("checkpoint");
    save_state(run_, config_, task_, optimizer_, state_, cuda);
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

TrainingOutcome run_budgeted_training(const TrainingConfig& config, const RunContext& context,
                                      RunDirectory& run, TrainingTask& task,
                                      const LoopHooks& hooks) {
  if (auto finished = finished_training(config, run, task.data_identity)) return *finished;
  // Every rank resumes, or every rank starts over: rank 0 decides (it writes the run directory).
  // What `prepare` leaves cached is released before the first epoch, which then measures its own
  // peak.
  // Only the prefetch depth changes: it is not part of the configuration a resume must match.
  TrainingConfig adapted = config;
  adapted.run.prefetch_depth = context.host_plan.prefetch_depth;
  if (task.prepare)
    run_prepare_within_budget(task, context.device_budget, context.device, run);
  else
    memory::release_cached_host_memory();  // a new phase: what the last stage freed goes back

  EpochLoop loop(adapted, context, run, task, hooks);
  TrainingOutcome outcome;
  loop.start(agree_with_rank0(collectives(), resumable_training(config, run)), outcome);
  record_training_config(config, run, task.data_identity);
  loop.run(outcome);
  run.write_result({{"training", outcome}});
  // The other ranks go on to read what rank 0 wrote (best.pt): they wait until it has.
  agree_with_rank0(collectives(), true);
  return outcome;
}

}  // namespace headroom::train
