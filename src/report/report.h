// `tcost report`: one self-contained HTML page of plots (docs/report.md). The plots are
// Vega-Lite specifications rendered by the pinned vega, vega-lite and vega-embed from npm
// (third_party/js), whose builds are inlined into the page, so it works offline.
//   Report         - a page under construction: sections of plots and tables, added from values.
//   add_training   - loss and validation metric per epoch, from a training log's records.
//   add_predictions- predicted against measured rank per test graph, tau and slowdown@k per graph
//                    and per family, next to the noise ceiling.
//   add_tuning     - best runtime found against measurements, per program and method.
//   add_dataset    - runtime spread, best/default speed-up per program, failures by kind.
//   plot_library   - the three inlined scripts, read from a directory (InputError naming what is
//                    missing and how to install it).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/graph.h"
#include "train/cost_model.h"

namespace tcost::report {

// One measured graph (or syntax-tree set) with the model's predicted costs.
struct Predicted {
  std::string name;
  std::string family;
  std::vector<double> cost;     // predicted, lower = faster
  std::vector<double> runtime;  // measured
};

// A data's noise ceiling (Kendall tau) and how it was measured.
struct NoiseCeiling {
  double tau;
  std::string kind;  // "cross-session" or "same-run"
};

// The records of one tuning run of one method (a tune log or a comparison's log).
struct TuningRun {
  std::string method;                   // "tcost", "random", "default", "adams2019", ...
  std::vector<nlohmann::json> records;  // in the order measured
};

class Report {
 public:
  explicit Report(std::string title);
  void add_note(const std::string& text);  // a paragraph under the title (what was read)
  void add_training(const std::string& model, const std::vector<nlohmann::json>& log);
  // `noise`: the data's noise ceiling, when known (noise_ceiling()).
  void add_predictions(const std::string& model, const std::vector<Predicted>& graphs,
                       const std::optional<NoiseCeiling>& noise);
  void add_tuning(const std::vector<TuningRun>& runs);
  // `records`: a collection's measurements; `manifest`: its manifest (or null).
  void add_dataset(const std::vector<nlohmann::json>& records, const nlohmann::json& manifest);
  int plots() const { return static_cast<int>(plots_.size()); }
  // The page; `library` is plot_library()'s text.
  std::string html(const std::string& library) const;

 private:
  void section(const std::string& heading, const std::string& intro);
  void plot(const std::string& caption, nlohmann::json spec);
  void table(const std::vector<std::string>& header,
             const std::vector<std::vector<std::string>>& rows);

  std::string title_;
  std::string body_;
  std::vector<nlohmann::json> plots_;
};

std::string plot_library(const std::string& js_dir);
// The directory the build was told (TCOST_JS_DIR at configure time), or $TCOST_JS_DIR.
std::string default_js_dir();

// Reading inputs: JSON lines (a cut or damaged line is skipped and counted in `skipped`).
std::vector<nlohmann::json> read_jsonl(const std::string& path, int* skipped = nullptr);
// The data's noise ceiling from its manifest: the cross-session Kendall tau where a later run
// measured it (noise.cross_session_tau), else the same-run tau (noise.same_run_tau, or the older
// noise_ceiling.kendall_tau), else none (a figure nothing has measured is null in the manifest).
std::optional<NoiseCeiling> noise_ceiling(const nlohmann::json& manifest);
// The family of a graph from its name: a trailing "_28x64x128"-style size removed.
std::string family_of(const std::string& graph_name);

// The tuning runs of a tune log: FILE itself (tcost) and each comparison method's
// FILE.METHOD.jsonl beside it (tune::method_log; not the confirmations, tune::confirm_log).
std::vector<TuningRun> read_tuning_runs(const std::string& log);
// Predictions of `model` on every graph under `data`'s test split (or `data` itself when it has
// none); at most `max_graphs` graphs, in name order.
std::vector<Predicted> predict_split(train::CostModel& model, const std::string& data,
                                     int max_graphs = 200);

}  // namespace tcost::report
