// tcost report: one self-contained HTML page of plots from a model, its data, tuning logs and a
// collection (docs/report.md). Reading the files is here; the page is src/report.
#include <filesystem>
#include <fstream>
#include <memory>

#include <fmt/format.h>

#include "cli/commands.h"
#include "core/error.h"
#include "report/report.h"

namespace tcost::cli {
namespace {

namespace fs = std::filesystem;

struct ReportOptions {
  std::string out;
  std::string model;
  std::string data;
  std::vector<std::string> tune_logs;
  std::string collect;
  std::string title = "tcost report";
  int max_graphs = 200;
};

// A manifest beside `dir` or above it (data/halide/layout -> data/halide/manifest.json).
nlohmann::json find_manifest(const std::string& dir) {
  for (fs::path p = fs::absolute(dir); !p.empty() && p != p.root_path(); p = p.parent_path()) {
    std::error_code ec;
    if (fs::exists(p / "manifest.json", ec)) {
      std::ifstream in(p / "manifest.json");
      try {
        return nlohmann::json::parse(in);
      } catch (const nlohmann::json::exception& e) {
        throw InputError(fmt::format("{}: not JSON: {}", (p / "manifest.json").string(), e.what()));
      }
    }
    if (p.parent_path() == p) break;
  }
  return nullptr;
}

void run_report(const ReportOptions& o) {
  if (o.model.empty() && o.tune_logs.empty() && o.collect.empty())
    throw UsageError("tcost report needs at least one of --model, --tune-log, --collect");
  if (!o.data.empty() && o.model.empty())
    throw UsageError("--data needs --model (whose predictions to show)");
  // The library first: a missing one is reported before any work.
  const std::string library = report::plot_library(report::default_js_dir());
  report::Report page(o.title);
  nlohmann::json manifest = nullptr;
  if (!o.collect.empty()) manifest = find_manifest(o.collect);
  if (manifest.is_null() && !o.data.empty()) manifest = find_manifest(o.data);
  if (!o.model.empty()) {
    const std::string log = o.model + ".log.jsonl";
    std::error_code ec;
    if (fs::exists(log, ec)) {
      int skipped = 0;
      page.add_training(o.model, report::read_jsonl(log, &skipped));
      page.add_note(
          fmt::format("Training log: {}{}", log,
                      skipped ? fmt::format(" ({} unreadable lines skipped)", skipped) : ""));
    } else {
      page.add_note(fmt::format("No training log at {}: no training curves.", log));
    }
    if (!o.data.empty()) {
      const auto model = train::load_cost_model(o.model);
      page.add_predictions(o.model, report::predict_split(*model, o.data, o.max_graphs),
                           report::noise_ceiling(manifest));
      page.add_note("Predictions on: " + o.data);
    }
  }
  if (!o.tune_logs.empty()) {
    std::vector<report::TuningRun> runs;
    for (const auto& log : o.tune_logs) {
      for (auto& r : report::read_tuning_runs(log)) runs.push_back(std::move(r));
      page.add_note("Tuning log: " + log);
    }
    page.add_tuning(runs);
  }
  if (!o.collect.empty()) {
    const std::string m = (fs::path(o.collect) / "measurements.jsonl").string();
    page.add_dataset(report::read_jsonl(m), manifest);
    page.add_note("Collection: " + o.collect);
  }
  const std::string html = page.html(library);
  const std::string tmp = o.out + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out || !out.write(html.data(), static_cast<std::streamsize>(html.size())))
      throw InputError(fmt::format("{}: cannot write", tmp));
  }
  std::error_code ec;
  fs::rename(tmp, o.out, ec);
  if (ec) throw InputError(fmt::format("{}: cannot write: {}", o.out, ec.message()));
  fmt::print("wrote {} ({} plots, {:.1f} MB)\n", o.out, page.plots(), html.size() / 1e6);
}

}  // namespace

void register_report(CLI::App& app) {
  auto o = std::make_shared<ReportOptions>();
  auto* cmd = app.add_subcommand(
      "report", "Write one self-contained HTML page of plots: training, predictions, tuning, data");
  cmd->add_option("--out", o->out, "The HTML file to write")->required();
  cmd->add_option("--model", o->model,
                  "A checkpoint: its training curves (CHECKPOINT.log.jsonl) and, with --data, its "
                  "predictions");
  cmd->add_option("--data", o->data,
                  "A dataset directory: the model's predictions on its test split (or on every "
                  "file when it has none)")
      ->check(CLI::ExistingDirectory);
  cmd->add_option("--tune-log", o->tune_logs,
                  "A tcost tune log (repeatable); the comparison's LOG.METHOD.jsonl beside it are "
                  "read too");
  cmd->add_option("--collect", o->collect,
                  "A collection directory (measurements.jsonl, manifest.json)")
      ->check(CLI::ExistingDirectory);
  cmd->add_option("--title", o->title, "The page's title")->capture_default_str();
  cmd->add_option("--max-graphs", o->max_graphs, "Graphs of --data to predict, at most")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->callback([o] { run_report(*o); });
}

}  // namespace tcost::cli
