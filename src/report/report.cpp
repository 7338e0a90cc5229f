#include "report/report.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <numeric>
#include <regex>
#include <set>
#include <sstream>

#include <strings.h>

#include <fmt/format.h>

#include "core/ast.h"
#include "core/dataset.h"
#include "core/error.h"
#include "core/metrics.h"
#include "core/tpugraphs_io.h"
#include "halide/measure.h"
#include "halide/schedule.h"
#include "tune/compare.h"

namespace tcost::report {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

const char* const kSchema = "https://vega.github.io/schema/vega-lite/v5.json";

std::string escape_html(const std::string& s) {
  std::string out;
  for (char c : s) {
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

// Text placed inside <script>: a "</script" in it would end the element early ("<\/script" is
// the same text in a JS string, the only place minified code has it). Nothing else is touched:
// "</" alone is legal, and a regex literal such as /</g must stay as it is.
std::string inside_script(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '<' && i + 7 < s.size() && s[i + 1] == '/' &&
        strncasecmp(s.c_str() + i + 2, "script", 6) == 0) {
      out += "<\\/";
      ++i;
    } else {
      out += s[i];
    }
  }
  return out;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot read", path));
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string num(double v, int digits = 3) {
  return std::isfinite(v) ? fmt::format("{:.{}f}", v, digits) : "-";
}

double mean_finite(const std::vector<double>& v) {
  double s = 0;
  int n = 0;
  for (double x : v) {
    if (std::isfinite(x)) {
      s += x;
      ++n;
    }
  }
  return n > 0 ? s / n : std::nan("");
}

// Ranks (0 = smallest), ties broken by index: the order a ranking lists configurations in.
std::vector<int64_t> ranks_of(const std::vector<double>& v) {
  std::vector<int64_t> order(v.size()), rank(v.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return v[a] < v[b]; });
  for (size_t i = 0; i < order.size(); ++i)
    rank[static_cast<size_t>(order[i])] = static_cast<int64_t>(i);
  return rank;
}

// Geomean of 1 + slowdown, as the README states slowdowns ("1.79x").
std::string ratio_geomean(const std::vector<double>& slowdowns) {
  double s = 0;
  for (double x : slowdowns) s += std::log1p(x);
  return num(std::exp(s / static_cast<double>(slowdowns.size())), 2) + "x";
}

json log_axis(const std::string& field, const std::string& title) {
  return {{"field", field},
          {"type", "quantitative"},
          {"title", title},
          {"scale", {{"type", "log"}}},
          {"stack", nullptr}};
}

}  // namespace

Report::Report(std::string title) : title_(std::move(title)) {}

void Report::add_note(const std::string& text) {
  body_ += "<p class=\"note\">" + escape_html(text) + "</p>\n";
}

void Report::section(const std::string& heading, const std::string& intro) {
  body_ += "<h2>" + escape_html(heading) + "</h2>\n";
  if (!intro.empty()) body_ += "<p>" + escape_html(intro) + "</p>\n";
}

void Report::plot(const std::string& caption, json spec) {
  spec["$schema"] = kSchema;
  const size_t id = plots_.size();
  body_ += fmt::format(
      "<figure><div class=\"plot\" id=\"plot{}\"></div><figcaption>{}</figcaption></figure>\n", id,
      escape_html(caption));
  plots_.push_back(std::move(spec));
}

void Report::table(const std::vector<std::string>& header,
                   const std::vector<std::vector<std::string>>& rows) {
  body_ += "<table><thead><tr>";
  for (const auto& h : header) body_ += "<th>" + escape_html(h) + "</th>";
  body_ += "</tr></thead><tbody>\n";
  for (const auto& r : rows) {
    body_ += "<tr>";
    for (const auto& c : r) body_ += "<td>" + escape_html(c) + "</td>";
    body_ += "</tr>\n";
  }
  body_ += "</tbody></table>\n";
}

void Report::add_training(const std::string& model, const std::vector<json>& log) {
  section("Training: " + model,
          "Loss on the training graphs and the validation metric (Kendall tau on layout and "
          "syntax-tree data, minus slowdown@5 on tile data) after each epoch, from the training "
          "log.");
  json rows = json::array();
  for (const auto& r : log) {
    if (!r.contains("epoch")) continue;
    rows.push_back({{"epoch", r.value("epoch", 0)},
                    {"train_loss", r.value("train_loss", std::nan(""))},
                    {"valid_metric", r.value("valid_metric", std::nan(""))},
                    {"best", r.value("best", std::nan(""))}});
  }
  if (rows.empty()) {
    body_ += "<p>The training log holds no epochs.</p>\n";
    return;
  }
  const json x = {{"field", "epoch"}, {"type", "quantitative"}, {"title", "epoch"}};
  plot("Training loss per epoch",
       {{"data", {{"values", rows}}},
        {"width", 420},
        {"height", 240},
        {"mark", {{"type", "line"}, {"point", true}}},
        {"encoding",
         {{"x", x},
          {"y", {{"field", "train_loss"}, {"type", "quantitative"}, {"title", "loss"}}}}}});
  plot("Validation metric per epoch (line) and the best so far (dashed)",
       {{"data", {{"values", rows}}},
        {"width", 420},
        {"height", 240},
        {"layer",
         {{{"mark", {{"type", "line"}, {"point", true}}},
           {"encoding",
            {{"x", x},
             {"y",
              {{"field", "valid_metric"},
               {"type", "quantitative"},
               {"title", "validation metric"},
               {"scale", {{"zero", false}}}}}}}},
          {{"mark", {{"type", "line"}, {"strokeDash", {4, 4}}, {"color", "gray"}}},
           {"encoding", {{"x", x}, {"y", {{"field", "best"}, {"type", "quantitative"}}}}}}}}});
}

namespace {
// The noise ceiling as a vertical crimson rule over a plot of Kendall taus.
json ceiling_rule(double tau) {
  return {{"mark", {{"type", "rule"}, {"color", "crimson"}, {"strokeWidth", 2}}},
          {"encoding", {{"x", {{"datum", tau}, {"type", "quantitative"}}}}}};
}
}  // namespace

void Report::add_predictions(const std::string& model, const std::vector<Predicted>& graphs,
                             const std::optional<NoiseCeiling>& noise) {
  section(
      "Predictions: " + model,
      fmt::format("Predicted against measured rank of every configuration of {} held-out "
                  "graphs (0 = fastest), Kendall tau and slowdown@k per graph and per family{}.",
                  graphs.size(),
                  noise ? fmt::format(", next to the data's noise ceiling ({} tau {:.3f})",
                                      noise->kind, noise->tau)
                        : ""));
  if (graphs.empty()) {
    body_ += "<p>No graphs to predict.</p>\n";
    return;
  }
  json points = json::array(), per_graph = json::array();
  std::map<std::string, std::vector<const Predicted*>> by_family;
  std::map<const Predicted*, std::array<double, 3>> scores;
  for (const auto& g : graphs) {
    const double tau = kendall_tau_b(g.cost, g.runtime);
    const double s1 = slowdown_at_k(g.cost, g.runtime, 1);  // 0: the best was picked
    const double s5 = slowdown_at_k(g.cost, g.runtime, 5);
    scores[&g] = {tau, s1, s5};
    by_family[g.family].push_back(&g);
    const std::string label = fmt::format("{} (tau {})", g.name, num(tau, 2));
    const auto pr = ranks_of(g.cost), mr = ranks_of(g.runtime);
    // At most 400 points a graph (every k-th): enough to see the agreement.
    const size_t stride = std::max<size_t>(1, g.cost.size() / 400);
    for (size_t i = 0; i < g.cost.size(); i += stride)
      points.push_back({{"graph", label}, {"measured", mr[i]}, {"predicted", pr[i]}});
    per_graph.push_back(
        {{"graph", g.name}, {"family", g.family}, {"tau", tau}, {"slowdown", s1}, {"k", "@1"}});
    per_graph.push_back(
        {{"graph", g.name}, {"family", g.family}, {"tau", tau}, {"slowdown", s5}, {"k", "@5"}});
  }
  plot("Predicted against measured rank, per graph (0 = fastest; a perfect model is the diagonal)",
       {{"data", {{"values", points}}},
        {"facet", {{"field", "graph"}, {"type", "nominal"}, {"title", nullptr}}},
        {"columns", 5},
        {"spec",
         {{"width", 150},
          {"height", 150},
          {"mark", {{"type", "point"}, {"size", 10}, {"opacity", 0.6}}},
          {"encoding",
           {{"x", {{"field", "measured"}, {"type", "quantitative"}, {"title", "measured rank"}}},
            {"y",
             {{"field", "predicted"}, {"type", "quantitative"}, {"title", "predicted rank"}}}}}}},
        {"resolve", {{"scale", {{"x", "independent"}, {"y", "independent"}}}}}});
  json tau_layer = {
      {"mark", "bar"},
      {"transform", {{{"filter", "datum.k == '@1'"}}}},
      {"encoding",
       {{"y", {{"field", "graph"}, {"type", "nominal"}, {"sort", "-x"}, {"title", nullptr}}},
        {"x", {{"field", "tau"}, {"type", "quantitative"}, {"title", "Kendall tau"}}},
        {"color", {{"field", "family"}, {"type", "nominal"}}},
        {"tooltip", {{{"field", "graph"}}, {{"field", "tau"}, {"format", ".3f"}}}}}}};
  json layers = json::array({tau_layer});
  if (noise) {
    layers.push_back(ceiling_rule(noise->tau));
  }
  plot(noise ? "Kendall tau per graph; the red line is the noise ceiling" : "Kendall tau per graph",
       {{"data", {{"values", per_graph}}}, {"width", 480}, {"layer", layers}});
  plot(
      "Slowdown@1 and @5 per graph: how much slower the best of the k predicted fastest is than "
      "the best (0 = the best was among them)",
      {{"data", {{"values", per_graph}}},
       {"width", 480},
       {"mark", "bar"},
       {"encoding",
        {{"y", {{"field", "graph"}, {"type", "nominal"}, {"title", nullptr}}},
         {"yOffset", {{"field", "k"}}},
         {"x",
          {{"field", "slowdown"},
           {"type", "quantitative"},
           {"title", "slowdown"},
           {"axis", {{"format", ".0%"}}}}},
         {"color", {{"field", "k"}, {"type", "nominal"}, {"title", "k"}}}}}});
  // Per family: table and bars.
  std::vector<std::vector<std::string>> rows;
  json fam = json::array();
  std::vector<double> all_tau, all_s1, all_s5;
  for (const auto& [family, gs] : by_family) {
    std::vector<double> t, s1, s5;
    for (const auto* g : gs) {
      t.push_back(scores[g][0]);
      s1.push_back(scores[g][1]);
      s5.push_back(scores[g][2]);
    }
    all_tau.insert(all_tau.end(), t.begin(), t.end());
    all_s1.insert(all_s1.end(), s1.begin(), s1.end());
    all_s5.insert(all_s5.end(), s5.begin(), s5.end());
    rows.push_back({family, std::to_string(gs.size()), num(mean_finite(t)),
                    noise ? num(noise->tau) : "-", ratio_geomean(s1), ratio_geomean(s5)});
    fam.push_back({{"family", family}, {"tau", mean_finite(t)}});
  }
  rows.push_back({"all", std::to_string(graphs.size()), num(mean_finite(all_tau)),
                  noise ? num(noise->tau) : "-", ratio_geomean(all_s1), ratio_geomean(all_s5)});
  table({"family", "graphs", "mean tau", "noise ceiling", "slowdown@1 (geomean)",
         "slowdown@5 (geomean)"},
        rows);
  json fam_layers = json::array(
      {{{"mark", "bar"},
        {"encoding",
         {{"y", {{"field", "family"}, {"type", "nominal"}, {"title", nullptr}}},
          {"x", {{"field", "tau"}, {"type", "quantitative"}, {"title", "mean Kendall tau"}}},
          {"color", {{"field", "family"}, {"type", "nominal"}, {"legend", nullptr}}}}}}});
  if (noise) {
    fam_layers.push_back(ceiling_rule(noise->tau));
  }
  plot("Mean Kendall tau per family" +
           std::string(noise ? "; the red line is the noise ceiling" : ""),
       {{"data", {{"values", fam}}}, {"width", 480}, {"layer", fam_layers}});
}

void Report::add_tuning(const std::vector<TuningRun>& runs) {
  section("Tuning",
          "The best runtime found against the number of measurements, per program: tcost and "
          "random search from their logs, the default schedule and Halide's autoschedulers as "
          "flat lines (one schedule each; their search measures nothing here).");
  json rows = json::array();
  std::map<std::string, int> longest;  // per program, the most measurements of any method
  std::vector<std::pair<std::string, json>> flat;  // per (program, method): a single runtime
  for (const auto& run : runs) {
    std::map<std::string, std::pair<int, double>> state;  // program -> (count, best ms)
    for (const auto& r : run.records) {
      const std::string program = r.value("instance", "");
      if (program.empty()) continue;
      if (r.contains("autoscheduler")) {
        if (r.value("ok", false))
          flat.push_back(
              {program, {{"method", run.method}, {"best_ms", r.value("best_ns", 0.0) * 1e-6}}});
        continue;
      }
      if (r.value("pass", 1) != 1) continue;  // verifications are not search steps
      auto& [count, best] =
          state.try_emplace(program, 0, std::numeric_limits<double>::infinity()).first->second;
      ++count;
      if (r.value("ok", false)) best = std::min(best, r.value("best_ns", 0.0) * 1e-6);
      if (run.method == "default") {
        if (std::isfinite(best))
          flat.push_back({program, {{"method", "default"}, {"best_ms", best}}});
        break;
      }
      if (std::isfinite(best)) {
        rows.push_back({{"program", program},
                        {"method", run.method},
                        {"measurements", count},
                        {"best_ms", best}});
        longest[program] = std::max(longest[program], count);
      }
    }
  }
  for (const auto& [program, f] : flat) {
    const int n = std::max(1, longest.count(program) ? longest[program] : 1);
    for (int x : {1, n}) {
      json row = f;
      row["program"] = program;
      row["measurements"] = x;
      rows.push_back(row);
    }
  }
  if (rows.empty()) {
    body_ += "<p>The tuning logs hold no successful measurement.</p>\n";
    return;
  }
  plot("Best runtime found (ms, log scale) against measurements, per program",
       {{"data", {{"values", rows}}},
        {"facet", {{"field", "program"}, {"type", "nominal"}, {"title", nullptr}}},
        {"columns", 3},
        {"spec",
         {{"width", 260},
          {"height", 180},
          {"mark", {{"type", "line"}, {"interpolate", "step-after"}, {"point", true}}},
          {"encoding",
           {{"x", {{"field", "measurements"}, {"type", "quantitative"}}},
            {"y", log_axis("best_ms", "best runtime (ms)")},
            {"color", {{"field", "method"}, {"type", "nominal"}}},
            {"tooltip",
             {{{"field", "method"}},
              {{"field", "measurements"}},
              {{"field", "best_ms"}, {"format", ".3f"}}}}}}}},
        {"resolve", {{"scale", {{"y", "independent"}}}}}});
}

void Report::add_dataset(const std::vector<json>& records, const json& manifest) {
  section("Dataset",
          "Measured runtimes of each program's schedules relative to its best, the best schedule's "
          "speed-up over the default schedule, and failed measurements by kind.");
  std::map<std::string, std::string> family;
  std::map<std::string, std::vector<double>> runtimes;
  std::map<std::string, double> default_ns;
  std::map<std::pair<std::string, std::string>, int> failures;  // (kind, family)
  for (const auto& r : records) {
    if (r.value("pass", 1) != 1) continue;
    const std::string program = r.value("instance", "");
    if (program.empty()) continue;
    family[program] = r.value("family", family_of(program));
    if (!r.value("ok", false)) {
      ++failures[{halide::failure_kind(r.value("error", "")), family[program]}];
      continue;
    }
    const double ns = r.value("best_ns", 0.0);
    if (ns <= 0) continue;
    runtimes[program].push_back(ns);
    // The default schedule: every stage at root, serial, scalar, untiled.
    try {
      const halide::Schedule s = halide::schedule_from_json(r.at("schedule"));
      if (s == halide::Schedule(s.size())) default_ns[program] = ns;
    } catch (const std::exception&) {
      // a record without a readable schedule: not the default
    }
  }
  json spread = json::array(), speedup = json::array(), fails = json::array();
  std::vector<std::vector<std::string>> rows;
  for (auto& [program, v] : runtimes) {
    const double best = *std::min_element(v.begin(), v.end());
    // At most 300 points a program (every k-th, sorted): the box plot's quantiles are unchanged
    // to within a point.
    std::sort(v.begin(), v.end());
    const size_t stride = std::max<size_t>(1, v.size() / 300);
    for (size_t i = 0; i < v.size(); i += stride)
      spread.push_back(
          {{"program", program}, {"family", family[program]}, {"relative", v[i] / best}});
    if (default_ns.count(program)) {
      speedup.push_back({{"program", program},
                         {"family", family[program]},
                         {"speedup", default_ns[program] / best}});
    }
  }
  int total_fail = 0;
  for (const auto& [kf, n] : failures) {
    fails.push_back({{"kind", kf.first}, {"family", kf.second}, {"count", n}});
    total_fail += n;
  }
  size_t total_ok = 0;
  for (const auto& [p, v] : runtimes) total_ok += v.size();
  body_ += fmt::format("<p>{} programs, {} successful measurements, {} failed.", runtimes.size(),
                       total_ok, total_fail);
  if (const auto ceiling = noise_ceiling(manifest)) {
    body_ += fmt::format(" Noise ceiling ({} Kendall tau): {}.", ceiling->kind, num(ceiling->tau));
  } else if (manifest.is_object()) {
    body_ += " Noise ceiling: not measured.";
  }
  if (manifest.is_object() && manifest.contains("machine")) {
    const json& m = manifest["machine"];
    const auto text = [&](const char* k) {
      return m.contains(k) ? (m[k].is_string() ? m[k].get<std::string>() : m[k].dump()) : "?";
    };
    body_ += " Measured on: " +
             escape_html(fmt::format("{}, {} cores, {} GiB, {}", text("cpu"), text("cores"),
                                     text("memory_gib"), text("kernel"))) +
             ".";
  }
  body_ += "</p>\n";
  if (spread.empty()) return;
  const int height = std::max(120, 11 * static_cast<int>(runtimes.size()));
  plot("Runtime of each schedule over the program's best (log scale), per program",
       {{"data", {{"values", spread}}},
        {"width", 520},
        {"height", height},
        {"mark", {{"type", "boxplot"}, {"extent", "min-max"}}},
        {"encoding",
         {{"y", {{"field", "program"}, {"type", "nominal"}, {"title", nullptr}}},
          {"x", log_axis("relative", "runtime / best")},
          {"color", {{"field", "family"}, {"type", "nominal"}, {"legend", nullptr}}}}}});
  if (!speedup.empty()) {
    plot("The best measured schedule's speed-up over the default schedule (log scale)",
         {{"data", {{"values", speedup}}},
          {"width", 520},
          {"height", std::max(120, 11 * static_cast<int>(speedup.size()))},
          {"mark", "bar"},
          {"encoding",
           {{"y", {{"field", "program"}, {"type", "nominal"}, {"title", nullptr}}},
            {"x", log_axis("speedup", "default / best")},
            {"color", {{"field", "family"}, {"type", "nominal"}, {"legend", nullptr}}},
            {"tooltip", {{{"field", "program"}}, {{"field", "speedup"}, {"format", ".2f"}}}}}}});
  }
  if (!fails.empty()) {
    plot("Failed measurements by kind and family",
         {{"data", {{"values", fails}}},
          {"width", 420},
          {"mark", "bar"},
          {"encoding",
           {{"y", {{"field", "kind"}, {"type", "nominal"}, {"title", nullptr}}},
            {"x",
             {{"aggregate", "sum"},
              {"field", "count"},
              {"type", "quantitative"},
              {"title", "failures"}}},
            {"color", {{"field", "family"}, {"type", "nominal"}}}}}});
  }
}

std::string Report::html(const std::string& library) const {
  json specs = json::array();
  for (const auto& p : plots_) specs.push_back(p);
  std::string out;
  out += "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>" +
         escape_html(title_) + "</title>\n";
  out += R"(<style>
body { font-family: sans-serif; margin: 2em auto; max-width: 1250px; color: #222; }
h1 { margin-bottom: 0.2em; } h2 { border-bottom: 1px solid #ccc; margin-top: 2em; }
figure { margin: 1em 0; } figcaption { color: #555; font-size: 0.9em; }
table { border-collapse: collapse; margin: 1em 0; font-size: 0.9em; }
td, th { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: left; }
.note { color: #555; font-size: 0.9em; } #status { color: #888; font-size: 0.8em; }
</style>
)";
  out += "<script>\n" + inside_script(library) + "\n</script>\n</head><body>\n";
  out += "<h1>" + escape_html(title_) + "</h1>\n" + body_;
  out += "<p id=\"status\" data-plots=\"" + std::to_string(plots_.size()) +
         "\" data-rendered=\"0\" data-errors=\"0\" data-done=\"0\">rendering...</p>\n";
  out += "<script>\n";
  out += R"(window.tcostReport = { errors: [], rendered: 0 };
window.addEventListener('error', (e) => tcostReport.errors.push(String(e.message || e)));
const consoleError = console.error.bind(console);
console.error = (...args) => { tcostReport.errors.push(args.map(String).join(' ')); consoleError(...args); };
const specs = )";
  out += inside_script(specs.dump());
  out += R"(;
Promise.all(specs.map((spec, i) =>
  vegaEmbed('#plot' + i, spec, { renderer: 'svg', actions: false })
    .then(() => { tcostReport.rendered += 1; })
    .catch((e) => { tcostReport.errors.push('plot ' + i + ': ' + e); })))
  .finally(() => {
    const s = document.getElementById('status');
    s.dataset.rendered = tcostReport.rendered;
    s.dataset.errors = tcostReport.errors.length;
    s.dataset.done = '1';
    s.textContent = tcostReport.rendered + ' of ' + specs.length + ' plots rendered' +
      (tcostReport.errors.length ? '; errors: ' + tcostReport.errors.join('; ') : '');
  });
</script>
</body></html>
)";
  return out;
}

std::string default_js_dir() {
  if (const char* env = std::getenv("TCOST_JS_DIR"); env != nullptr && *env != '\0') return env;
#ifdef TCOST_JS_DIR
  return TCOST_JS_DIR;
#else
  return "third_party/js/node_modules";
#endif
}

std::string plot_library(const std::string& js_dir) {
  std::string out;
  for (const char* file : {"vega/build/vega.min.js", "vega-lite/build/vega-lite.min.js",
                           "vega-embed/build/vega-embed.min.js"}) {
    const fs::path p = fs::path(js_dir) / file;
    std::error_code ec;
    if (!fs::exists(p, ec)) {
      throw InputError(fmt::format(
          "{}: missing; the report's plotting library (vega, vega-lite, vega-embed, pinned in "
          "third_party/js/package.json) is installed by scripts/install-deps.sh (npm ci "
          "--prefix third_party/js), or set TCOST_JS_DIR to a node_modules directory that has it",
          p.string()));
    }
    out += read_text(p.string());
    out += "\n;\n";
  }
  return out;
}

std::vector<json> read_jsonl(const std::string& path, int* skipped) {
  std::ifstream in(path);
  if (!in) throw InputError(fmt::format("{}: cannot read", path));
  std::vector<json> out;
  std::string line;
  int bad = 0;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    try {
      out.push_back(json::parse(line));
    } catch (const json::exception&) {
      ++bad;
    }
  }
  if (skipped != nullptr) *skipped = bad;
  return out;
}

std::optional<NoiseCeiling> noise_ceiling(const json& manifest) {
  // A figure counts only where it is a number: a collection nothing measured again writes null.
  const auto number = [](const json& object, const char* key) -> std::optional<double> {
    if (!object.is_object() || !object.contains(key) || !object[key].is_number()) return {};
    return object[key].get<double>();
  };
  if (!manifest.is_object()) return {};
  const json none;
  const json& noise = manifest.contains("noise") ? manifest["noise"] : none;
  if (const auto tau = number(noise, "cross_session_tau"))
    return NoiseCeiling{*tau, "cross-session"};
  if (const auto tau = number(noise, "same_run_tau")) return NoiseCeiling{*tau, "same-run"};
  const json& older = manifest.contains("noise_ceiling") ? manifest["noise_ceiling"] : none;
  if (const auto tau = number(older, "kendall_tau")) return NoiseCeiling{*tau, "same-run"};
  return {};
}

std::string family_of(const std::string& graph_name) {
  static const std::regex size_suffix("_[0-9][0-9x]*$");
  const std::string f = std::regex_replace(graph_name, size_suffix, "");
  return f.empty() ? graph_name : f;
}

std::vector<TuningRun> read_tuning_runs(const std::string& log) {
  std::vector<TuningRun> runs;
  std::error_code ec;
  if (!fs::exists(log, ec)) throw InputError(fmt::format("{}: no such tuning log", log));
  runs.push_back({"tcost", read_jsonl(log)});
  // The comparison's logs beside it (tune::method_log), in file-name order.
  std::vector<std::pair<std::string, std::string>> others;  // (file, method)
  for (const std::string& method : tune::method_names()) {
    const std::string path = tune::method_log(log, method);
    if (method != "tcost" && fs::exists(path, ec)) others.emplace_back(path, method);
  }
  std::sort(others.begin(), others.end());
  for (const auto& [path, method] : others) runs.push_back({method, read_jsonl(path)});
  return runs;
}

std::vector<Predicted> predict_split(train::CostModel& model, const std::string& data,
                                     int max_graphs) {
  std::error_code ec;
  const fs::path test = fs::path(data) / "test";
  const std::string dir = fs::is_directory(test, ec) ? test.string() : data;
  auto files = list_npz_files(dir);
  if (files.empty()) throw InputError(fmt::format("{}: no .npz files", dir));
  if (static_cast<int>(files.size()) > max_graphs) files.resize(static_cast<size_t>(max_graphs));
  std::vector<Predicted> out;
  for (const auto& f : files) {
    Predicted p;
    p.name = fs::path(f).stem().string();
    p.family = family_of(p.name);
    if (is_ast_file(f)) {
      const AstSet s = load_ast(f);
      p.cost = model.score(s);
      p.runtime.assign(s.runtime_ns.begin(), s.runtime_ns.end());
    } else {
      const Graph g = load_graph(f);
      p.cost = model.score(g);
      p.runtime.assign(g.runtime_ns.begin(), g.runtime_ns.end());
    }
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace tcost::report
