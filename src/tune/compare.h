// Side-by-side comparison of schedule search methods on one Program, every result measured by
// the same protocol in the same run (docs/tune.md):
//   default          - the default schedule (every stage at root, serial, scalar)
//   random           - random search with tcost's measurement budget
//   li2018, mullapudi2016, adams2019, adams2019-greedy - Halide 14's own autoschedulers
//                      (Debian's plugins), Adams2019 with beam 32 and with beam 1
//   tcost            - model-guided search (tuner.h)
//   tcost-fastest-run - with TuneOptions::finalists > 1, not a method to ask for but a row
//                      beside tcost: the schedule the search's single fastest run would have
//                      chosen, confirmed beside tcost's choice (the same confirmations when
//                      the two are one schedule)
// An autoscheduler's schedule is measured in a child process like any other; its outputs are
// checked against the default schedule's. A failure (Halide rejects the pipeline, a crash, a
// timeout, wrong outputs) is a result with an error, not an exception.
// Confirmation: a measuring process can settle in a mode up to 2x slower or faster than the
// next (docs/collect.md), and the best of a search's many measurements favours lucky ones, so
// once every method has chosen, each method's schedule is measured again in `confirm` fresh
// processes, one of each method per round, and the median of those is its runtime.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "halide/program.h"
#include "tune/tuner.h"

namespace tcost::tune {

// Every method name --compare accepts, in the table's order (tcost last).
const std::vector<std::string>& method_names();
// The methods of a comma-separated list ("default,adams2019"); UsageError naming an unknown
// one, prefixed with `what` (the flag or variable the list came from).
std::vector<std::string> parse_methods(const std::string& list, const std::string& what);

struct MethodResult {
  std::string method;
  bool ok = false;
  std::string error;
  double runtime_ms = 0;           // the chosen schedule's runtime: the median of its confirmations
                                   // (without confirmations, its best run during the search)
  double search_runtime_ms = 0;    // its best run during the search (or the autoscheduler's run)
  std::vector<double> confirm_ms;  // each confirmation's best run, in round order
  double search_s = 0;   // time spent choosing it (autoscheduler search; tuner wall clock)
  int measurements = 0;  // measurements the method took
};

struct CompareOptions {
  TuneOptions tune;                     // tcost and random search (same budget)
  std::vector<std::string> methods;     // from method_names()
  std::string plugin_dir;               // where libautoschedule_*.so are
  double autoschedule_timeout_s = 900;  // per autoscheduler: search + compile + runs
  int64_t llc_bytes = 16 << 20;         // MachineParams' last-level cache
  int confirm = 3;                      // confirmation rounds (0: none)
};

// Runs every method of o.methods on the program; `model` (and, for a syntax-tree model,
// `prerank`: tune()) is needed for "tcost". The default schedule's outputs are computed once
// (reference_outputs) and every method's measurements are checked against them; when the
// default schedule cannot run, every method fails with that error.
std::vector<MethodResult> compare_methods(const halide::Program& program, train::CostModel* model,
                                          const CompareOptions& o,
                                          train::CostModel* prerank = nullptr);

nlohmann::json to_json(const MethodResult& r);

// The comparison's records beside the tuning log `log`: method's in LOG.METHOD.jsonl (tcost's
// in LOG itself), the confirmations in LOG.confirm.jsonl ("confirm" is no method's name).
std::string method_log(const std::string& log, const std::string& method);
std::string confirm_log(const std::string& log);

}  // namespace tcost::tune
