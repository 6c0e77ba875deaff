// libFuzzer target: the run directories `headroom report` reads (issue 45). A small run root,
// root/ with one stage directory (student_normal/: metrics.jsonl, config.json, result.json) and
// an evaluation.json of one model, is written once with valid files; each input replaces one of
// them with its bytes:
//   byte 0, bits 0-1: which file (0 config.json, 1 result.json, 2 metrics.jsonl, 3 the run root's
//                     evaluation.json);
//   byte 0, bit 2:    report the stage directory alone instead of the run root;
//   the rest:         the file's content.
// The report is then collected and written exactly as `headroom report` does it
// (report::write_html_report, without Chart.js). The contract: it succeeds, or throws a
// std::runtime_error whose message names the replaced file; anything else (another exception,
// such as nlohmann's type errors, a crash, a sanitizer report, a hang or 2 GiB of memory) is a
// finding.
//
// Seeds: fuzz/seeds/run_directory (one per file, each the selector byte and a file headroom
// writes).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

#include "fuzz_support.hpp"
#include "headroom/report/html_report.hpp"
#include "headroom/util/file_writer.hpp"

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kMetrics =
    R"({"type":"epoch","epoch":0,"train_loss":0.7,"val_loss":0.6,"steps":3,"oom_events":0})"
    "\n"
    R"({"type":"step","step":2,"tensor_bytes":1024,"budget_bytes":4096})"
    "\n";
constexpr std::string_view kConfig =
    R"({"config":{"stage":"normal","batch_size":64,"max_epochs":1},"semantic":{}})"
    "\n";
constexpr std::string_view kResult =
    R"({"training":{"best_epoch":0,"seconds":1.5,"graphs_per_second":200.0,)"
    R"("peak_tensor_bytes":1048576}})"
    "\n";
constexpr std::string_view kEvaluation =
    R"({"student_normal":{"score":"mse","decision_threshold":0.5,"groups":[{"split":"test_01",)"
    R"("attack_type":"","seen_in_training":true,"metrics":{"count":10,"f1":0.5,"precision":0.5,)"
    R"("recall":0.5,"roc_auc":0.7,"confusion":{"true_negatives":4,"false_positives":1,)"
    R"("false_negatives":2,"true_positives":3}}}]}})"
    "\n";

fs::path root() { return headroom::fuzz::scratch_directory() / "runs" / "dataset"; }
fs::path stage() { return root() / "student_normal"; }

void write(const fs::path& file, std::string_view content) {
  headroom::util::write_file_atomically(file, content);
}

// Every file valid again: the previous input replaced one.
void write_valid_tree() {
  fs::create_directories(stage());
  write(stage() / "metrics.jsonl", kMetrics);
  write(stage() / "config.json", kConfig);
  write(stage() / "result.json", kResult);
  write(root() / "evaluation.json", kEvaluation);
}

[[noreturn]] void finding(const std::string& what) {
  std::fprintf(stderr, "run_directory fuzzer finding: %s\n", what.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // `HEADROOM_FUZZ_WRITE_SEEDS=DIR run_directory_fuzzer -runs=0` writes the seeds: each valid file
  // behind its selector byte (fuzz/seeds/run_directory holds them).
  if (const char* seeds = std::getenv("HEADROOM_FUZZ_WRITE_SEEDS")) {
    fs::create_directories(seeds);
    const std::pair<const char*, std::string_view> files[] = {{"config", kConfig},
                                                              {"result", kResult},
                                                              {"metrics", kMetrics},
                                                              {"evaluation", kEvaluation}};
    for (char selector = 0; selector < 4; ++selector) {
      const auto& [name, content] = files[static_cast<int>(selector)];
      write(fs::path(seeds) / (std::string("seed-") + name),
            std::string(1, selector) + std::string(content));
    }
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  write_valid_tree();
  const unsigned selector = data[0] & 3U;
  const bool stage_alone = (data[0] & 4U) != 0;
  const fs::path files[] = {stage() / "config.json", stage() / "result.json",
                            stage() / "metrics.jsonl", root() / "evaluation.json"};
  const fs::path& file = files[selector];
  write(file, std::string_view(reinterpret_cast<const char*>(data + 1), size - 1));
  const fs::path report = headroom::fuzz::scratch_directory() / "report.html";
  try {
    headroom::report::write_html_report(stage_alone ? stage() : root(), report,
                                        headroom::fuzz::scratch_directory() / "no-chart.js",
                                        /*replace=*/true);
  } catch (const std::runtime_error& e) {
    // A stage read alone never reads the run root's evaluation.json: the error is another's.
    if (std::string_view(e.what()).find(file.string()) == std::string_view::npos)
      finding("an error that does not name " + file.string() + ": " + e.what());
  } catch (const std::exception& e) {
    finding(std::string("not a std::runtime_error: ") + e.what());
  }
  return 0;
}
