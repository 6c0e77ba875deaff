#include "headroom/report/html_report.hpp"

#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <ctime>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "headroom/report/run_manifest.hpp"
#include "headroom/util/bounded_json.hpp"
#include "headroom/util/file_reader.hpp"
#include "headroom/util/file_writer.hpp"
#include "headroom/util/printable_text.hpp"
#include "headroom/util/regular_file.hpp"
#include "report_page.hpp"

#ifndef HEADROOM_CHART_JS
#define HEADROOM_CHART_JS "/usr/share/javascript/chart.js/chart.min.js"
#endif

namespace headroom::report {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// metrics.jsonl is read whole; a stage's epoch lines and sampled step lines stay far below this.
constexpr std::uint64_t kMaxMetricsBytes = std::uint64_t{256} << 20;

// Run files are read as they are: any member may be missing or of another JSON type, and a value
// the report shows must never throw (nlohmann's value() does on a type mismatch) nor be undefined
// (its const operator[] on a missing key). These read a member, or give the fallback.
const json& member(const json& object, std::string_view key) {
  static const json kNull;
  if (!object.is_object()) return kNull;
  const auto it = object.find(key);
  return it == object.end() ? kNull : *it;
}

double number_or(const json& object, std::string_view key, double fallback) {
  const auto& value = member(object, key);
  return value.is_number() ? value.get<double>() : fallback;
}

// Whole numbers only: casting a float such as 1e300 or NaN to an integer is undefined.
std::int64_t integer_or(const json& object, std::string_view key, std::int64_t fallback) {
  const auto& value = member(object, key);
  if (value.is_number_unsigned())
    return static_cast<std::int64_t>(std::min<std::uint64_t>(
        value.get<std::uint64_t>(), std::numeric_limits<std::int64_t>::max()));
  return value.is_number_integer() ? value.get<std::int64_t>() : fallback;
}

std::string text_or(const json& object, std::string_view key, const std::string& fallback = "") {
  const auto& value = member(object, key);
  return value.is_string() ? value.get<std::string>() : fallback;
}

// a + b, held at the int64 range instead of overflowing.
std::int64_t saturating_add(std::int64_t a, std::int64_t b) {
  std::int64_t sum = 0;
  if (!__builtin_add_overflow(a, b, &sum)) return sum;
  return b > 0 ? std::numeric_limits<std::int64_t>::max()
               : std::numeric_limits<std::int64_t>::min();
}

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

// A run file's text, or nullopt when nothing is there. A FIFO would block `report` forever and a
// link to /dev/zero never end it: anything but a regular file, or a file larger than `max_bytes`,
// is an error naming it.
std::optional<std::string> read_run_file(const fs::path& path,
                                         std::uint64_t max_bytes = util::kDefaultMaxReadBytes) {
  return util::read_file_if_present(path, max_bytes);
}

// Run files nest a few levels deep. One nested thousands of levels deep parses (nlohmann's parser
// keeps its own stack) but overflows the thread's stack in the recursive copies and dumps that
// follow, so such a document is refused while it is parsed.
constexpr int kMaxJsonDepth = util::kMaxJsonDepth;

struct TooDeep : std::runtime_error {
  TooDeep()
      : std::runtime_error(fmt::format("nested more than {} levels deep; not a file headroom wrote",
                                       kMaxJsonDepth)) {}
};

// nlohmann's message without its "[json.exception.KIND.ID] " prefix, escaped (it quotes the input).
std::string reason_of(const json::exception& e) {
  std::string_view what = e.what();
  if (what.starts_with("[json.exception."))
    if (const auto end = what.find("] "); end != std::string_view::npos)
      what.remove_prefix(end + 2);
  return util::printable(what);
}

json parse_run_json(std::string_view text) {
  return json::parse(text, [](int depth, json::parse_event_t, json&) {
    if (depth > kMaxJsonDepth) throw TooDeep();
    return true;
  });
}

json read_json_or_null(const fs::path& path, ReportInputs& inputs) {
  inputs.push_back(path);
  const auto found = read_run_file(path);
  if (!found) return nullptr;
  const std::string& text = *found;
  try {
    return parse_run_json(text);
  } catch (const json::parse_error& e) {
    throw std::runtime_error(
        fmt::format("{}:{}", util::printable_path(path), parse_error_at(text, e)));
  } catch (const TooDeep& e) {
    throw std::runtime_error(fmt::format("{}: {}", util::printable_path(path), e.what()));
  } catch (const json::exception& e) {  // out_of_range: a number past a double (1e400)
    throw std::runtime_error(fmt::format("{}: not JSON headroom can read: {}",
                                         util::printable_path(path), reason_of(e)));
  }
}

// metrics.jsonl: epoch lines, and step lines with "global_step" (steps counted across epochs).
// A torn last line (the run was killed mid-write) is skipped; a bad line elsewhere is an error.
void read_metrics(const fs::path& path, json& epochs, json& steps, ReportInputs& inputs) {
  inputs.push_back(path);
  const auto text = read_run_file(path, kMaxMetricsBytes);
  std::istringstream in(text.value_or(std::string()));
  std::string line;
  std::int64_t steps_before_epoch = 0;
  for (std::size_t number = 1; std::getline(in, line); ++number) {
    if (line.empty()) continue;
    json parsed;
    try {
      parsed = parse_run_json(line);
    } catch (const json::parse_error& e) {
      if (in.peek() == EOF) break;
      throw std::runtime_error(
          fmt::format("{}:{}", util::printable_path(path), parse_error_at(line, e, number)));
    } catch (const TooDeep& e) {
      throw std::runtime_error(
          fmt::format("{}:{}: {}", util::printable_path(path), number, e.what()));
    } catch (const json::exception& e) {  // out_of_range: a number past a double (1e400)
      throw std::runtime_error(fmt::format("{}:{}: not JSON headroom can read: {}",
                                           util::printable_path(path), number, reason_of(e)));
    }
    if (!parsed.is_object())
      throw std::runtime_error(fmt::format("{}:{}: not a metrics line (a JSON object), but {}",
                                           util::printable_path(path), number, parsed.type_name()));
    const auto type = text_or(parsed, "type");
    if (type == "epoch") {
      steps_before_epoch = saturating_add(steps_before_epoch, integer_or(parsed, "steps", 0));
      epochs.push_back(std::move(parsed));
    } else if (type == "step") {
      parsed["global_step"] = saturating_add(steps_before_epoch, integer_or(parsed, "step", 0));
      steps.push_back(std::move(parsed));
    }
  }
}

// evaluation.json of stage `node` (one document with "task"), not the evaluated CAN models.
bool is_node_task_evaluation(const fs::path& file) {
  const auto text = read_run_file(file);
  if (!text) return false;
  const auto document = util::parse_json_or_discarded(*text);  // bounded in depth
  return text_or(document, "task") == "node classification";
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

// A run root's stages: those its run manifest lists (`headroom run`'s, in the order they ran), then
// any other stage directory there (a stage run by hand) in the order stage_directories finds them.
std::vector<fs::path> run_root_stages(const fs::path& root, ReportInputs& inputs) {
  inputs.push_back(root / kRunManifestFileName);
  const auto manifest = read_run_manifest(root);
  if (!manifest) return stage_directories(root);
  auto dirs = manifest_stage_directories(*manifest, root);
  for (auto& dir : stage_directories(root))
    if (std::find(dirs.begin(), dirs.end(), dir) == dirs.end()) dirs.push_back(std::move(dir));
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
        const auto name = text_or(model, "model", entry.path().stem().string());
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
  // Totals in double: counts read from a file may be anything, and their int64 sum overflow.
  const auto cell = [](std::int64_t count, double row_total, bool correct) {
    const double share = row_total > 0 ? static_cast<double>(count) / row_total : 0.0;
    return fmt::format("<td style=\"background: rgba({}, {:.2f})\">{}</td>",
                       correct ? "44, 160, 44" : "214, 39, 40", 0.15 + 0.6 * share, count);
  };
  return "<table class=\"confusion\"><tr><th></th><th>pred normal</th><th>pred attack</th></tr>"
         "<tr><th>normal</th>" +
         cell(tn, double(tn) + double(fp), true) + cell(fp, double(tn) + double(fp), false) +
         "</tr><tr><th>attack</th>" + cell(fn, double(fn) + double(tp), false) +
         cell(tp, double(fn) + double(tp), true) + "</tr></table>";
}

// Each stage's outcome in one row (result.json), as `headroom run` prints it.
std::string stage_summary_table(const json& stages) {
  if (stages.empty()) return {};
  std::string html =
      "<h2>Stages</h2><table><tr><th>stage</th><th>epochs</th><th>best epoch</th>"
      "<th>training s</th><th>graphs/s</th><th>peak tensor MiB</th><th>OOM events</th>"
      "<th>split steps</th></tr>";
  for (const auto& stage : stages) {
    const auto& r = member(stage, "result");
    std::int64_t ooms = 0, splits = 0;
    for (const auto& line : stage["epochs"]) {
      ooms = saturating_add(ooms, integer_or(line, "oom_events", 0));
      splits = saturating_add(splits, integer_or(line, "split_steps", 0));
    }
    html += fmt::format(
        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{:.1f}</td><td>{:.0f}</td><td>{:.1f}</td>"
        "<td>{}</td><td>{}</td></tr>",
        html_escape(text_or(stage, "name")), stage["epochs"].size(),
        saturating_add(integer_or(r, "best_epoch", -1), 1), number_or(r, "seconds", 0.0),
        number_or(r, "graphs_per_second", 0.0), number_or(r, "peak_tensor_bytes", 0.0) / (1 << 20),
        ooms, splits);
  }
  return html + "</table>";
}

// A text corpus's classical baseline (TF-IDF + logistic regression) on the same splits, as rows
// under the model's: what the graph model has to beat.
std::string node_baseline_rows(const json& baseline) {
  std::string html;
  const auto& splits = member(baseline, "splits");
  if (!splits.is_object()) return html;
  for (const auto& [split, metrics] : splits.items()) {
    if (!metrics.is_object()) continue;
    html += fmt::format(
        "<tr><td>{}, baseline tf-idf+lr</td><td>{:.4f}</td><td>{:.4f}</td><td>{}</td><td>"
        "</td></tr>",
        html_escape(split), number_or(metrics, "accuracy", 0.0),
        number_or(metrics, "macro_f1", 0.0), integer_or(metrics, "count", 0));
  }
  return html;
}

// Each node-classification stage's evaluation: accuracy, macro-F1, documents and loss per split,
// the classical baseline's beside them, and whether it trained full-batch or on sampled subgraphs.
std::string node_evaluation_tables(const json& stages) {
  std::string html;
  for (const auto& stage : stages) {
    if (!stage.contains("node_evaluation")) continue;
    const auto& evaluation = stage["node_evaluation"];
    const auto& training = member(evaluation, "training");
    const auto mode = text_or(training, "mode", "full-batch");
    std::string how = mode;
    if (mode == "sampled" && training.contains("sampled"))
      how = fmt::format(
          "sampled subgraphs: {} parts of {} nodes per epoch (the full batch is over "
          "the memory budget)",
          integer_or(training["sampled"], "parts_per_epoch", 0),
          integer_or(training["sampled"], "nodes_per_part", 0));
    html += fmt::format(
        "<h2>Node classification: {}</h2><p class=\"note\">best epoch {}; trained {}</p><table>"
        "<tr><th>split</th><th>accuracy</th><th>macro-F1</th><th>nodes</th><th>loss</th></tr>",
        html_escape(text_or(stage, "name")),
        saturating_add(integer_or(evaluation, "checkpoint_epoch", -1), 1), html_escape(how));
    for (const auto& [split, metrics] : evaluation["splits"].items()) {
      if (!metrics.is_object()) continue;
      html += fmt::format(
          "<tr><td>{}</td><td>{:.4f}</td><td>{:.4f}</td><td>{}</td><td>{:.4f}</td></tr>",
          html_escape(split), number_or(metrics, "accuracy", 0.0),
          number_or(metrics, "macro_f1", 0.0), integer_or(metrics, "count", 0),
          number_or(metrics, "loss", 0.0));
    }
    html += node_baseline_rows(member(evaluation, "baseline")) + "</table>";
    for (const auto& warning : member(evaluation, "warnings"))
      if (warning.is_string())
        html += fmt::format("<p class=\"note\">warning: {}</p>",
                            html_escape(warning.get<std::string>()));
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

// A model's groups: its "groups" array (check_model_evaluation made sure each is an object), or
// none.
const json& groups_of(const json& report) {
  static const json kNone = json::array();
  const auto& groups = member(report, "groups");
  return groups.is_array() ? groups : kNone;
}

// The whole-split rows' F1 per model: at 0.5 / at the calibrated threshold / at the vehicle
// threshold / at the label-free threshold.
std::string f1_by_condition_table(const json& evaluation) {
  std::vector<std::string> splits;
  for (const auto& [model, report] : evaluation.items())
    for (const auto& group : groups_of(report))
      if (text_or(group, "attack_type").empty()) {
        const auto split = text_or(group, "split");
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
      for (const auto& group : groups_of(report))
        if (text_or(group, "split") == split && text_or(group, "attack_type").empty()) {
          cell = format_metric(member(member(group, "metrics"), "f1"));
          for (const char* other :
               {"calibrated_metrics", "vehicle_calibrated_metrics", "label_free_metrics"})
            if (group.contains(other))
              cell += " / " + format_metric(member(member(group, other), "f1"));
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
      html_escape(model), html_escape(text_or(report, "score")),
      format_metric(member(report, "decision_threshold")),
      report.contains("calibrated_threshold")
          ? "; calibrated threshold " + format_metric(member(report, "calibrated_threshold"))
          : "");
  for (const auto& group : groups_of(report)) {
    const auto& m = member(group, "metrics");
    const auto& c = member(m, "confusion");
    const auto& seen = member(group, "seen_in_training");
    const auto attack = text_or(group, "attack_type");
    html += fmt::format(
        "<tr{}><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
        "<td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
        attack.empty() ? " class=\"split\"" : "", html_escape(text_or(group, "split")),
        attack.empty() ? "all" : html_escape(attack),
        !seen.is_boolean() ? "-"
        : seen.get<bool>() ? "yes"
                           : "no",
        integer_or(m, "count", 0), format_metric(member(m, "f1")),
        format_metric(member(m, "precision")), format_metric(member(m, "recall")),
        format_metric(member(m, "roc_auc")),
        group.contains("calibrated_metrics")
            ? format_metric(member(member(group, "calibrated_metrics"), "f1"))
            : "-",
        group.contains("label_free_metrics")
            ? format_metric(member(member(group, "label_free_metrics"), "f1"))
            : "-",
        confusion_matrix_html(
            integer_or(c, "true_negatives", 0), integer_or(c, "false_positives", 0),
            integer_or(c, "false_negatives", 0), integer_or(c, "true_positives", 0)));
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
    for (const auto& dir : run_root_stages(path, inputs))
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
  // A FIFO is not a report, and opening it to look would block.
  std::string why;
  const auto fd = util::try_open_regular_for_reading(file, &why);
  if (!fd) return false;
  std::string head(kReportHead.size(), '\0');
  std::size_t got = 0;
  while (got < head.size()) {
    const ssize_t n = ::read(fd.get(), head.data() + got, head.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  head.resize(got);
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
                    {{"TITLE", html_escape(text_or(data, "title"))},
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
