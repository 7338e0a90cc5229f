// Model-guided schedule search for one Program (the TVM/Ansor loop on tcost's pieces):
//   1. candidates: seeded samples of the schedule space, mutations and crossovers of the best
//      schedules measured so far;
//   2. the cost model ranks them all (one layout graph, thousands of configurations); a model
//      that reads syntax trees re-ranks the best of them after a layout model's first ranking
//      (lowering every candidate would take minutes);
//   3. the best few of each round (plus a few at random, to explore) are measured in isolated
//      child processes, every output checked against the default schedule's;
//   4. the model is refit on this program's own measurements;
//   5. until the measurement budget or the time budget is spent.
// Without a model the same loop is random search: samples measured in the sampler's order.
// Every measurement is appended to the tuning log in collect's record format, so tuning also
// makes training data; a rerun with the same log reuses the schedules on record.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "halide/program.h"
#include "train/cost_model.h"

namespace tcost::tune {

struct TuneOptions {
  int budget = 64;               // new measurements at most (the default schedule's included)
  double time_budget_min = 5;    // wall clock of the search at most (0: no limit)
  int candidates = 2000;         // candidates the model ranks per round
  int rerank = 128;              // a syntax-tree model: candidates lowered and re-ranked per round
  int per_round = 8;             // measured per round
  double explore = 0.25;         // fraction of each round's measurements chosen at random
  int threads = 2;               // Halide threads in timed runs
  int workers = 2;               // measurements in flight (compiles overlap, timed runs alone)
  double timeout_s = 10;         // per measurement (compile + runs)
  double max_run_seconds = 0.5;  // timed runs per measurement stop after this much run time
  // The measuring protocol (collect's --pin-threads and --arena, docs/collect.md): the search's
  // measurements, its verification and compare_methods' confirmations alike. A model trained on
  // a collection measured under one protocol ranks what that protocol measures.
  bool pin_threads = false;
  halide::Placement placement = halide::Placement::heap;
  uint64_t seed = 0;
  // The choice among the fastest measured schedules: with N > 1 the N fastest are each measured
  // once more in a fresh process, and the one whose slower measurement is the fastest is chosen
  // (the single fastest run favours a lucky process); 1 takes the fastest run.
  int finalists = 1;
  bool refit = true;  // refit the model on the program's measurements after every round
  train::RefitOptions refit_options;
  std::string log;  // tuning log (JSON lines); required
  // The default schedule's outputs (reference_outputs) when the caller has them already
  // (compare_methods computes them once for every method); null: tune() computes them.
  std::shared_ptr<const halide::Outputs> reference;
  bool quiet = false;  // no progress lines
};

struct TuneResult {
  std::string program;
  halide::Schedule best;
  double best_ns = 0;        // fastest measured schedule, outputs checked
  double default_ns = 0;     // the default schedule
  int measured = 0;          // new measurements (failures included)
  int failed = 0;            // of which failed (timeouts, crashes, rejected, wrong outputs)
  std::string common_error;  // the most frequent failure, when there were failures
  int reused = 0;            // schedules taken from the log
  double search_s = 0;       // wall clock of the whole search
  // Best runtime known after each new measurement (ns), for tuning curves.
  std::vector<double> best_after;
  // The schedule of the single fastest run, what finalists = 1 takes (with finalists > 1, to
  // compare the two choices), and that run's time; not verified unless it is `best`.
  halide::Schedule fastest_run;
  double fastest_run_ns = 0;
  int finalists_measured = 0;  // re-measurements of the finalists (not in `measured`)
};

// The default schedule's outputs, which every measured schedule's are checked against, computed
// in a child process (halide::default_outputs). InputError naming the program when the default
// schedule cannot run within halide::reference_timeout_s(o.timeout_s) (6 o.timeout_s, at least
// 60 s).
halide::Outputs reference_outputs(const halide::Program& program, const TuneOptions& o);

// InputError when the default schedule itself cannot run, or when the models do not fit:
// `model` reads layout graphs, or it reads syntax trees (ast-gcn, tgraph-ast, an ensemble with
// such members) and `prerank`, a layout model, ranks the candidates first (two stages: the
// best o.rerank of its ranking are lowered and ranked again by `model`). `model` may be null
// (random search). The models are refit in place on the program's measurements (o.refit), the
// syntax-tree model on them lowered to syntax trees. The result is the fastest measured schedule
// (with o.finalists > 1: the finalist whose slower measurement is fastest; the finalists'
// re-measurements are records "final|KEY", pass 2, outputs checked, taken from the log when
// there) that passes a verification: measured once more with its outputs checked and compiled
// with Halide's bounds asserts (a record "bounds_checked": true, key "verify-bounds|..."); one
// that reads or writes outside a buffer, or computes a wrong answer, is dropped for the next
// best.
TuneResult tune(const halide::Program& program, train::CostModel* model, const TuneOptions& o,
                train::CostModel* prerank = nullptr);

// The checks tune() makes of its models (above), before any work: UsageError or InputError.
void check_tuning_models(const train::CostModel* model, const train::CostModel* prerank);

// Without measuring: the model's favourite among `candidates` seeded samples of the space and
// a quarter as many sketches (in two stages for a syntax-tree model: tune()).
halide::Schedule pick_by_model(const halide::Program& program, train::CostModel& model,
                               int candidates, uint64_t seed, train::CostModel* prerank = nullptr,
                               int rerank = TuneOptions().rerank);

// The fastest schedule of this program in a tuning log whose outputs were checked and that
// its verification (tune(): outputs checked, bounds asserts on) did not refuse; where the log
// holds finalists' re-measurements (TuneOptions::finalists), the finalist tune() chose: the one
// whose slower measurement is fastest. Nothing when the log has none (or does not exist).
std::optional<std::pair<halide::Schedule, double>> best_on_record(const halide::Program& program,
                                                                  const std::string& log);

}  // namespace tcost::tune
