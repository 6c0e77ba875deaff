// `headroom report`: one self-contained HTML page (no network needed to view it) about a run
// root (runs/{dataset}/, every stage directory in it and its evaluation) or one stage directory.
// Per stage: loss and validation curves, throughput, memory over steps against the budget and
// the packing target with OOM events and micro-batch splits marked, the memory plan's breakdown;
// from the evaluation: F1, precision, recall and ROC AUC per test condition and attack type,
// confusion matrices, ROC curves and the F1-by-condition table.
//
// The charts are drawn in the browser by Chart.js (Debian's libjs-chart.js), whose source the
// page carries inline beside the data; tables are plain HTML, readable without scripts.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace headroom::report {

// Everything the page shows, read from `path` (a run root or one stage directory): {"title",
// "stages": [{"name", "dir", "epochs", "steps", "config", "plan", "result"}], "evaluation":
// {model: evaluation}}. Throws std::runtime_error naming the file for unreadable JSON, and when
// `path` holds no stage (no metrics.jsonl) and no evaluation.
nlohmann::json collect_report_data(const std::filesystem::path& path);

// The page for `data` (collect_report_data), with `chart_js` (Chart.js's source) inline; an empty
// `chart_js` gives the page without charts, saying so.
std::string render_html_report(const nlohmann::json& data, const std::string& chart_js);

// What write_html_report wrote: the page, and the Chart.js file it looked for when that was
// missing (the page then has its tables and a note, and no charts).
struct WrittenReport {
  std::filesystem::path path;
  std::optional<std::filesystem::path> missing_chart_js;
};

// The line a command prints (to stderr) for a page written without charts.
std::string missing_charts_warning(const std::filesystem::path& chart_js);

// Collects, renders and writes (atomically) the report of `path` to `out`, by default
// `path`/report.html. The target is never one of the files the report reads (or looks for), and
// an existing file is replaced only when it is a report headroom wrote (is_headroom_report) and
// `replace` is set (--force); anything else throws std::runtime_error naming the file, before
// anything is written. Chart.js is read from the Debian package's file (`chart_js`, default: the
// one found at build time); where it is missing the page is written without charts (a training
// run must not fail at its last step for want of a JavaScript file) and the result names it.
WrittenReport write_html_report(const std::filesystem::path& path,
                                std::optional<std::filesystem::path> out = std::nullopt,
                                std::optional<std::filesystem::path> chart_js = std::nullopt,
                                bool replace = false);

// Whether `file` begins as every page headroom writes does (its <head> with the generator tag,
// or the head of reports written before that tag existed).
bool is_headroom_report(const std::filesystem::path& file);

}  // namespace headroom::report
