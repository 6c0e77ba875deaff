#include "headroom/synthetic/synthetic_traffic.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <cctype>
#include <charconv>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <system_error>

#include "headroom/synthetic/synthetic_vehicle.hpp"
#include "headroom/util/bounded_json.hpp"
#include "headroom/util/byte_size.hpp"
#include "headroom/util/file_reader.hpp"
#include "headroom/util/output_path.hpp"
#include "headroom/util/printable_text.hpp"
#include "headroom/util/staged_directory.hpp"
#include "synthetic_attacks.hpp"
#include "synthetic_bus.hpp"
#include "synthetic_csv_writer.hpp"
#include "synthetic_output_dir.hpp"
#include "synthetic_random.hpp"

namespace headroom::synthetic {
namespace {

using detail::AttackKind;

struct FilePlan {
  const char* directory;
  AttackKind attack;
  int number;                    // the N of <type>-N.csv
  std::uint64_t share_permille;  // of the total frame count
};

// Training sees normal driving and two attack types; the first test condition repeats those
// attacks on new recordings, the second holds an attack type training never saw. Shares: 60%
// train (35% of the total attack-free, so normal behaviour is well covered), 20% per test
// condition, so each condition has enough frames for stable metrics.
constexpr FilePlan kLayout[] = {
    {"train_01_attack_free", AttackKind::kNone, 1, 200},
    {"train_01_attack_free", AttackKind::kNone, 2, 150},
    {"train_02_with_attacks", AttackKind::kDos, 1, 125},
    {"train_02_with_attacks", AttackKind::kFuzzing, 1, 125},
    {"test_01_known_vehicle_known_attack", AttackKind::kDos, 2, 100},
    {"test_01_known_vehicle_known_attack", AttackKind::kFuzzing, 2, 100},
    {"test_02_known_vehicle_unknown_attack", AttackKind::kSpoofing, 1, 200},
};

// The manifest's identification, as manifest_json writes it.
constexpr const char* kGeneratorName = "headroom generate";
constexpr const char* kDatasetFormat = "can-train-and-test";

// 2023-01-01T00:00:00Z: recordings get Unix-like timestamps, one day apart.
constexpr std::int64_t kEpochUs = 1'672'531'200'000'000;
constexpr std::int64_t kDayUs = 86'400'000'000;
constexpr std::int64_t kHourUs = 3'600'000'000;

SyntheticFileSummary write_file(const std::filesystem::path& root, const FilePlan& plan,
                                std::size_t index, const SyntheticVehicle& vehicle,
                                std::uint64_t seed, std::uint64_t frames) {
  SyntheticFileSummary summary;
  summary.attack_type = std::string(detail::attack_type_name(plan.attack));
  summary.relative_path = std::filesystem::path(plan.directory) /
                          (summary.attack_type + "-" + std::to_string(plan.number) + ".csv");
  summary.frames = frames;

  detail::SyntheticRng rng(detail::mix_seed(seed, 1'000 + index));
  const std::int64_t start_us = kEpochUs + static_cast<std::int64_t>(index) * kDayUs +
                                static_cast<std::int64_t>(rng.below(kHourUs));
  std::optional<detail::AttackInjector> attacker;
  if (plan.attack != AttackKind::kNone) {
    attacker.emplace(plan.attack, vehicle,
                     detail::plan_attack_intervals(plan.attack, vehicle, start_us, frames, rng),
                     rng.next());
  }
  detail::SyntheticBus bus(vehicle, rng.next(), start_us, attacker ? &*attacker : nullptr);

  const std::filesystem::path path = root / summary.relative_path;
  std::filesystem::create_directories(path.parent_path());
  detail::CanCsvWriter writer(path);
  detail::SyntheticFrame frame;
  for (std::uint64_t n = 0; n < frames; ++n) {
    bus.next(frame);
    writer.write(frame);
    summary.attack_frames += frame.label;
  }
  writer.finish();
  return summary;
}

// The ID as the CSV files write it: uppercase hex without a prefix.
std::string hex_id(std::uint32_t id) {
  char text[8];
  const auto end = std::to_chars(text, text + sizeof text, id, 16).ptr;
  std::string out(text, end);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return out;
}

std::string manifest_json(const SyntheticDatasetOptions& options, const SyntheticVehicle& vehicle,
                          const SyntheticDatasetSummary& summary) {
  nlohmann::ordered_json files = nlohmann::ordered_json::array();
  for (const auto& file : summary.files) {
    files.push_back({{"path", file.relative_path.generic_string()},
                     {"attack_type", file.attack_type},
                     {"frames", file.frames},
                     {"attack_frames", file.attack_frames}});
  }
  nlohmann::ordered_json ecus = nlohmann::ordered_json::array();
  for (const auto& ecu : vehicle.ecus) {
    nlohmann::ordered_json entry = {{"id", hex_id(ecu.id)},
                                    {"period_ms", ecu.period_us / 1'000},
                                    {"jitter_us", ecu.jitter_us},
                                    {"dlc", ecu.dlc},
                                    {"rolling_counter", ecu.counter.has_value()}};
    entry["checksum"] = !ecu.checksum                              ? "none"
                        : ecu.checksum->kind == ChecksumKind::kSum ? "sum"
                                                                   : "xor";
    ecus.push_back(std::move(entry));
  }
  const nlohmann::ordered_json manifest = {
      {"generator", kGeneratorName},
      {"headroom_version", HEADROOM_VERSION},
      {"layout_revision", kSyntheticLayoutRevision},
      {"format", kDatasetFormat},
      {"seed", options.seed},
      {"total_frames", options.total_frames},
      {"files", std::move(files)},
      {"ecus", std::move(ecus)},
  };
  return manifest.dump(2) + "\n";
}

// synthetic.json, a split directory of the layout, or one of the layout's CSV files in it.
bool is_dataset_entry(const std::filesystem::path& relative, bool is_directory) {
  if (relative == kSyntheticManifestName) return !is_directory;
  for (const FilePlan& plan : kLayout) {
    if (relative == plan.directory) return is_directory;
    const auto file = std::filesystem::path(plan.directory) /
                      (std::string(detail::attack_type_name(plan.attack)) + "-" +
                       std::to_string(plan.number) + ".csv");
    if (relative == file) return !is_directory;
  }
  return false;
}

// The manifest under `root` if it is one `headroom generate` wrote; nullopt otherwise (`why` says
// why when given).
std::optional<nlohmann::json> generated_manifest(const std::filesystem::path& root,
                                                 std::string* why = nullptr) {
  const auto manifest = root / kSyntheticManifestName;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(std::filesystem::symlink_status(manifest, ec))) {
    if (why) *why = "it has no " + std::string(kSyntheticManifestName) + " file";
    return std::nullopt;
  }
  // Bounded: a manifest is a few KiB, and the name could hold a huge sparse file.
  const auto text = util::read_file_if_readable(manifest);
  auto json = util::parse_json_or_discarded(text.value_or(std::string()));
  if (!json.is_object() || json.value("generator", "") != kGeneratorName ||
      json.value("format", "") != kDatasetFormat || !json.contains("files")) {
    if (why) *why = std::string(kSyntheticManifestName) + " is not one `headroom generate` wrote";
    return std::nullopt;
  }
  return json;
}

std::string why_not_a_dataset(const std::filesystem::path& root) {
  std::string why;
  if (!generated_manifest(root, &why)) return why;
  return util::describe_foreign_entries(util::foreign_entries(root, is_dataset_entry));
}

}  // namespace

util::DirectoryKind synthetic_dataset_kind() {
  return {"synthetic dataset", why_not_a_dataset, is_dataset_entry};
}

std::optional<GeneratedDataset> generated_dataset(const std::filesystem::path& root) {
  const auto manifest = generated_manifest(root);
  if (!manifest) return std::nullopt;
  const auto number = [&](const char* key, auto fallback) {
    const auto it = manifest->find(key);
    return it != manifest->end() && it->is_number_integer() ? it->get<decltype(fallback)>()
                                                            : fallback;
  };
  GeneratedDataset dataset;
  dataset.options.seed = number("seed", std::uint64_t{0});
  dataset.options.total_frames = number("total_frames", std::uint64_t{0});
  dataset.layout_revision = number("layout_revision", 1);
  return dataset;
}

namespace {

// Bytes per frame of the CSV rows the writer produces for `vehicle`, measured on a stretch of its
// traffic: attack rows have the same fields, so the mean holds for the whole dataset to a few
// percent.
double measured_bytes_per_frame(const SyntheticVehicle& vehicle, std::uint64_t seed) {
  constexpr std::uint64_t kSampleFrames = 4'096;
  detail::SyntheticBus bus(vehicle, detail::mix_seed(seed, 1'000), kEpochUs, nullptr);
  detail::SyntheticFrame frame;
  char row[detail::CanCsvWriter::kMaxRowBytes];
  std::uint64_t bytes = 0;
  for (std::uint64_t n = 0; n < kSampleFrames; ++n) {
    bus.next(frame);
    bytes += detail::CanCsvWriter::format_row(frame, row);
  }
  return static_cast<double>(bytes) / static_cast<double>(kSampleFrames);
}

// The closest directory that exists at or above `path`: where a directory about to be created
// takes its space from.
std::filesystem::path nearest_existing_directory(const std::filesystem::path& path) {
  std::filesystem::path candidate = std::filesystem::absolute(path);
  std::error_code unknown;
  while (!std::filesystem::is_directory(candidate, unknown) && candidate.has_relative_path())
    candidate = candidate.parent_path();
  return candidate;
}

// Refuses a dataset the file system holding `root` has no room for, before anything is created:
// `--frames 1000000000000` would otherwise write until the disk is full (about 40 TB).
void require_room_for(const std::filesystem::path& root, const SyntheticDatasetOptions& options,
                      const SyntheticVehicle& vehicle) {
  // Headers, synthetic.json and the last partly filled block of each file: well inside this.
  constexpr double kFixedBytes = 1 << 20;
  const double needed =
      static_cast<double>(options.total_frames) * measured_bytes_per_frame(vehicle, options.seed) +
      kFixedBytes;
  // The staging directory is made beside `root`, so the space comes from root's parent.
  std::error_code unknown;
  const auto space = std::filesystem::space(
      nearest_existing_directory(std::filesystem::absolute(root).parent_path()), unknown);
  if (unknown) return;  // no answer (an unusual file system): the writes say it if it fills
  const auto available = static_cast<double>(space.available);
  if (needed <= available) return;
  throw std::runtime_error(
      fmt::format("{} frames need about {}, the file system holding {} has {} free (give fewer "
                  "--frames, or another --out)",
                  options.total_frames, util::format_byte_size(needed), util::printable_path(root),
                  util::format_byte_size(available)));
}

}  // namespace

double synthetic_bytes_per_frame(std::uint64_t seed) {
  return measured_bytes_per_frame(make_synthetic_vehicle(seed), seed);
}

SyntheticDatasetSummary generate_synthetic_dataset(const std::filesystem::path& root,
                                                   const SyntheticDatasetOptions& options,
                                                   bool overwrite) {
  if (options.total_frames < kMinSyntheticFrames) {
    throw std::invalid_argument("the frame count must be at least " +
                                std::to_string(kMinSyntheticFrames) + " (got " +
                                std::to_string(options.total_frames) + ")");
  }
  const SyntheticVehicle vehicle = make_synthetic_vehicle(options.seed);
  // Before the room check, which would say "0 B free" of /proc or /sys.
  util::require_storage_location(root, "the " + synthetic_dataset_kind().what);
  require_room_for(root, options, vehicle);
  util::StagedDirectory staged(root, overwrite, synthetic_dataset_kind());

  SyntheticDatasetSummary summary;
  summary.ecu_count = vehicle.ecus.size();
  std::uint64_t assigned = 0;
  for (std::size_t i = 0; i < std::size(kLayout); ++i) {
    const FilePlan& plan = kLayout[i];
    // Split as total * share / 1000 without overflowing for huge totals.
    const std::uint64_t frames =
        i + 1 == std::size(kLayout)
            ? options.total_frames - assigned
            : options.total_frames / 1'000 * plan.share_permille +
                  options.total_frames % 1'000 * plan.share_permille / 1'000;
    assigned += frames;
    summary.files.push_back(write_file(staged.staging(), plan, i, vehicle, options.seed, frames));
  }
  detail::write_synced_file(staged.staging() / kSyntheticManifestName,
                            manifest_json(options, vehicle, summary));
  staged.commit();
  return summary;
}

}  // namespace headroom::synthetic
