// tcost collect: measures the programs of the Halide zoo (zoo.h) under sampled schedules
// (schedule.h) and writes datasets. Measurements are appended to OUT/measurements.jsonl as
// they finish; a restarted collection skips what is there. From every successful measurement
// on record it writes, split by family (train / valid / test):
//   OUT/layout/SPLIT/NAME.npz  layout-style graphs: stages are configurable nodes
//   OUT/tile/SPLIT/NAME.npz    tile-style files for single-kernel programs
//   OUT/ast/SPLIT/NAME.npz     syntax trees of the lowered loop nests (AST schema)
// Formats: docs/formats.md; protocol: docs/collect.md.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "halide/run_statistic.h"
#include "halide/zoo.h"

namespace tcost::halide {

struct CollectOptions {
  std::string out;              // output directory
  std::string pipelines = "*";  // glob over instance or family names, e.g. "matmul*"
  int configs_per_graph = 100;  // sampled schedules per instance (plus the default)
  uint64_t seed = 0;
  // Sketches (sketch_schedules) per instance besides the samples: the structures the tuner
  // explores, so that the model learns to rank them.
  int sketches = 0;
  double time_budget_min = 0;    // stop starting measurements after this (0 = none)
  int threads = 2;               // Halide threads in timed runs
  double timeout_s = 10;         // per schedule: compile + runs (+ waiting for the timing lock)
  double max_run_seconds = 0.5;  // stop repeating timed runs after this much run time
  double min_run_seconds = 0;    // MeasureOptions::min_run_seconds (--min-run-seconds)
  int workers = 2;               // measurements in flight: compiles overlap, timed runs do not
  double remeasure = 0;          // fraction of measured schedules timed again in a second pass
  bool ast = true;               // write the syntax-tree datasets (lowers every configuration)
  // --statistic best-run|median-run: what the datasets read off each measurement before taking
  // the minimum over its passes (RunStatistic). "" keeps the collection's own (its manifest's
  // protocol.statistic; best-run for a new one). The manifest records it, so a later run or a
  // --rewrite keeps it; naming another one rewrites the datasets with it (the records hold both).
  std::string statistic;
  // false: measure nothing, only rewrite the datasets and the manifest from the records on
  // file (after a change of featurisation: the runtimes do not depend on it).
  bool measure = true;
  // --shard I/N: measure only this share of the chosen programs (shard_programs); the datasets
  // and manifest cover what is on record, as always. `tcost merge` joins the shards.
  int shard_index = 0;
  int shard_count = 1;
  // --cross-session N: time again up to N of each program's measured schedules (the default
  // among them), in this later, independent run (which then measures nothing new), as session
  // `session` (records "session|ID|KEY", pass 4; a rerun with the same ID resumes it). The
  // manifest's noise block then gives the cross-session tau and the spread of new/old runtimes
  // (cross_session_noise).
  int cross_session = 0;
  std::string session;  // default: today's UTC date
  // --pool-sessions LIST: later sessions (--cross-session) whose measurements the datasets pool
  // with the collection's own (measured_configs: the geometric mean over the sessions that
  // measured a schedule, each session's shift on the program taken out). LIST is session IDs
  // separated by commas, "all" (every later session on the data's CPU) or "none"; "" keeps the
  // collection's own (its manifest's protocol.pooled_sessions; none for a new one). The manifest
  // records the list, so a later run or a --rewrite keeps it. The noise figures
  // (noise.cross_session) compare the collection's own measurements with each session's, pooled
  // or not.
  std::string pool_sessions;
  // Protocol knobs (MeasureOptions) for the protocol study; defaults are the shipped protocol.
  int warmup_runs = 1;
  int min_runs = 3;
  double tolerance = 0.03;
  bool strict_lock = true;   // MeasureOptions::exclusive_until_exit (--no-strict-lock: false)
  bool pin_threads = false;  // MeasureOptions::pin_threads (--pin-threads)
  ThreadPool pool = ThreadPool::halide;  // BatchOptions::pool (--spin-pool: spinning)
  bool steady_heap = false;              // MeasureOptions::steady_heap (--steady-heap)
  // BatchOptions::placement (--arena: arena; --huge-pages: arena_huge)
  Placement placement = Placement::heap;
  // --passes K: every schedule (and, with --cross-session, every schedule of the session) is
  // measured K times, pass after pass (each pass over all of them before the next starts), and
  // its runtime is the minimum: repetition in separate processes spaced in time is what the
  // protocol study found to cut cross-session noise (docs/collect.md).
  int passes = 1;
  // --forks F: each compile of a schedule is timed in F processes forked from the compiling
  // one (MeasureOptions::processes), each recorded as a measurement: a schedule gets passes * F
  // measurements, F per compile, at the cost of one compile per pass (docs/collect.md).
  int forks = 1;
  bool compile_each = false;  // MeasureOptions::compile_each (--compile-each)
  // --recorded: measure again the schedules on record (every successful first measurement of
  // the chosen programs) instead of sampling new ones: with --passes K, each ends with K
  // measurements under this run's Halide target (collect's repeat rounds). This is how a
  // collection taken with fewer passes, or under another target, is brought to the protocol.
  bool recorded = false;
  // --schedules-from DIR: measure the schedules of another collection instead of a sample: for
  // each chosen program, every schedule whose first measurement in DIR succeeded on DIR's CPU
  // (what DIR's datasets hold), under the same keys. How a collection is
  // measured again on another CPU (collections are one CPU's). DIR is only read;
  // --configs-per-graph and --sketches do not apply.
  std::string schedules_from;
  // --check: every measurement's outputs (after its timed runs) are compared with the default
  // schedule's, computed once per program in a child; a difference is a recorded failure
  // ("wrong output: ..."), and checked records say so ("checked": true), as the tuner's do.
  bool check = false;
  // --check-every-run (implies check): the outputs are checked after every timed run, poisoned
  // before each (MeasureOptions::check_every_run); such records say "checked_every_run": true.
  bool check_every_run = false;
  // --at-least N: after the planned schedules, a program whose datasets would hold fewer than N
  // schedules (measured ok on the data's CPU, none found unsound) gets more of its seeded sample:
  // the next schedules of sample_schedules(seed) that neither this collection nor the
  // --schedules-from one has tried, measured as the others (passes, check), in up to three rounds
  // sized by the share of the program's tries that reached its datasets. 0: no top-up.
  int at_least = 0;
  // --neighbours N: then, for every chosen program, N schedules one decision away
  // (tweak_schedule) from the `neighbour_parents` fastest of the schedules on record that are
  // not themselves neighbours, measured as the others (passes, check) and recorded with
  // "origin": "neighbour". The sample covers the space; these fill in its fast region, where
  // a first pick is decided by schedules less than 2x apart. Counted per program: a rerun
  // measures only what the program lacks of N. With --recorded, no sample is drawn: the
  // neighbours of the schedules on record are the only new ones. 0: none.
  int neighbours = 0;
  int neighbour_parents = 4;
};

// The programs (indices into `costs`) of shard `index` of `count`: programs in decreasing
// expected cost (ties by index) each go to the shard with the least cost so far (the
// longest-processing-time rule), so every shard gets a similar share. Deterministic.
std::vector<size_t> shard_programs(const std::vector<double>& costs, int index, int count);
// Expected seconds to measure `schedules` schedules of a program: a compile per schedule that
// grows with its stages, and runs that grow with its work, capped by the run limit.
double expected_cost(const ProgramInfo& p, int64_t schedules, double max_run_seconds);

struct CollectSummary {
  int64_t measured = 0, skipped = 0, failed = 0;
  int64_t layout_written = 0, tile_written = 0, ast_written = 0;
  // Mean over instances of the Kendall tau between the two passes (--remeasure): the noise
  // ceiling of the data. NaN when not measured.
  double remeasure_tau = 0;
  int64_t remeasured_pairs = 0;
  // Measured schedules the datasets leave out: none of their measurements was taken on the
  // collection's CPU under the current target (data_cpu, MeasuredOn).
  int64_t left_out_other_cpu = 0;
  int64_t left_out_failed_check = 0;  // schedules a measurement found unsound (failed_check)
  std::string session;                // the later run measured (--cross-session; "" otherwise)
  std::vector<std::string> pooled_sessions;  // the sessions the datasets pooled (pool_sessions)
  int64_t pooled_schedules = 0;              // schedules whose runtime pools a later session's
  int64_t topped_up = 0;                     // new schedules tried for --at-least
  int64_t neighbours_tried = 0;              // new schedules tried for --neighbours
  std::vector<std::string> short_of;         // "NAME (HAVE)" still under --at-least (time, space)
};

class ResultLog;

// The noise ceiling of a collection: for each program, the Kendall tau between the first and
// the second measurement of its re-measured schedules (each read off as `statistic`); the mean
// over programs with two pairs or more (NaN when none).
struct NoiseCeiling {
  double tau = 0;
  int64_t pairs = 0, programs = 0;
};
NoiseCeiling noise_ceiling(const ResultLog& log, RunStatistic statistic = RunStatistic::best_run);

// Runtimes of one schedule in the first pass and in a later session.
struct CrossSession {
  std::string session;  // the later run compared ("" when none)
  std::string cpu;      // the CPU it measured on (its records'; "" when they do not say)
  int64_t pairs = 0, programs = 0;
  double tau = 0;  // mean over programs of Kendall tau (shipped vs session), runtime_of_passes
  double tau_median = 0;  // the same with single measurements' median runs (first pass vs first)
  std::map<std::string, double> tau_by_family;         // mean over the family's programs
  double ratio_p10 = 0, ratio_p50 = 0, ratio_p90 = 0;  // new / old best runtime, over schedules
  // The same ratios each divided by its program's median ratio: the spread left once a shift of
  // the whole program (a faster or slower machine, for that program's work) is taken out.
  double within_p10 = 0, within_p90 = 0;
  double seconds_per_schedule = 0;  // the session's elapsed time (all passes) / its schedules
  double min_schedules_per_program = 0;
};
// The later runs on record (collect --cross-session), in the order they started, each with the
// CPU its records name ("" when they do not).
std::vector<std::pair<std::string, std::string>> cross_sessions(const ResultLog& log);
// How a later run's runtimes compare with the shipped ones: each schedule's runtime over its
// measurements taken on `data_cpu` (the data's CPU; MeasuredOn) under the run's target, against
// the same over the run's own (runtime_of_passes with `statistic`). `session` "" takes the latest
// run on the data's CPU, or the latest of all when none was (a run on another CPU measures the
// change of CPU as well as the noise).
CrossSession cross_session_noise(const ResultLog& log, const std::string& data_cpu,
                                 const std::string& session = "",
                                 RunStatistic statistic = RunStatistic::best_run);

CollectSummary collect(const CollectOptions& options);

// tcost merge: the measurement logs of several collections (shards) into `out`, duplicates
// removed by key (the first one kept), then the datasets and the manifest written as one
// collection would. Shards measured on other CPUs, Halide versions or targets, or under
// another protocol are refused unless `allow_mixed`.
struct MergeSummary {
  int64_t records = 0, duplicates = 0;
  CollectSummary written;
};
MergeSummary merge_collections(const std::vector<std::string>& dirs, const std::string& out,
                               bool allow_mixed);

}  // namespace tcost::halide
