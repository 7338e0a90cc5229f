// Measuring many schedules: each job runs in its own measuring child (measure.h), `workers` at
// a time (compiles overlap; timed runs take a lock and run alone), and every outcome, failures
// included, is appended to the result log as it finishes. Jobs already on record are skipped,
// so a batch resumes after an interruption. collect and tune measure through this.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "halide/measure.h"
#include "halide/program.h"
#include "halide/result_log.h"

namespace tcost::halide {

struct MeasureJob {
  const Program* program = nullptr;
  Schedule schedule;
  std::string key;  // unique in the log, e.g. "matmul_192|r32x16.v8..."
  int pass =
      1;  // 1: a dataset configuration; 2: a re-measurement; 3: a verification; 4: cross-session
  const Outputs* reference = nullptr;  // check the outputs against it (tuning)
  std::string session;                 // pass 4: the cross-session run it belongs to
  // More measurements of the same compile (MeasureOptions::processes), recorded under these
  // keys as pass 5 (collect --forks): the job is timed in 1 + fork_keys.size() processes.
  std::vector<std::string> fork_keys;
  // Compiled with Halide's bounds asserts (schedule_workload): a verification that refuses a
  // schedule reading or writing outside a buffer. Its times are not a measurement of the code
  // measured elsewhere; its record says "bounds_checked": true.
  bool bounds_checked = false;
  // Why the schedule was chosen, when not as a sample: "neighbour" (collect --neighbours).
  std::string origin = "";
};

// The log key of a schedule of a program (a first-pass measurement).
std::string measurement_key(const Program& p, const Schedule& s);

struct BatchOptions {
  MeasureOptions measure;
  int workers = 2;                        // measurements in flight
  int threads = 2;                        // Halide threads in timed runs
  ThreadPool pool = ThreadPool::halide;   // the pool that runs them
  Placement placement = Placement::heap;  // where their buffers lie
  // Start no measurement past this point (a time budget); the default never stops.
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
};

struct BatchSummary {
  int64_t measured = 0, failed = 0, skipped = 0;
  bool out_of_time = false;
};

// The default schedule's outputs (the reference measured schedules are checked against),
// computed in a forked child: the caller never runs a Halide pipeline itself, so that the
// measuring children it forks later inherit no started thread pool. InputError (naming the
// program and the cause) when the default schedule cannot run within `timeout_s`.
Outputs default_outputs(const Program& p, int threads, double timeout_s);
// The time default_outputs gets when measured schedules get `schedule_timeout_s` each: the
// default schedule is usually the slowest, so six schedules' time, at least a minute.
inline double reference_timeout_s(double schedule_timeout_s) {
  return std::max(60.0, 6 * schedule_timeout_s);
}

// Where the runs' protocol differs from the default, says so in a record: "placement"
// ("arena"), "pool" ("spinning"), "pinned" (true); the default protocol adds nothing.
void add_protocol(nlohmann::json& rec, Placement placement, ThreadPool pool, bool pinned);

// The record appended for one outcome (the format of docs/collect.md); `every_run`: its
// outputs were checked after every timed run (MeasureOptions::check_every_run).
nlohmann::json measurement_record(const MeasureJob& job, int threads, bool every_run,
                                  const MeasureResult& r);

// Whether `record` is a timeout under a shorter limit than `timeout_s` ("timeout after 10.0 s"):
// measure_batch then measures its job again (a run with a longer --timeout retries what timed
// out before), and the new record supersedes it (ResultLog).
bool timed_out_sooner(const nlohmann::json& record, double timeout_s);

BatchSummary measure_batch(ResultLog& log, const std::vector<MeasureJob>& jobs,
                           const BatchOptions& options, const char* label);

}  // namespace tcost::halide
