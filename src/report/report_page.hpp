// The report page's frame, style and drawing script (html_report.cpp fills the @NAME@ slots).
// The script reads the embedded data and draws every chart with Chart.js; it records what it drew
// in <body data-rendered-charts="..."> and any script error in data-errors, and sets
// data-status="ready" when done, so that a headless browser can check the page. A page written
// without Chart.js (html_report.hpp) draws nothing and is still "ready": its tables hold the data.
#pragma once

#include <string_view>

namespace headroom::report {

// How every report begins: is_headroom_report recognises a file by these bytes, so they change
// only together with kLegacyReportHead (the beginning of the reports written before the generator
// tag, still recognised).
inline constexpr std::string_view kReportHead = R"html(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="generator" content="headroom report">
)html";
inline constexpr std::string_view kLegacyReportHead = R"html(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>headroom report: )html";

inline constexpr const char* kPageTemplate = R"html(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="generator" content="headroom report">
<title>headroom report: @TITLE@</title>
<style>@STYLE@</style>
<script>@CHART_JS@</script>
</head>
<body data-status="loading">
<h1>headroom report: @TITLE@</h1>
<p class="note">generated @GENERATED@ by headroom; @CHARTS_NOTE@</p>
@STAGES@
<div id="stages"></div>
<div id="roc"></div>
@TABLES@
<script type="application/json" id="report-data">@DATA@</script>
<script>@SCRIPT@</script>
</body>
</html>
)html";

static_assert(std::string_view(kPageTemplate).starts_with(kReportHead));

inline constexpr const char* kPageStyle = R"css(
body { font-family: sans-serif; margin: 1.5em; color: #222; }
h2 { border-bottom: 1px solid #ccc; padding-bottom: .2em; margin-top: 1.6em; }
.note { color: #666; font-size: .9em; }
.grid { display: grid; grid-template-columns: repeat(2, minmax(0, 1fr)); gap: 1em; }
.chart { border: 1px solid #ddd; border-radius: 4px; padding: .5em; height: 300px;
         display: flex; flex-direction: column; }
.chart h4 { margin: 0 0 .3em 0; font-size: .95em; }
.chart .canvas { position: relative; flex: 1; min-height: 0; }
table { border-collapse: collapse; margin: .5em 0 1em 0; font-size: .85em; }
th, td { border: 1px solid #ccc; padding: .2em .5em; text-align: right; }
th { background: #f3f3f3; }
td:first-child, th:first-child { text-align: left; }
tr.split td { font-weight: bold; }
table.confusion { margin: 0; font-size: .8em; }
table.confusion td { border: 1px solid #bbb; min-width: 3em; text-align: center; }
)css";

inline constexpr const char* kPageScript = R"js(
(function () {
  'use strict';
  const rendered = [];
  const errors = [];
  function mark() {
    document.body.dataset.renderedCharts = rendered.join(' ');
    document.body.dataset.errors = String(errors.length);
    if (errors.length) document.body.dataset.errorMessages = errors.join(' | ');
  }
  window.addEventListener('error', function (e) { errors.push(String(e.message)); mark(); });

  function draw(data) {
    // A page written where Chart.js was missing carries no library: its tables are the report.
    if (typeof Chart === 'undefined') return;
    Chart.defaults.animation = false;
    Chart.defaults.maintainAspectRatio = false;
    const stages = document.getElementById('stages');
    for (const stage of data.stages) drawStage(stages, stage);
    drawRoc(document.getElementById('roc'), data.evaluation || {});
  }

  const palette = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2',
                   '#7f7f7f', '#bcbd22', '#17becf'];
  const MiB = 1048576;

  function element(parent, tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    parent.appendChild(node);
    return node;
  }

  function chart(grid, id, title, config) {
    const box = element(grid, 'div', 'chart');
    box.id = id;
    element(box, 'h4', '', title);
    const holder = element(box, 'div', 'canvas');
    const canvas = element(holder, 'canvas');
    new Chart(canvas, config);
    rendered.push(id);
  }

  function series(label, points, index, extra) {
    return Object.assign({label: label, data: points, borderColor: palette[index % 10],
                          backgroundColor: palette[index % 10], showLine: true, pointRadius: 2,
                          borderWidth: 1.5}, extra || {});
  }

  // Epochs and training steps are counts: whole-number ticks, not 1.10, 1.20, ...
  const countAxes = ['epoch', 'training step'];

  function xyChart(datasets, xTitle, yTitle, yType) {
    const ticks = countAxes.includes(xTitle) ? {precision: 0} : {};
    return {type: 'scatter', data: {datasets: datasets},
            options: {scales: {x: {type: 'linear', title: {display: true, text: xTitle},
                                   ticks: ticks},
                               y: {type: yType || 'linear', title: {display: true, text: yTitle}}},
                      plugins: {legend: {labels: {boxWidth: 12}}}}};
  }

  function epochPoints(epochs, value) {
    const points = [];
    for (const line of epochs) {
      const y = value(line);
      if (typeof y === 'number' && isFinite(y)) points.push({x: line.epoch + 1, y: y});
    }
    return points;
  }

  function drawStage(parent, stage) {
    element(parent, 'h2', '', 'Stage ' + stage.name);
    const r = stage.result || {};
    if (r.epochs !== undefined)
      element(parent, 'p', 'note', r.epochs + ' epochs, best epoch ' + (r.best_epoch + 1) +
              ', ' + (r.graphs_per_second || 0).toFixed(0) + ' graphs/s, peak tensor memory ' +
              ((r.peak_tensor_bytes || 0) / MiB).toFixed(1) + ' MiB');
    const grid = element(parent, 'div', 'grid');
    const epochs = stage.epochs;
    const slug = stage.name.replace(/[^A-Za-z0-9_-]/g, '_');
    chart(grid, 'loss-' + slug, 'Loss per epoch', xyChart([
      series('train loss', epochPoints(epochs, l => l.train_loss), 0),
      series('validation loss', epochPoints(epochs, l => l.validation_loss), 1)], 'epoch', 'loss'));
    // Every number a validation reports (classifiers: F1, AUCs, ...; the VGAE: its loss), less
    // the counts.
    const keys = [];
    for (const line of epochs)
      for (const key of Object.keys(line.validation || {}))
        if (typeof line.validation[key] === 'number' && keys.indexOf(key) < 0 &&
            ['count', 'positives', 'graphs', 'cross_entropy'].indexOf(key) < 0) keys.push(key);
    const validation = [];
    keys.forEach(function (key, i) {
      const points = epochPoints(epochs, l => l.validation && l.validation[key]);
      if (points.length) validation.push(series('validation ' + key, points, i));
    });
    if (validation.length)
      chart(grid, 'validation-' + slug, 'Validation metrics per epoch',
            xyChart(validation, 'epoch', 'value'));
    // Epoch lines without a throughput (fusion's, written before fusion trained in the epoch loop)
    // draw no chart of it.
    const throughput = epochPoints(epochs, l => l.graphs_per_second);
    if (throughput.length)
      chart(grid, 'throughput-' + slug, 'Throughput per epoch',
            xyChart([series('graphs/s', throughput, 2)], 'epoch', 'graphs/s'));
    drawMemory(grid, slug, stage);
    if (stage.plan) drawPlan(grid, slug, stage.plan);
  }

  function packingTarget(stage) {
    if (stage.plan && stage.plan.packing_budget_bytes) return stage.plan.packing_budget_bytes;
    const last = stage.epochs[stage.epochs.length - 1];
    const share = (stage.config && stage.config.target_utilization) || 0;
    return last && last.memory_budget && share ? last.memory_budget * share : 0;
  }

  // Memory over steps (or epochs, without step samples) against the budget and packing target.
  function drawMemory(grid, slug, stage) {
    const steps = stage.steps;
    const bySteps = steps.length > 0;
    const lines = bySteps ? steps : stage.epochs;
    const x = l => bySteps ? l.global_step : l.epoch + 1;
    const peakOf = l => bySteps ? l.peak_tensor_bytes :
        ((l.memory && l.memory.cuda && l.memory.cuda.available) ?
         l.memory.cuda.peak_allocated_bytes : l.memory && l.memory.cpu && l.memory.cpu.peak_bytes);
    const rssOf = l => bySteps ? l.rss_bytes : l.memory && l.memory.rss_bytes;
    const reservedOf = l => bySteps ? l.reserved_bytes :
        (l.memory && l.memory.cuda && l.memory.cuda.available ? l.memory.cuda.reserved_bytes
                                                               : undefined);
    const pts = f => lines.filter(l => typeof f(l) === 'number').map(l => ({x: x(l), y: f(l) / MiB}));
    const datasets = [];
    if (bySteps) datasets.push(series('tensor bytes', pts(l => l.tensor_bytes), 0));
    datasets.push(series('peak tensor bytes', pts(peakOf), 1));
    const reserved = pts(reservedOf);
    if (reserved.length) datasets.push(series('reserved (CUDA)', reserved, 4));
    datasets.push(series('RSS', pts(rssOf), 5));
    const usage = datasets.flatMap(d => d.data.map(p => p.y)).filter(v => v > 0);
    if (!usage.length) return;
    const xs = lines.map(x);
    const span = xs.length ? [Math.min.apply(null, xs), Math.max.apply(null, xs)] : [0, 1];
    const budget = (lines.length ? lines[lines.length - 1].memory_budget : 0) || 0;
    const target = packingTarget(stage);
    const flat = (label, bytes, i) => series(label, span.map(v => ({x: v, y: bytes / MiB})), i,
                                              {borderDash: [6, 4], pointRadius: 0});
    if (budget) datasets.push(flat('budget', budget, 3));
    if (target) datasets.push(flat('packing target', target, 2));
    // An OOM event: a step sample whose epoch count of OOM events went up.
    const ooms = [];
    let previous = {epoch: -1, oom_events: 0};
    for (const l of steps) {
      const before = l.epoch === previous.epoch ? previous.oom_events : 0;
      if (l.oom_events > before) ooms.push({x: l.global_step, y: l.peak_tensor_bytes / MiB});
      previous = l;
    }
    for (const l of stage.epochs)
      if (!bySteps && l.oom_events > 0) ooms.push({x: l.epoch + 1, y: peakOf(l) / MiB});
    datasets.push(series('OOM event', ooms, 3, {showLine: false, pointRadius: 7,
                                                pointStyle: 'crossRot', borderWidth: 2}));
    // Micro-batch splits: at the end of each epoch that had any, labelled with their count.
    let end = 0;
    const splits = [];
    for (const l of stage.epochs) {
      end += l.steps || 0;
      if (l.split_steps > 0) splits.push({x: bySteps ? end : l.epoch + 1, y: peakOf(l) / MiB});
    }
    datasets.push(series('micro-batch splits', splits, 6, {showLine: false, pointRadius: 6,
                                                          pointStyle: 'triangle'}));
    const top = Math.max(budget, target) / MiB;
    const logScale = usage.length && top / Math.max.apply(null, usage) > 20;
    const limits = [budget ? 'budget ' + (budget / MiB).toFixed(0) + ' MiB' : '',
                    target ? 'packing target ' + (target / MiB).toFixed(0) + ' MiB' : '']
                       .filter(text => text).join(' and ');
    chart(grid, 'memory-' + slug,
          'Memory over ' + (bySteps ? 'steps' : 'epochs') + ' (MiB' + (logScale ? ', log scale' : '') +
          ')' + (limits ? ' vs ' + limits : ''),
          xyChart(datasets, bySteps ? 'training step' : 'epoch', 'MiB',
                  logScale ? 'logarithmic' : 'linear'));
  }

  // The fitted peak per probe batch split into its terms, against the measured peak.
  function drawPlan(grid, slug, plan) {
    const probes = plan.probe_batches || [];
    const labels = probes.map(p => p.graphs + ' graphs / ' + p.nodes + ' nodes');
    const bar = (label, key, i) => ({type: 'bar', label: label, stack: 'fit',
                                     data: probes.map(p => p[key] / MiB),
                                     backgroundColor: palette[i]});
    const datasets = [bar('fixed (parameters, optimizer)', 'fixed_bytes', 7),
                      bar('per node', 'node_bytes', 0), bar('per edge', 'edge_bytes', 1),
                      bar('per graph', 'graph_bytes', 2),
                      {type: 'line', label: 'measured peak', data: probes.map(p => p.peak_bytes / MiB),
                       borderColor: palette[3], backgroundColor: palette[3], showLine: false,
                       pointRadius: 5}];
    chart(grid, 'plan-' + slug,
          'Memory plan: fitted peak per probe batch (MiB); packing target ' +
          (plan.packing_budget_bytes / MiB).toFixed(0) + ' MiB of the ' +
          (plan.memory_budget / MiB).toFixed(0) + ' MiB budget, fit error ' +
          (100 * plan.max_relative_error).toFixed(1) + '%',
          {type: 'bar', data: {labels: labels, datasets: datasets},
           options: {scales: {x: {stacked: true}, y: {stacked: true,
                                                       title: {display: true, text: 'MiB'}}}}});
  }

  // One chart per test condition: every model's ROC curve on it, and chance.
  function drawRoc(parent, evaluation) {
    const splits = {};
    Object.keys(evaluation).forEach(function (model) {
      for (const group of evaluation[model].groups || [])
        if (!group.attack_type && group.roc)
          (splits[group.split] = splits[group.split] || []).push({model: model, roc: group.roc});
    });
    const names = Object.keys(splits);
    if (!names.length) return;
    element(parent, 'h2', '', 'ROC curves per test condition');
    const grid = element(parent, 'div', 'grid');
    names.forEach(function (split) {
      const datasets = splits[split].map(function (entry, i) {
        const fpr = entry.roc.false_positive_rate, tpr = entry.roc.true_positive_rate;
        return series(entry.model, fpr.map((v, k) => ({x: v, y: tpr[k]})), i, {pointRadius: 0});
      });
      datasets.push(series('chance', [{x: 0, y: 0}, {x: 1, y: 1}], 7,
                           {borderDash: [4, 4], pointRadius: 0}));
      const config = xyChart(datasets, 'false-positive rate', 'true-positive rate');
      config.options.scales.x.min = 0; config.options.scales.x.max = 1;
      config.options.scales.y.min = 0; config.options.scales.y.max = 1;
      chart(grid, 'roc-' + split.replace(/[^A-Za-z0-9_-]/g, '_'), 'ROC: ' + split, config);
    });
  }

  // Last: the constants and functions above must exist before drawing starts.
  try {
    draw(JSON.parse(document.getElementById('report-data').textContent));
  } catch (e) {
    errors.push(String(e && e.stack || e));
  }
  mark();
  document.body.dataset.status = errors.length ? 'error' : 'ready';
})();
)js";

}  // namespace headroom::report
