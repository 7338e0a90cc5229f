// The datasets of a collection, written from its record (docs/formats.md): for each program,
// the successful first-pass measurements (the configurations, in the order measured) as
// OUT/layout/SPLIT/NAME.npz, OUT/tile/SPLIT/NAME.npz (single-kernel programs) and
// OUT/ast/SPLIT/NAME.npz (syntax trees; a file whose runtimes are unchanged is kept).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/ast.h"
#include "halide/collect.h"
#include "halide/result_log.h"
#include "halide/run_statistic.h"
#include "halide/zoo.h"

namespace tcost::halide {

// Positions in log.records() of each program's successful first-pass measurements, in the
// order they were measured. Positions stay valid while the log grows.
std::map<std::string, std::vector<size_t>> first_pass_by_program(const ResultLog& log);

struct Measured {
  std::vector<Schedule> schedules;
  std::vector<int64_t> runtime_ns;
  int64_t normalizer_ns = 0;  // the default schedule's runtime
  int64_t left_out = 0;       // measured, but never on the dataset's target and CPU
  int64_t failed_check = 0;   // measured, but a measurement of it failed_check: left out
  int64_t pooled = 0;         // schedules whose runtime pools a later session's (pool_sessions)
};

// The key of measurement number k (k >= 2) of the same schedule as `key` (collect --passes):
// "repeat|k|KEY", pass 5.
std::string repeat_key(const std::string& key, int k);
// The key of later session `session`'s measurement of the same schedule as `key` (collect
// --cross-session): "session|ID|KEY", pass 4; its repeats are repeat_key's of it.
std::string session_key(const std::string& session, const std::string& key);
// Which measurements a dataset takes: those taken under one Halide target (another target
// compiles other code) on one CPU (the project's machines of one kind are not all one CPU, the
// target string does not tell them apart, and two CPUs rank schedules differently). An empty
// field matches every record; a record that does not name its CPU matches no CPU.
struct MeasuredOn {
  std::string target;
  std::string cpu;
  bool matches(const nlohmann::json& record) const;
};
// Whether a measurement found its schedule unsound: a wrong output, a read outside an input
// (reads_outside_inputs) or a crash. A schedule with one such measurement, in any pass, is left
// out of the datasets even when other passes succeeded (a race or a stray read can pass once).
bool failed_check(const nlohmann::json& record);
// Whether `record` or one of its repeats failed_check (its schedule is then left out).
bool any_pass_failed_check(const ResultLog& log, const nlohmann::json& record);
// The runtime of a measurement and of its repeats on record that were taken `on` the given
// target and CPU: the minimum over the ok ones of each one's `statistic` (best_ns or
// median_ns); 0 when none is.
double runtime_of_passes(const ResultLog& log, const nlohmann::json& record,
                         const MeasuredOn& on = {},
                         RunStatistic statistic = RunStatistic::best_run);
// The measurement `record` and its repeats on record, in order (first, repeat 2, 3, ...).
std::vector<const nlohmann::json*> passes_of(const ResultLog& log, const nlohmann::json& record);
// How many of them were taken `on` the target and CPU: all attempts, or with `ok_only` the
// successful ones.
int passes_under(const ResultLog& log, const nlohmann::json& record, const MeasuredOn& on,
                 bool ok_only = false);

// The configurations of one program: the records at `positions` (first_pass_by_program), each
// with the runtime of its passes taken `on` the dataset's target and CPU (runtime_of_passes). A
// schedule with no such pass is left out (counted in `left_out`).
//
// `pooled_sessions` (collect --pool-sessions) names later sessions (collect --cross-session)
// whose measurements join the collection's own: a schedule a session measured again (its record
// "session|ID|KEY" and repeats, taken `on` the same target and CPU) gets the geometric mean of
// its runtime in each side that has one, the collection's own first, each later session's
// divided first by that session's shift on the program (the median over the program's schedules
// of session / own runtime), so that a schedule measured in fewer sessions is not moved by a
// whole session running slower or faster. A schedule that a pooled session's measurement found
// unsound (failed_check) is left out, as one found unsound by its own passes.
Measured measured_configs(const ResultLog& log, const std::vector<size_t>& positions,
                          const ProgramInfo& p, const MeasuredOn& on = {},
                          RunStatistic statistic = RunStatistic::best_run,
                          const std::vector<std::string>& pooled_sessions = {});

// The syntax trees of `schedules` (lower_ast), one configuration each, in order, with the
// stage encodings and runtimes of `layout`, their layout graph (layout_graph of the same
// schedules; its runtimes may be zeros), so that a tree file and its layout twin can be
// matched. InputError when Halide rejects a schedule; InternalError when `layout` holds
// another count of configurations.
AstSet ast_set(const Program& program, const std::vector<Schedule>& schedules, const Graph& layout);
// The same from trees already lowered: trees[i] is schedule i's (lower_ast), for callers that
// keep trees across calls (the tuner lowers each schedule once).
AstSet ast_set(const ProgramInfo& p, const std::vector<const AstTree*>& trees, const Graph& layout);

void write_datasets(const std::string& out, const InstanceName& in, const Program& program,
                    const Measured& m, bool with_ast, CollectSummary& summary);

}  // namespace tcost::halide
