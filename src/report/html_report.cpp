#include "headroom/report/html_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "headroom/util/file_reader.hpp"
#include "headroom/util/file_writer.hpp"
#include "headroom/util/printable_text.hpp"
#include "report_page.hpp"

#ifndef HEADROOM_CHART_JS
#define HEADROOM_CHART_JS "/usr/share/javascript/chart.js/chart.min.js"
#endif

namespace headroom::report {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Every file the report reads or looks for, so that --out can never name one of them.
using ReportInputs = std::vector<fs::path>;

// Where in `text` a parse error lies, and why: "LINE:COLUMN: not JSON: REASON" (lines and columns
// from 1) for a message that names the file first. nlohmann gives the byte where parsing failed;
// its reason, after the "… at line L, column C: " prefix, quotes the input, so it is escaped.
std::string parse_error_at(std::string_view text, const json::parse_error& e,
                           std::size_t first_line = 1) {
  const std::size_t end = std::min<std::size_t>(e.byte > 0 ? e.byte - 1 : 0, text.size());
  std::size_t line = first_line;
  std::size_t line_start = 0;
  for (std::size_t i = 0; i < end; ++i)
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  std::string_view reason = e.what();
  if (const auto column = reason.find(", column "); column != std::string_view::npos)
    if (const auto colon = reason.find(": ", column); colon != std::string_view::npos)
      reason.remove_prefix(colon + 2);
  return fmt::format("{}:{}: not JSON: {}", line, end - line_start + 1, util::printable(reason));
}

json read_json_or_null(const fs::path& path, ReportInputs& inputs) {
  inputs.push_back(path);
  if (!fs::exists(path)) return nullptr;
  const auto text = util::read_file(path);
  try {
    return json::parse(text);
  } catch (const json::parse_error& e) {
    throw std::runtime_error(
        fmt::format("{}:{}", util::printable_path(path), parse_error_at(text, e)));
  }
}

// metrics.jsonl: epoch lines, and step lines with "global_step" (steps counted across epochs).
// A torn last line (the run was killed mid-write) is skipped; a bad line elsewhere is an error.
void read_metrics(const fs::path& path, json& epochs, json& steps, ReportInputs& inputs) {
  inputs.push_back(path);
  std::ifstream in(path);
  std::string line;
  std::int64_t steps_before_epoch = 0;
  for (std::size_t number = 1; std::getline(in, line); ++number) {
    if (line.empty()) continue;
    json parsed;
    try {
      parsed = json::parse(line);
    } catch (const json::parse_error& e) {
      if (in.peek() == EOF) break;
      throw std::runtime_error(
          fmt::format("{}:{}", util::printable_path(path), parse_error_at(line, e, number)));
    }
    if (!parsed.is_object())
      throw std::runtime_error(fmt::format("{}:{}: not a metrics line (a JSON object), but {}",
                                           util::printable_path(path), number, parsed.type_name()));
    const auto type = parsed.value("type", std::string());
    if (type == "epoch") {
      steps_before_epoch += parsed.value("steps", std::int64_t{0});
      epochs.push_back(std::move(parsed));
    } else if (type == "step") {
      parsed["global_step"] = steps_before_epoch + parsed.value("step", std::int64_t{0});
      steps.push_back(std::move(parsed));
    }
  }
}

// evaluation.json of stage `node` (one document with "task"), not the evaluated CAN models.
bool is_node_task_evaluation(const fs::path& file) {
  std::ifstream in(file);
  const auto document = json::parse(in, nullptr, /*allow_exceptions=*/false);
  return document.is_object() && document.value("task", "") == "node classification";
}

json collect_stage(const fs::path& dir, ReportInputs& inputs) {
  json stage = {{"name", dir.filename().string()},
                {"dir", dir.string()},
                {"epochs", json::array()},
                {"steps", json::array()}};
  read_metrics(dir / "metrics.jsonl", stage["epochs"], stage["steps"], inputs);
  const auto config = read_json_or_null(dir / "config.json", inputs);
  stage["config"] = config.is_object() ? config.value("config", json::object()) : json::object();
  stage["plan"] = read_json_or_null(dir / "memory_plan.json", inputs);
  const auto result = read_json_or_null(dir / "result.json", inputs);
  stage["result"] = result.is_object() ? result.value("training", json::object()) : json::object();
  // Stage `node` keeps its evaluation beside its metrics: per split, and how it trained.
  if (is_node_task_evaluation(dir / "evaluation.json")) {
    const auto evaluation = read_json_or_null(dir / "evaluation.json", inputs);
    if (evaluation.is_object() && evaluation.contains("splits") && evaluation["splits"].is_object())
      stage["node_evaluation"] = evaluation;
  }
  return stage;
}

// The stage directories of a run root in the order they ran (config.json is written when a
// stage starts), name order among equals.
std::vector<fs::path> stage_directories(const fs::path& root) {
  std::vector<std::pair<fs::file_time_type, fs::path>> found;
  for (const auto& entry : fs::directory_iterator(root))
    if (entry.is_directory() && fs::exists(entry.path() / "metrics.jsonl")) {
      const auto config = entry.path() / "config.json";
      found.emplace_back(fs::exists(config) ? fs::last_write_time(config) : fs::file_time_type{},
                         entry.path());
    }
  std::sort(found.begin(), found.end());
  std::vector<fs::path> dirs;
  for (auto& [time, dir] : found) dirs.push_back(std::move(dir));
  return dirs;
}

// One model's evaluation as the tables read it: an object whose "groups", when present, is an
// array of objects each with a "metrics" object. Anything else is an error naming the file and
// the model, never a report silently missing it.
void check_model_evaluation(const json& model, const fs::path& file, const std::string& name) {
  const auto fail = [&](const std::string& what) {
    throw std::runtime_error(fmt::format("{}: model '{}': {}; not an evaluation headroom wrote",
                                         util::printable_path(file), util::printable(name), what));
  };
  if (!model.is_object()) fail(fmt::format("a JSON {}, not an object", model.type_name()));
  if (!model.contains("groups")) return;
  if (!model["groups"].is_array()) fail("\"groups\" is not an array");
  for (const auto& group : model["groups"])
    if (!group.is_object() || !group.contains("metrics") || !group["metrics"].is_object())
      fail("a group without a \"metrics\" object");
}

json collect_evaluation(const fs::path& dir, ReportInputs& inputs) {
  const auto file = dir / "evaluation.json";
  inputs.push_back(file);
  if (fs::exists(file)) {
    auto combined = read_json_or_null(file, inputs);
    if (!combined.is_object())
      throw std::runtime_error(
          fmt::format("{}: holds a JSON {}, not the evaluated models (an object of model name to "
                      "evaluation); move it away, or run `headroom evaluation` again",
                      util::printable_path(file), combined.type_name()));
    for (const auto& [name, model] : combined.items()) check_model_evaluation(model, file, name);
    return combined;
  }
  json models = json::object();
  if (!fs::is_directory(dir)) return models;
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.path().extension() == ".json") {
      const auto model = read_json_or_null(entry.path(), inputs);
      if (model.is_object() && model.contains("groups")) {
        const auto name = model.value("model", entry.path().stem().string());
        check_model_evaluation(model, entry.path(), name);
        models[name] = model;
      }
    }
  return models;
}

std::string html_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// `data` as JSON text for the page's data <script> element, which the page reads with
// JSON.parse. Inside a script element the HTML parser looks for "</script" and "<!--" (which, with
// a "<script" after it, makes the next "</script>" no end at all): no string may change where the
// element ends, so '<' (and '>', '&' alike) are written as \u escapes, which only occur inside JSON
// strings, where they mean the same character. Bytes that are not UTF-8 (a file name may hold
// any) become U+FFFD instead of failing the report.
std::string json_for_script(const json& data) {
  const std::string text = data.dump(-1, ' ', false, json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '<':
        out += "\\u003c";
        break;
      case '>':
        out += "\\u003e";
        break;
      case '&':
        out += "\\u0026";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string format_metric(const json& value) {
  if (!value.is_number()) return "n/a";
  const double number = value.get<double>();
  return std::isfinite(number) ? fmt::format("{:.4f}", number) : "n/a";
}

// A 2x2 confusion matrix, each cell shaded by its share of the row (the true class).
std::string confusion_matrix_html(std::int64_t tn, std::int64_t fp, std::int64_t fn,
                                  std::int64_t tp) {
  const auto cell = [](std::int64_t count, std::int64_t row_total, bool correct) {
    const double share = row_total > 0 ? static_cast<double>(count) / row_total : 0.0;
    return fmt::format("<td style=\"background: rgba({}, {:.2f})\">{}</td>",
                       correct ? "44, 160, 44" : "214, 39, 40", 0.15 + 0.6 * share, count);
  };
  return "<table class=\"confusion\"><tr><th></th><th>pred normal</th><th>pred attack</th></tr>"
         "<tr><th>normal</th>" +
         cell(tn, tn + fp, true) + cell(fp, tn + fp, false) + "</tr><tr><th>attack</th>" +
         cell(fn, fn + tp, false) + cell(tp, fn + tp, true) + "</tr></table>";
}

// Each stage's outcome in one row (result.json), as `headroom run` prints it.
std::string stage_summary_table(const json& stages) {
  if (stages.empty()) return {};
  std::string html =
      "<h2>Stages</h2><table><tr><th>stage</th><th>epochs</th><th>best epoch</th>"
      "<th>training s</th><th>graphs/s</th><th>peak tensor MiB</th><th>OOM events</th>"
      "<th>split steps</th></tr>";
  for (const auto& stage : stages) {
    const auto& r = stage["result"];
    std::int64_t ooms = 0, splits = 0;
    for (const auto& line : stage["epochs"]) {
      ooms += line.value("oom_events", std::int64_t{0});
      splits += line.value("split_steps", std::int64_t{0});
    }
    html += fmt::format(
        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{:.1f}</td><td>{:.0f}</td><td>{:.1f}</td>"
        "<td>{}</td><td>{}</td></tr>",
        html_escape(stage.value("name", "")), stage["epochs"].size(),
        r.value("best_epoch", std::int64_t{-1}) + 1, r.value("seconds", 0.0),
        r.value("graphs_per_second", 0.0),
        static_cast<double>(r.value("peak_tensor_bytes", std::int64_t{0})) / (1 << 20), ooms,
        splits);
  }
  return html + "</table>";
}

// Each node-classification stage's evaluation: accuracy, macro-F1, documents and loss per split,
// and whether it trained full-batch or on sampled subgraphs.
std::string node_evaluation_tables(const json& stages) {
  std::string html;
  for (const auto& stage : stages) {
    if (!stage.contains("node_evaluation")) continue;
    const auto& evaluation = stage["node_evaluation"];
    const auto training = evaluation.value("training", json::object());
    const auto mode = training.value("mode", std::string("full-batch"));
    std::string how = mode;
    if (mode == "sampled" && training.contains("sampled"))
      how = fmt::format(
          "sampled subgraphs: {} parts of {} nodes per epoch (the full batch is over "
          "the memory budget)",
          training["sampled"].value("parts_per_epoch", std::int64_t{0}),
          training["sampled"].value("nodes_per_part", std::int64_t{0}));
    html += fmt::format(
        "<h2>Node classification: {}</h2><p class=\"note\">best epoch {}; trained {}</p><table>"
        "<tr><th>split</th><th>accuracy</th><th>macro-F1</th><th>nodes</th><th>loss</th></tr>",
        html_escape(stage.value("name", "")),
        evaluation.value("checkpoint_epoch", std::int64_t{-1}) + 1, html_escape(how));
    for (const auto& [split, metrics] : evaluation["splits"].items()) {
      if (!metrics.is_object()) continue;
      html += fmt::format(
          "<tr><td>{}</td><td>{:.4f}</td><td>{:.4f}</td><td>{}</td><td>{:.4f}</td></tr>",
          html_escape(split), metrics.value("accuracy", 0.0), metrics.value("macro_f1", 0.0),
          metrics.value("count", std::int64_t{0}), metrics.value("loss", 0.0));
    }
    html += "</table>";
  }
  return html;
}

// `page` with every @NAME@ slot replaced by its value, in one pass: inserted values are never
// searched for slots.
std::string fill_slots(std::string_view page, const std::map<std::string, std::string>& slots) {
  std::string out;
  std::size_t done = 0;
  for (auto at = page.find('@'); at != std::string_view::npos; at = page.find('@', at + 1)) {
    const auto close = page.find('@', at + 1);
    if (close == std::string_view::npos) break;
    const auto slot = slots.find(std::string(page.substr(at + 1, close - at - 1)));
    if (slot == slots.end()) continue;
    out.append(page.substr(done, at - done)).append(slot->second);
    done = close + 1;
    at = close;
  }
  return out.append(page.substr(done));
}

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%d %H:%M:%S UTC", &utc);
  return text;
}

// The whole-split rows' F1 per model: at 0.5 / at the calibrated threshold / at the vehicle
// threshold / at the label-free threshold.
std::string f1_by_condition_table(const json& evaluation) {
  std::vector<std::string> splits;
  for (const auto& [model, report] : evaluation.items())
    for (const auto& group : report.value("groups", json::array()))
      if (group.value("attack_type", "").empty()) {
        const auto split = group.value("split", "");
        if (std::find(splits.begin(), splits.end(), split) == splits.end()) splits.push_back(split);
      }
  std::string html = "<table class=\"f1\"><tr><th>condition</th>";
  for (const auto& [model, report] : evaluation.items())
    html += "<th>" + html_escape(model) + "</th>";
  html += "</tr>";
  for (const auto& split : splits) {
    html += "<tr><td>" + html_escape(split) + "</td>";
    for (const auto& [model, report] : evaluation.items()) {
      std::string cell = "-";
      for (const auto& group : report.value("groups", json::array()))
        if (group.value("split", "") == split && group.value("attack_type", "").empty()) {
          cell = format_metric(group["metrics"]["f1"]);
          if (group.contains("calibrated_metrics"))
            cell += " / " + format_metric(group["calibrated_metrics"]["f1"]);
          if (group.contains("vehicle_calibrated_metrics"))
            cell += " / " + format_metric(group["vehicle_calibrated_metrics"]["f1"]);
          if (group.contains("label_free_metrics"))
            cell += " / " + format_metric(group["label_free_metrics"]["f1"]);
        }
      html += "<td>" + cell + "</td>";
    }
    html += "</tr>";
  }
  return html + "</table>";
}

// One model's rows: split, attack type, whether training saw it, n, F1, precision, recall, ROC AUC
// (at the decision; and the F1 at the calibrated and the label-free thresholds), and the confusion
// matrix at the decision.
std::string model_metrics_table(const std::string& model, const json& report) {
  std::string html = fmt::format(
      "<h3>{}</h3><p class=\"note\">score: {}; decision at {}{}</p><table class=\"metrics\">"
      "<tr><th>condition</th><th>attack type</th><th>seen in training</th><th>n</th><th>F1</th>"
      "<th>precision</th><th>recall</th><th>ROC AUC</th><th>F1 (calibrated)</th>"
      "<th>F1 (label-free)</th><th>confusion (at the decision)</th></tr>",
      html_escape(model), html_escape(report.value("score", "")),
      format_metric(report.value("decision_threshold", json())),
      report.contains("calibrated_threshold")
          ? "; calibrated threshold " + format_metric(report["calibrated_threshold"])
          : "");
  for (const auto& group : report.value("groups", json::array())) {
    const auto& m = group["metrics"];
    const auto& c = m["confusion"];
    const auto attack = group.value("attack_type", "");
    html += fmt::format(
        "<tr{}><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
        "<td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
        attack.empty() ? " class=\"split\"" : "", html_escape(group.value("split", "")),
        attack.empty() ? "all" : html_escape(attack),
        !group.contains("seen_in_training")     ? "-"
        : group["seen_in_training"].get<bool>() ? "yes"
                                                : "no",
        m.value("count", 0), format_metric(m["f1"]), format_metric(m["precision"]),
        format_metric(m["recall"]), format_metric(m["roc_auc"]),
        group.contains("calibrated_metrics") ? format_metric(group["calibrated_metrics"]["f1"])
                                             : "-",
        group.contains("label_free_metrics") ? format_metric(group["label_free_metrics"]["f1"])
                                             : "-",
        confusion_matrix_html(c.value("true_negatives", 0), c.value("false_positives", 0),
                              c.value("false_negatives", 0), c.value("true_positives", 0)));
  }
  return html + "</table>";
}

}  // namespace

namespace {

json collect(const fs::path& path, ReportInputs& inputs) {
  if (!fs::is_directory(path))
    throw std::runtime_error(util::printable_path(path) +
                             ": not a directory (give a run directory or a run "
                             "root such as runs/<dataset>)");
  json data = {{"title", fs::absolute(path).lexically_normal().filename().string()},
               {"stages", json::array()},
               {"evaluation", json::object()}};
  if (fs::exists(path / "metrics.jsonl")) {
    data["stages"].push_back(collect_stage(path, inputs));
  } else {
    for (const auto& dir : stage_directories(path))
      data["stages"].push_back(collect_stage(dir, inputs));
    data["evaluation"] = collect_evaluation(path / "evaluation", inputs);
  }
  // A node-classification run keeps its own evaluation.json beside its metrics (stage `node`):
  // collect_stage reads it into the stage (its table: node_evaluation_tables).
  if ((fs::exists(path / "evaluation.json") &&
       !is_node_task_evaluation(path / "evaluation.json")) ||
      path.filename() == "evaluation")
    data["evaluation"] = collect_evaluation(path, inputs);
  if (data["stages"].empty() && data["evaluation"].empty())
    throw std::runtime_error(
        util::printable_path(path) +
        ": holds no stage (no metrics.jsonl) and no "
        "evaluation; give a run directory or a run root such as runs/<dataset>");
  return data;
}

// The absolute, symlink-free spelling of `path` as far as it exists.
fs::path resolved(const fs::path& path) {
  std::error_code ec;
  auto result = fs::weakly_canonical(fs::absolute(path), ec);
  return ec ? fs::absolute(path).lexically_normal() : result;
}

// Throws unless `target` may receive the report: never one of its inputs; an existing file only
// when it is a report headroom wrote and `replace` is set.
void check_report_target(const fs::path& target, const ReportInputs& inputs, bool replace) {
  const auto where = util::printable_path(target);
  const auto target_path = resolved(target);
  for (const auto& input : inputs)
    if (resolved(input) == target_path)
      throw std::runtime_error(
          fmt::format("'{}' is one of the report's inputs ({}); choose another --out", where,
                      util::printable_path(input)));
  std::error_code ec;
  const auto status = fs::symlink_status(target, ec);
  if (ec || !fs::exists(status)) return;
  if (!fs::is_regular_file(status) || !is_headroom_report(target))
    throw std::runtime_error(fmt::format(
        "'{}' exists and is not a report headroom wrote; remove it yourself or choose another "
        "--out",
        where));
  if (!replace)
    throw std::runtime_error(fmt::format("'{}' exists (use --force to replace it)", where));
}

}  // namespace

nlohmann::json collect_report_data(const std::filesystem::path& path) {
  ReportInputs inputs;
  return collect(path, inputs);
}

bool is_headroom_report(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::string head(kReportHead.size(), '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<std::size_t>(in.gcount()));
  return head == kReportHead || head.starts_with(kLegacyReportHead);
}

namespace {
constexpr const char* kChartsNote =
    "charts by Chart.js, drawn from the data in this file (no network needed)";
constexpr const char* kNoChartsNote =
    "<strong>no charts</strong>: Chart.js was missing where this page was written (install the "
    "Debian package libjs-chart.js and run <code>headroom report</code> again); the tables hold "
    "the numbers";
}  // namespace

std::string render_html_report(const nlohmann::json& data, const std::string& chart_js) {
  std::string tables = node_evaluation_tables(data["stages"]);
  const auto& evaluation = data["evaluation"];
  if (!evaluation.empty()) {
    tables +=
        "<h2>F1 by model and test condition</h2><p class=\"note\">decision at 0.5 / at the "
        "model's calibrated threshold [/ per test file at the label-picked vehicle threshold, "
        "an upper bound] [/ per test file at the label-free threshold, no label read]</p>";
    tables += f1_by_condition_table(evaluation);
    tables += "<h2>Per test condition and attack type</h2>";
    for (const auto& [model, report] : evaluation.items())
      tables += model_metrics_table(model, report);
  }
  return fill_slots(kPageTemplate,
                    {{"TITLE", html_escape(data.value("title", ""))},
                     {"GENERATED", utc_now()},
                     {"STYLE", kPageStyle},
                     {"STAGES", stage_summary_table(data["stages"])},
                     {"TABLES", tables},
                     {"SCRIPT", kPageScript},
                     {"DATA", json_for_script(data)},
                     {"CHART_JS", chart_js},
                     {"CHARTS_NOTE", chart_js.empty() ? kNoChartsNote : kChartsNote}});
}

std::string missing_charts_warning(const std::filesystem::path& chart_js) {
  return util::printable_path(chart_js) +
         ": Chart.js is missing, so the report has tables and no charts (install the Debian "
         "package libjs-chart.js, scripts/setup.sh does, and run `headroom report` again)";
}

WrittenReport write_html_report(const std::filesystem::path& path,
                                std::optional<std::filesystem::path> out,
                                std::optional<std::filesystem::path> chart_js, bool replace) {
  const fs::path library = chart_js.value_or(HEADROOM_CHART_JS);
  ReportInputs inputs;
  const auto data = collect(path, inputs);
  const fs::path target = out.value_or(path / "report.html");
  check_report_target(target, inputs, replace);
  // A cluster node without the Debian package still gets the page: training finished, and the
  // tables carry every number. The caller says that the charts are missing.
  const bool with_charts = fs::is_regular_file(library);
  util::write_file_atomically(
      target, render_html_report(data, with_charts ? util::read_file(library) : std::string()));
  return {target, with_charts ? std::nullopt : std::optional<fs::path>(library)};
}

}  // namespace headroom::report
