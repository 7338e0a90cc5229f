// The measurement protocol of the Halide collector, independent of Halide itself.
//   measure_isolated - runs `prepare` (compile) and then the returned workload in a forked child
//                      process: compilation timed separately, warm-up, repeated runs until the
//                      best and third-best agree within a tolerance or a cap is reached. The
//                      parent enforces a wall-clock timeout (the child is killed) and turns a
//                      crash into a recorded failure: a failed measurement is data, not an
//                      exception, so a collection goes on. A workload may check its outputs
//                      after timing: a wrong answer is a recorded failure too.
//   compute_isolated - a computation in a forked child whose bytes come back by a pipe.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace tcost::halide {

struct MeasureOptions {
  double timeout_s = 20.0;       // wall clock for compile + all runs; the child is killed past it
  int warmup_runs = 1;           // untimed runs first (page faults, caches, lazy init)
  int min_runs = 3;              // timed runs at least
  int max_runs = 50;             // timed runs at most
  double tolerance = 0.03;       // stop when third-best <= best * (1 + tolerance)
  double max_run_seconds = 3.0;  // stop timing after this much total run time
  // Keep timing until the timed runs add up to at least this much (a short program then gets
  // many runs, past max_runs, instead of stopping at three that agree); 0 = off. The study of
  // short programs' noise (docs/collect.md, "Short programs: a minimum timed total").
  double min_run_seconds = 0;
  // When set, measurements of several processes share this lock file: compilation holds it
  // shared, timed runs hold it exclusively, so compiles overlap but timed runs run alone.
  std::string lock_path;
  // Keep the exclusive lock after the timed runs until the measuring process has ended (its
  // output check and teardown then never overlap another measurement's timed runs).
  bool exclusive_until_exit = true;
  // After the warm-up runs, pin the measuring process's threads (its own and the threads its
  // warm-up started, e.g. Halide's thread pool) one per CPU of its affinity mask, so that a
  // worker never shares a CPU with another for the whole measurement. Needs warmup_runs >= 1.
  bool pin_threads = false;
  // Before preparing, set the measuring process's malloc to keep what it frees (no mmap for
  // large blocks, no trimming, 256 MiB of top padding): the buffers a pipeline allocates and
  // frees in every run then come back from the heap already mapped instead of being mapped
  // and page-faulted again in each timed run.
  bool steady_heap = false;
  // Check the outputs after every timed run, not once after all of them: before each timed run
  // (outside its timing) the workload's outputs are overwritten with a pattern that changes
  // from run to run, so a run that skips part of its work leaves a difference instead of the
  // previous run's answer. The first wrong run is a recorded failure naming its index and
  // time. A diagnostic (does a rare fast run compute the whole answer?); needs a workload with
  // both `check` and `poison`.
  bool check_every_run = false;
  // Time the compiled workload in this many processes instead of one (measure_processes): the
  // measuring process compiles once, then takes the timing lock exclusively and forks one timing
  // process after another, each of which makes its own copy of the pages it shares with it
  // (Workload::unshare), warms up and times the runs as a lone measuring process would, and gets
  // the run time a single measurement has left after the compile (timeout_s minus the compile);
  // the forks and teardowns, its own included, happen under the lock. Separate
  // processes are what makes repeated measurements agree (docs/collect.md); forking them from
  // one compile makes each repeat cost its runs, not another compile.
  int processes = 1;
  // A study's control for `processes` (collect --compile-each): the processes each compile for
  // themselves, one lone measurement after another, instead of forking from one compile; what
  // separates them from forks is then the compile alone, not the minutes between passes.
  bool compile_each = false;
};

struct MeasureResult {
  bool ok = false;
  // "timeout", "crashed (signal 11)", "failed: <message>", "wrong output: <message>", ...
  std::string error;
  double compile_ms = 0;  // time spent in prepare()
  double search_ms = 0;   // of which searching for a schedule (Workload::search_ms)
  double best_ns = 0;     // fastest timed run
  double third_ns = 0;    // third-fastest timed run (the agreement check)
  double median_ns = 0;   // median timed run
  int runs = 0;           // timed runs made
  // What the timed runs shared the machine with (the protocol study, docs/collect.md): their
  // wall time, the measuring process's CPU time in it (all threads), the machine's steal time
  // in it, and the times the process was preempted (involuntary context switches).
  double timed_wall_s = 0, timed_cpu_s = 0, steal_s = 0;
  long involuntary_switches = 0;
  double process_wall_s = 0;  // a forked timing process's wall time, fork to report (processes > 1)
};

// What a measuring child times: `run`, then (once, after timing, or after every timed run
// with MeasureOptions::check_every_run) `check`, which returns an empty string when the
// outputs are right and a description of the difference otherwise.
struct Workload {
  std::function<void()> run;
  std::function<std::string()> check;  // optional
  // optional: overwrite the outputs with a pattern made from `seed`
  // (MeasureOptions::check_every_run)
  std::function<void(int seed)> poison;
  // optional: in a timing process forked from the compiling one (MeasureOptions::processes),
  // write the pages it shares with its parent (the inputs) so that it holds its own copies, as
  // a process that compiled for itself would
  std::function<void()> unshare;
  double search_ms = 0;  // time prepare spent choosing a schedule (autoschedulers)
};

// The kind of a failed measurement's error, for counting: "timeout", "crashed (signal 11)"
// ("crashed" when no signal is named), "wrong output", "reads outside its inputs"
// (reads_outside_inputs), "rejected by Halide", or "other".
std::string failure_kind(const std::string& error);
// The error of a measurement killed past its limit ("timeout after 10.0 s"; timed_out_sooner
// reads the limit back).
std::string timeout_error(double timeout_s);

// `prepare` runs in the child and returns the workload to time; an exception it throws is a
// recorded failure with its message, and so is a failed check ("wrong output: ...").
MeasureResult measure_isolated(const std::function<Workload()>& prepare,
                               const MeasureOptions& options);
MeasureResult measure_isolated(const std::function<std::function<void()>()>& prepare,
                               const MeasureOptions& options);
// `options.processes` measurements of one compile (MeasureOptions::processes), in order; the
// first failure (of the compile or of a timing process: its error, a timeout, a crash) ends
// the list, so it holds fewer results then. measure_isolated is the one-process case.
std::vector<MeasureResult> measure_processes(const std::function<Workload()>& prepare,
                                             const MeasureOptions& options);

// Runs `produce` in a forked child and returns the bytes it made (the reference output of a
// program, computed away from the parent, which must never start Halide's thread pool before
// it forks). On a timeout, crash or exception: nothing, and `error` says why.
bool compute_isolated(const std::function<std::string()>& produce, double timeout_s,
                      std::string& bytes, std::string& error);

}  // namespace tcost::halide
