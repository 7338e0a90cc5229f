// tcost tune: model-guided schedule search on zoo programs, with Halide's autoschedulers and
// random search side by side (tune/compare.h).
#include <cmath>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "core/error.h"
#include "halide/datasets.h"
#include "halide/featurize.h"
#include "halide/zoo.h"
#include "train/cost_model.h"
#include "tune/compare.h"

#ifndef TCOST_HALIDE_PLUGIN_DIR
#define TCOST_HALIDE_PLUGIN_DIR "/usr/lib/x86_64-linux-gnu/halide14"
#endif

namespace tcost::cli {
namespace {

struct TuneCliOptions {
  std::string program;  // glob over zoo instances or families
  std::string model;    // checkpoint
  std::string prerank;  // checkpoint of a layout model, for a model that reads syntax trees
  std::string compare = "tcost";
  bool json = false;
  tune::CompareOptions compare_options;
};

void print_table(const std::vector<std::string>& programs,
                 const std::vector<std::vector<tune::MethodResult>>& rows, int confirm) {
  if (rows.empty()) return;
  std::string head = fmt::format("{:<28}", "program");
  std::string rule = std::string(28, '-');
  for (const auto& m : rows.front()) {
    head += fmt::format(" | {:>18}", m.method + " ms (s)");
    rule += "-|-" + std::string(18, '-');
  }
  fmt::print("{}\n{}\n", head, rule);
  // Geometric means over the programs where both methods succeeded.
  std::map<std::string, std::vector<double>> log_speedup, log_vs_tcost;
  for (size_t i = 0; i < rows.size(); ++i) {
    std::string line = fmt::format("{:<28}", programs[i]);
    double default_ms = 0, tcost_ms = 0;
    for (const auto& m : rows[i]) {
      if (m.method == "default" && m.ok) default_ms = m.runtime_ms;
      if (m.method == "tcost" && m.ok) tcost_ms = m.runtime_ms;
    }
    for (const auto& m : rows[i]) {
      line += m.ok ? fmt::format(" | {:>9.3f} ({:>6.1f})", m.runtime_ms, m.search_s)
                   : fmt::format(" | {:>18}", "failed");
      if (m.ok && default_ms > 0)
        log_speedup[m.method].push_back(std::log(default_ms / m.runtime_ms));
      if (m.ok && tcost_ms > 0) log_vs_tcost[m.method].push_back(std::log(m.runtime_ms / tcost_ms));
    }
    fmt::print("{}\n", line);
  }
  const auto geomean = [](const std::vector<double>& v) {
    double s = 0;
    for (double x : v) s += x;
    return v.empty() ? NAN : std::exp(s / static_cast<double>(v.size()));
  };
  std::string a = fmt::format("{:<28}", "geomean speed-up vs default");
  std::string b = fmt::format("{:<28}", "geomean runtime / tcost's");
  for (const auto& m : rows.front()) {
    a += fmt::format(" | {:>18.2f}", geomean(log_speedup[m.method]));
    b += fmt::format(" | {:>18.2f}", geomean(log_vs_tcost[m.method]));
  }
  fmt::print("{}\n{}\n", a, b);
  if (confirm > 0) {
    fmt::print(
        "runtimes: the median of {} measurements of each method's schedule in fresh "
        "processes, one of each method per round (--json: search_runtime_ms, the "
        "search's best run, and confirm_ms)\n",
        confirm);
  }
  for (size_t i = 0; i < rows.size(); ++i) {
    for (const auto& m : rows[i]) {
      if (!m.ok) fmt::print("{} {}: {}\n", programs[i], m.method, m.error);
    }
  }
}

void run_tune(TuneCliOptions& o) {
  auto& co = o.compare_options;
  co.methods = tune::parse_methods(o.compare, "--compare");
  if (std::find(co.methods.begin(), co.methods.end(), "tcost") == co.methods.end())
    co.methods.push_back("tcost");
  std::unique_ptr<train::CostModel> model = train::load_cost_model(o.model);
  std::unique_ptr<train::CostModel> prerank;
  if (!o.prerank.empty()) prerank = train::load_cost_model(o.prerank);
  try {
    tune::check_tuning_models(model.get(), prerank.get());
  } catch (const InputError& e) {
    throw InputError(fmt::format("{}: {}", o.model, e.what()));
  }
  std::vector<std::string> names;
  std::vector<std::vector<tune::MethodResult>> rows;
  nlohmann::json out = {{"programs", nlohmann::json::array()}};
  for (const auto& in : halide::select_instances(o.program)) {
    const halide::Program p = halide::zoo_program(in.name);
    // A model that cannot read this program's graphs (or trees) is a bad input, not a failed
    // search.
    const std::vector<halide::Schedule> def = {halide::default_schedule(p.info())};
    const Graph g = halide::layout_graph(p.info(), def, {});
    if (prerank) {
      prerank->score(g);
      const AstSet trees = halide::ast_set(p, def, g);
      model->score(train::Views{&g, &trees});
    } else {
      model->score(g);
    }
    // Every program starts from the models as loaded: refits stay with their program.
    if (!names.empty()) {
      model = train::load_cost_model(o.model);
      if (prerank) prerank = train::load_cost_model(o.prerank);
    }
    names.push_back(in.name);
    rows.push_back(tune::compare_methods(p, model.get(), co, prerank.get()));
    nlohmann::json methods = nlohmann::json::array();
    for (const auto& m : rows.back()) methods.push_back(tune::to_json(m));
    out["programs"].push_back({{"program", in.name}, {"methods", methods}});
    if (!o.json) fmt::print(stderr, "{}: done\n", in.name);
  }
  if (o.json) {
    fmt::print("{}\n", out.dump());
  } else {
    print_table(names, rows, co.confirm);
  }
  fmt::print(stderr, "see the tuning curves: tcost report --out tune-report.html --tune-log {}\n",
             co.tune.log);
}

}  // namespace

void register_tune(CLI::App& app) {
  auto o = std::make_shared<TuneCliOptions>();
  auto& t = o->compare_options.tune;
  o->compare_options.plugin_dir = TCOST_HALIDE_PLUGIN_DIR;
  auto* cmd = app.add_subcommand(
      "tune", "Search schedules of zoo programs with a cost model, beside Halide's autoschedulers");
  cmd->add_option("--program", o->program, "Zoo instances or families (a glob)")->required();
  cmd->add_option("--model", o->model,
                  "Cost model checkpoint: a layout model, or one that reads syntax trees (with "
                  "--prerank)")
      ->required();
  cmd->add_option("--prerank", o->prerank,
                  "Layout model checkpoint that ranks the candidates first, for a --model that "
                  "reads syntax trees (it re-ranks the best --rerank of them)");
  cmd->add_option("--rerank", t.rerank, "Candidates lowered and re-ranked per round (--prerank)")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  cmd->add_option("--budget", t.budget, "Measurements per program (and per search method)")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  cmd->add_option("--time-budget", t.time_budget_min, "Search minutes per program (0: none)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1e6));
  cmd->add_option("--compare", o->compare,
                  "Methods, comma-separated: default,random,li2018,mullapudi2016,adams2019,"
                  "adams2019-greedy (tcost always runs)")
      ->capture_default_str();
  cmd->add_option("--log", t.log, "Tuning log (JSON lines; other methods write LOG.METHOD.jsonl)")
      ->required();
  cmd->add_option("--seed", t.seed, "Seed")->capture_default_str();
  cmd->add_option("--candidates", t.candidates, "Candidates ranked by the model per round")
      ->capture_default_str()
      ->check(CLI::Range(8, 1000000));
  cmd->add_option("--per-round", t.per_round, "Measurements per round")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));
  cmd->add_option("--threads", t.threads, "Halide threads in timed runs")
      ->capture_default_str()
      ->check(CLI::Range(1, 256));
  cmd->add_option("--workers", t.workers, "Measurements in flight")
      ->capture_default_str()
      ->check(CLI::Range(1, 64));
  cmd->add_option("--timeout", t.timeout_s, "Seconds per measurement")
      ->capture_default_str()
      ->check(CLI::Range(0.1, 1e5));
  cmd->add_option("--autoschedule-timeout", o->compare_options.autoschedule_timeout_s,
                  "Seconds per Halide autoscheduler run (search, compile and timing)")
      ->capture_default_str();
  cmd->add_option("--confirm", o->compare_options.confirm,
                  "Rounds that measure every method's chosen schedule again in a fresh process "
                  "(its runtime: their median; 0: the search's best run)")
      ->capture_default_str()
      ->check(CLI::Range(0, 100));
  cmd->add_option("--finalists", t.finalists,
                  "Measure the N fastest schedules of the search once more each, and choose the "
                  "one whose slower measurement is fastest (1: the fastest run; with N > 1 and "
                  "--confirm, the fastest run's schedule is confirmed beside it, "
                  "\"tcost-fastest-run\")")
      ->capture_default_str()
      ->check(CLI::Range(1, 64));
  cmd->add_flag("--pin-threads", t.pin_threads,
                "Protocol (collect's): after the warm-up, pin each measuring process's threads "
                "one per CPU; every method's measurements alike");
  cmd->add_flag_callback(
      "--arena",
      [o] {
        halide::Placement& p = o->compare_options.tune.placement;
        if (p == halide::Placement::heap) p = halide::Placement::arena;
      },
      "Protocol (collect's): the runs' buffers at the same addresses in every measuring "
      "process; every method's measurements alike");
  cmd->add_flag_callback(
      "--huge-pages",
      [o] {
        refuse_huge_pages_if_unavailable();
        o->compare_options.tune.placement = halide::Placement::arena_huge;
      },
      "Protocol (collect's): --arena, its memory on transparent huge pages; every method's "
      "measurements alike");
  cmd->add_flag("!--no-refit", t.refit, "Do not refit the model on the program's measurements");
  cmd->add_flag("--json", o->json, "One JSON object instead of the table");
  cmd->callback([o] {
    o->compare_options.tune.quiet = o->json;
    run_tune(*o);
  });
}

}  // namespace tcost::cli
