#include "headroom/train_cli/training_flags.hpp"
#include "headroom/cli/not_negative.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <CLI/CLI.hpp>
#include <algorithm>
#include <iostream>
#include <stdexcept>
#include <vector>

#include "headroom/train/families/model_family.hpp"
#include "headroom/util/byte_size.hpp"
#include "headroom/util/thread_count.hpp"

namespace headroom::cli {

namespace {
constexpr const char* kModelGroup = "Model (default: the preset's value)";
constexpr const char* kOptimisationGroup = "Optimisation";
constexpr const char* kDistillationGroup = "Distillation";
constexpr const char* kCurriculumGroup = "Curriculum";
constexpr const char* kRunGroup = "Device and run";
constexpr const char* kMemoryGroup = "Memory";
constexpr const char* kFusionGroup = "Fusion";
// 200 windows of 100 frames: 10-20 s of traffic on the hcrl_sa vehicles.
constexpr std::int64_t kDefaultVehicleCalibrationWindows = 200;
}  // namespace

void TrainingFlags::add_to(CLI::App& command, FlagGroups groups, bool with_store, bool with_preset,
                           bool shares_preprocess_flags) {
  const std::string system = kRunGroup;
  if (with_store)
    command
        .add_option("--store", config.run.store,
                    "Graph store to train on (from `headroom preprocess`)")
        ->required();
  if (with_preset)
    command
        .add_option("--preset", preset,
                    fmt::format("MODEL,SIZE: {}; teacher or student (a node-graph store: gcn or "
                                "gat alone)",
                                fmt::join(train::model_family_names(), ", ")))
        ->capture_default_str();
  command
      .add_option("--dataset", config.run.dataset, "Run-directory name (default: the store's name)")
      ->group(system);
  command.add_option("--runs-dir", config.run.runs_dir, "Root of run directories")
      ->capture_default_str()
      ->group(system);

  if (groups.model) add_model_flags(command);
  add_optimisation_flags(command, groups, shares_preprocess_flags);
  add_run_flags(command, shares_preprocess_flags);
  add_memory_flags(command);
  if (groups.distillation) add_distillation_flags(command);
  if (groups.curriculum) add_curriculum_flags(command);
  if (groups.fusion) add_fusion_flags(command);
  add_evaluation_flags(command, groups);
}

void TrainingFlags::add_evaluation_flags(CLI::App& command, FlagGroups groups) {
  auto& c = config;
  if (groups.evaluation)
    command
        .add_option("--models", c.evaluation.models,
                    "Evaluation: run directories or checkpoints (default: every classifier run)")
        ->delimiter(',')
        ->group("Evaluation");
  if (groups.calibration)
    command
        .add_option("--calibration", c.evaluation.calibration,
                    "Decision threshold a classifier stage chooses on validation: f1 "
                    "(F1-optimal), fpr (at most --target-fpr false alarms) or none (0.5 only)")
        ->check(CLI::IsMember({"f1", "fpr", "none"}))
        ->capture_default_str()
        ->group("Evaluation");
  // On the command line vehicle calibration is on: the veh columns are what a new vehicle's
  // deployment would see (docs/detection.md); they are reported beside, not instead of, 0.5 and
  // the validation threshold.
  c.evaluation.vehicle_calibration_windows = kDefaultVehicleCalibrationWindows;
  if (groups.evaluation)
    command
        .add_option("--vehicle-calibration", c.evaluation.vehicle_calibration_windows,
                    "Evaluation: also decide each test file at a threshold set on its first N "
                    "normal windows (a short attack-free recording of that vehicle, ~N x 100 "
                    "frames); 0: off")
        ->capture_default_str()
        ->group("Evaluation");
  if (groups.evaluation) {
    command
        .add_option("--label-free-windows", c.evaluation.label_free_windows,
                    "Evaluation: decide each test file at a threshold set on its first N windows "
                    "whatever their labels (no label read: what a deployment on a new vehicle "
                    "can do); 0: off")
        ->capture_default_str()
        ->group("Evaluation");
    command
        .add_option("--label-free-fence", c.evaluation.label_free_fence_mads,
                    "Label-free threshold: scores above median + K robust spreads (1.4826 MAD) "
                    "of the first windows are left out as likely attacks before the threshold "
                    "is set at --target-fpr")
        ->capture_default_str()
        ->group("Evaluation");
    command
        .add_flag("--label-free-batch-norm,!--no-label-free-batch-norm",
                  c.evaluation.label_free_batch_norm,
                  "Evaluation: label-free, re-estimate an autoencoder's BatchNorm statistics on "
                  "the first half of each test file's adaptation windows (AdaBN)")
        ->group("Evaluation");
    command
        .add_option("--anomaly-top-nodes", c.evaluation.anomaly_top_nodes,
                    "Evaluation: score an autoencoder by the mean z of its K most anomalous "
                    "nodes, each against normal nodes of its identity; 0: its graph score (the "
                    "mean node error)")
        ->capture_default_str()
        ->group("Evaluation");
    command
        .add_flag("--baseline,!--no-baseline", c.evaluation.baseline,
                  "Evaluation: also score the classical baseline (per-ID inter-arrival times and "
                  "ID transitions of the store's CAN files, no GNN) as a row of every table")
        ->group("Evaluation");
  }
  if (groups.calibration)
    command
        .add_option("--target-fpr", c.evaluation.target_fpr,
                    "False-positive rate on normal validation graphs for --calibration fpr")
        ->capture_default_str()
        ->group("Evaluation");
}

void TrainingFlags::add_model_flags(CLI::App& command) {
  auto& c = config;
  const std::string model = kModelGroup;
  // An override set only when given, straight into the configuration's optional field.
  const auto add_override = [&](const char* key, const char* flag, auto& field, const char* help) {
    using Value = typename std::remove_reference_t<decltype(field)>::value_type;
    overrides[key] = command
                         .add_option_function<Value>(
                             flag, [&field](const Value& value) { field = value; }, help)
                         ->group(model);
  };
  add_override("hidden", "--hidden", c.model.hidden, "GAT hidden channels per head");
  add_override("layers", "--layers", c.model.layers,
               "GAT layers (node SGC: its propagation steps K)");
  add_override("heads", "--heads", c.model.heads, "Attention heads");
  add_override("embedding_dim", "--embedding-dim", c.model.embedding_dim, "CAN-ID embedding size");
  add_override("fc_layers", "--fc-layers", c.model.fc_layers, "GAT fully connected layers");
  add_override("latent", "--latent", c.model.latent, "VGAE latent size");
  overrides["vgae_hidden"] =
      command
          .add_option("--vgae-hidden", c.model.vgae_hidden, "VGAE encoder widths (comma-separated)")
          ->delimiter(',')
          ->group(model);
  overrides["vgae_layout"] =
      command
          .add_option("--vgae-layout", c.model.vgae_layout,
                      "VGAE layers: kd-gat (upstream's model) or mirrored (headroom's first VGAE)")
          ->check(CLI::IsMember({"kd-gat", "mirrored"}))
          ->capture_default_str()
          ->group(model);
  add_override("dropout", "--dropout", c.model.dropout, "Dropout rate");
  overrides["gradient_checkpointing"] =
      command
          .add_option_function<std::string>(
              "--gradient-checkpointing",
              [&c](const std::string& text) {
                c.model.gradient_checkpointing = train::parse_checkpointing(text);
              },
              "Recompute each GAT layer in the backward pass: auto (off when the step without it "
              "fits the budget at the largest batch packed, on otherwise), on or off")
          ->check(CLI::IsMember({"auto", "on", "off", "true", "false"}))
          ->default_str("auto")
          ->group(model);
}

void TrainingFlags::add_optimisation_flags(CLI::App& command, FlagGroups groups,
                                           bool shares_preprocess_flags) {
  auto& c = config;
  const std::string optim = kOptimisationGroup;
  if (groups.optimiser) {
    command
        .add_option("--learning-rate", c.optimisation.learning_rate,
                    "Adam learning rate (0: 0.002 VGAE, 0.003 GAT teacher, 0.001 GAT student)")
        ->capture_default_str()
        ->group(optim);
    command.add_option("--weight-decay", c.optimisation.weight_decay, "Adam weight decay")
        ->capture_default_str()
        ->group(optim);
    command
        .add_option("--gradient-clip", c.optimisation.gradient_clip,
                    "Max gradient L2 norm (0: off)")
        ->capture_default_str()
        ->group(optim);
  }
  if (groups.training)
    command.add_option("--batch-size", c.optimisation.batch_size, "Graphs per training batch")
        ->capture_default_str()
        ->group(optim);
  command
      .add_option("--eval-batch-size", c.optimisation.eval_batch_size,
                  "Graphs per validation, evaluation and difficulty batch")
      ->capture_default_str()
      ->group(optim);
  if (groups.training)
    command.add_option("--max-epochs", c.optimisation.max_epochs, "Epochs at most")
        ->capture_default_str()
        ->group(optim);
  if (groups.optimiser) {
    command
        .add_option("--patience", c.optimisation.patience,
                    "Early stopping: epochs without improvement")
        ->capture_default_str()
        ->group(optim);
    if (!shares_preprocess_flags)
      command
          .add_option("--seed", c.run.seed, "Seed of initialisation, shuffling, dropout, sampling")
          ->check(not_negative())
          ->capture_default_str()
          ->group(optim);
  }
}

void TrainingFlags::add_run_flags(CLI::App& command, bool shares_preprocess_flags) {
  auto& c = config;
  const std::string system = kRunGroup;
  command.add_option("--device", c.run.device, "cpu, cuda or cuda:N")
      ->capture_default_str()
      ->group(system);
  command.add_option("--precision", c.run.precision, "32, bf16-mixed or 16-mixed (CUDA)")
      ->check(CLI::IsMember({"32", "bf16-mixed", "16-mixed"}))
      ->capture_default_str()
      ->group(system);
  if (!shares_preprocess_flags)
    command
        .add_option("--threads", c.run.threads,
                    "CPU threads for LibTorch (0: all cores; more than the cores is capped)")
        ->capture_default_str()
        ->group(system);
  command.add_option("--prefetch-depth", c.run.prefetch_depth, "Batches collated ahead")
      ->capture_default_str()
      ->group(system);
  command.add_option("--progress", c.run.progress, "Progress bar on a terminal (true/false)")
      ->capture_default_str()
      ->group(system);
  command
      .add_option("--resume", c.run.resume,
                  "Continue an interrupted run in its run directory (false: start over)")
      ->capture_default_str()
      ->group(system);
  if (!shares_preprocess_flags)
    command
        .add_flag_callback(
            "--wait-for-lock", [&c] { c.run.when_locked = util::WhenLocked::kWait; },
            "When another headroom process is training in the same run directory: wait for it "
            "instead of failing")
        ->group(system);
  command
      .add_option("--distributed", distributed,
                  "auto: data-parallel when launched by torchrun or srun; off: one process")
      ->check(CLI::IsMember({"auto", "off"}))
      ->capture_default_str()
      ->group(system);
  command
      .add_option("--distributed-timeout", distributed_timeout_seconds,
                  "Seconds a rank waits for the others in a collective before the job ends")
      ->check(CLI::PositiveNumber)
      ->capture_default_str()
      ->group(system);
}

void TrainingFlags::add_memory_flags(CLI::App& command) {
  auto& c = config;
  const std::string memory = kMemoryGroup;
  command
      .add_option("--memory-budget", memory_budget,
                  "Device memory for training, evaluation and scoring, e.g. 1GB, 512MiB (default: "
                  "GPU total, or what the host budget leaves)")
      ->group(memory);
  command
      .add_option("--host-memory-budget", host_memory_budget,
                  "Host RAM for training (default: 95% of the smallest of physical RAM, the "
                  "cgroup limit, RLIMIT_AS/RLIMIT_DATA and SLURM's grant; at most that limit)")
      ->group(memory);
  command
      .add_option("--target-utilization,--safety-factor", c.memory.target_utilization,
                  "Share of the budget to fill")
      ->capture_default_str()
      ->group(memory);
  command
      .add_option("--pack-batches", c.memory.pack_batches,
                  "With --memory-budget: size batches by measured bytes (false: --batch-size "
                  "graphs, the OOM guard splits what does not fit)")
      ->capture_default_str()
      ->group(memory);
  command
      .add_option("--clear-cache-every-n", c.memory.clear_cache_every_n,
                  "CUDA: release cached blocks every N steps (0: never; each release syncs)")
      ->capture_default_str()
      ->group(memory);
  command
      .add_option("--step-metrics-every", c.memory.step_metrics_every,
                  "Write a memory sample to metrics.jsonl every N steps (0: off)")
      ->capture_default_str()
      ->group(memory);
}

void TrainingFlags::add_distillation_flags(CLI::App& command) {
  auto& c = config;
  const std::string kd = kDistillationGroup;
  command
      .add_option("--use-kd", c.distillation.enabled,
                  "Train a student by distillation (true/false)")
      ->capture_default_str()
      ->group(kd);
  command
      .add_option("--teacher-path", c.distillation.teacher_path,
                  "Teacher's best.pt or run directory")
      ->group(kd);
  command.add_option("--kd-temperature", c.distillation.temperature, "Softmax temperature T")
      ->capture_default_str()
      ->group(kd);
  command.add_option("--kd-alpha", c.distillation.alpha, "Weight of the distillation term")
      ->capture_default_str()
      ->group(kd);
  command
      .add_option("--use-teacher-cache", c.distillation.teacher_cache,
                  "Compute the frozen teacher's outputs once into a memory-mapped cache")
      ->capture_default_str()
      ->group(kd);
  command
      .add_option("--offload-teacher-to-cpu", c.distillation.offload_teacher,
                  "Without the cache, on CUDA: keep the teacher in pinned host memory")
      ->capture_default_str()
      ->group(kd);
}

void TrainingFlags::add_curriculum_flags(CLI::App& command) {
  auto& c = config;
  const std::string curriculum = kCurriculumGroup;
  command
      .add_option("--autoencoder-path", c.curriculum.autoencoder_path,
                  "VGAE scoring difficulty (default: this size's autoencoder run)")
      ->group(curriculum);
  command
      .add_option("--curriculum-start-ratio", c.curriculum.schedule.start_ratio,
                  "Normals per attack graph at the start")
      ->capture_default_str()
      ->group(curriculum);
  command
      .add_option("--curriculum-ratio-growth", c.curriculum.schedule.ratio_growth,
                  "Added to the ratio by the last epoch")
      ->capture_default_str()
      ->group(curriculum);
  command
      .add_option("--curriculum-start-percentile", c.curriculum.schedule.start_percentile,
                  "Hardness percentile at the start")
      ->capture_default_str()
      ->group(curriculum);
  command
      .add_option("--curriculum-percentile-growth", c.curriculum.schedule.percentile_growth,
                  "Added to the percentile by the last epoch")
      ->capture_default_str()
      ->group(curriculum);
}

void TrainingFlags::add_fusion_flags(CLI::App& command) {
  auto& c = config;
  const std::string fusion = kFusionGroup;
  command
      .add_option("--fusion-method", c.fusion.method,
                  "Stage fusion: dqn (a Double DQN picks the classifier's weight per graph) or "
                  "logistic (logistic regression on the same state)")
      ->check(CLI::IsMember({"dqn", "logistic"}))
      ->capture_default_str()
      ->group(fusion);
  command
      .add_option("--fusion-classifier", c.fusion.classifier_path,
                  "Classifier run directory or best.pt to fuse (default: "
                  "runs/{dataset}/student_curriculum_kd)")
      ->group(fusion);
  command
      .add_option("--fusion-autoencoder", c.fusion.autoencoder_path,
                  "VGAE run directory or best.pt to fuse (default: "
                  "runs/{dataset}/student_autoencoder_kd)")
      ->group(fusion);
  command
      .add_option("--fusion-gamma", c.fusion.gamma,
                  "DQN discount of the next graph's value (0: each graph on its own)")
      ->capture_default_str()
      ->group(fusion);
  command
      .add_option("--fusion-epochs", c.fusion.max_epochs,
                  "Epochs of stage fusion (not --max-epochs: a fusion epoch takes milliseconds)")
      ->capture_default_str()
      ->group(fusion);
  command
      .add_option("--fusion-holdout", c.fusion.holdout_fraction,
                  "Share of the validation graphs held out of fitting to choose the best epoch")
      ->capture_default_str()
      ->group(fusion);
  command
      .add_flag("--fusion-with-baseline", c.fusion.with_baseline,
                "A hybrid fusion: the classical baseline's window score is one more input "
                "(logistic only; run directory hybrid_{method})")
      ->group(fusion);
}

void TrainingFlags::require_flags_of_family(std::string_view family) const {
  // `overrides` is keyed by the ModelOptions field each flag sets (add_model_flags).
  const auto& trained = train::model_family(family);
  for (const auto& [option, flag] : overrides) {
    if (flag->count() == 0 || trained.reads_option(option)) continue;
    std::vector<std::string_view> readers;  // the families whose configuration reads it
    for (const auto name : train::model_family_names())
      if (train::model_family(name).reads_option(option)) readers.push_back(name);
    throw std::invalid_argument(fmt::format(
        "{} applies to the {} famil{}, not to {} (--preset {}): leave it out, or choose a preset "
        "of a family that reads it",
        flag->get_name(), fmt::join(readers, " and "), readers.size() == 1 ? "y" : "ies", family,
        preset));
  }
}

train::TrainingConfig TrainingFlags::resolve(train::Stage stage) const {
  train::TrainingConfig c = config;
  c.stage = stage;
  const auto comma = preset.find(',');
  const bool sized_models = stage.traits().default_preset.find(',') != std::string_view::npos;
  if (comma == std::string::npos && !sized_models) {
    c.model.family = preset;  // the stage's models have no sizes (its validation checks the name)
  } else if (comma == std::string::npos) {
    throw std::invalid_argument("--preset must be MODEL,SIZE (e.g. gat,teacher), not '" + preset +
                                "'");
  } else {
    c.model.family = std::string(train::model_family(preset.substr(0, comma)).name());
    c.model.size = models::parse_model_size(preset.substr(comma + 1));
  }
  // 0 stands for "the default" inside the configuration; given on the command line it is a
  // mistake, not a request for the whole device.
  const auto explicit_budget = [](const std::string& text, const char* flag) {
    std::int64_t bytes = 0;
    try {
      bytes = util::parse_byte_size(text);
    } catch (const std::invalid_argument& e) {  // it names the value, not the flag
      throw std::invalid_argument(std::string(flag) + ": " + e.what());
    }
    if (bytes <= 0)
      throw std::invalid_argument(std::string(flag) + " must be a positive size (e.g. 1GB), not '" +
                                  text + "'; leave it out for the default");
    return bytes;
  };
  if (!memory_budget.empty()) c.memory.budget = explicit_budget(memory_budget, "--memory-budget");
  if (!host_memory_budget.empty())
    c.memory.host_budget = explicit_budget(host_memory_budget, "--host-memory-budget");
  if (c.run.threads > 0)  // a negative count is refused by the configuration's checks
    c.run.threads = static_cast<int>(
        util::capped_thread_count(static_cast<unsigned>(c.run.threads), "--threads", std::cerr));
  return c;
}

}  // namespace headroom::cli
