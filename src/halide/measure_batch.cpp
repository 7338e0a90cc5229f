#include "halide/measure_batch.h"

#include <cstdio>

#include <atomic>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "core/error.h"
#include "core/progress.h"
#include "halide/manifest.h"

namespace tcost::halide {

std::string measurement_key(const Program& p, const Schedule& s) {
  return p.name() + "|" + schedule_key(s);
}

Outputs default_outputs(const Program& p, int threads, double timeout_s) {
  std::string bytes, error;
  if (!compute_isolated(
          [&] { return outputs_to_bytes(run_output(p, default_schedule(p.info()), threads)); },
          timeout_s, bytes, error)) {
    throw InputError(fmt::format("{}: the default schedule failed to run: {}", p.name(), error));
  }
  return outputs_from_bytes(bytes);
}

nlohmann::json measurement_record(const MeasureJob& j, int threads, bool every_run,
                                  const MeasureResult& r) {
  nlohmann::json rec = {{"key", j.key},
                        {"pass", j.pass},
                        {"instance", j.program->name()},
                        {"family", j.program->info().family},
                        {"schedule", schedule_to_json(j.schedule)},
                        {"ok", r.ok},
                        {"error", r.error},
                        {"compile_ms", r.compile_ms},
                        {"best_ns", r.best_ns},
                        {"third_ns", r.third_ns},
                        {"median_ns", r.median_ns},
                        {"runs", r.runs},
                        {"threads", threads},
                        {"target", target_name(*j.program)},
                        {"cpu", cpu_model()}};
  // Outputs compared with the default schedule's (and found equal, when ok).
  if (j.reference != nullptr) rec["checked"] = true;
  if (j.reference != nullptr && every_run) rec["checked_every_run"] = true;
  if (!j.session.empty()) rec["session"] = j.session;
  if (!j.origin.empty()) rec["origin"] = j.origin;
  if (!boot_id().empty()) rec["boot"] = boot_id();
  if (j.bounds_checked) rec["bounds_checked"] = true;
  if (r.ok)
    rec["timed"] = {{"wall_s", r.timed_wall_s},
                    {"cpu_s", r.timed_cpu_s},
                    {"steal_s", r.steal_s},
                    {"preempted", r.involuntary_switches}};
  return rec;
}

void add_protocol(nlohmann::json& rec, Placement placement, ThreadPool pool, bool pinned) {
  if (placement != Placement::heap) rec["placement"] = placement_name(placement);
  if (pool != ThreadPool::halide) rec["pool"] = thread_pool_name(pool);
  if (pinned) rec["pinned"] = true;
}

bool timed_out_sooner(const nlohmann::json& record, double timeout_s) {
  double was = 0;
  const std::string error = record.value("error", "");
  return !record.value("ok", false) &&
         std::sscanf(error.c_str(), "timeout after %lf s", &was) == 1 && was < timeout_s;
}

BatchSummary measure_batch(ResultLog& log, const std::vector<MeasureJob>& all_jobs,
                           const BatchOptions& o, const char* label) {
  BatchSummary summary;
  std::vector<const MeasureJob*> jobs;
  for (const auto& j : all_jobs) {
    const nlohmann::json* on_file = log.find(j.key);
    if (on_file != nullptr && !timed_out_sooner(*on_file, o.measure.timeout_s)) {
      ++summary.skipped;
    } else {
      jobs.push_back(&j);
    }
  }
  Progress progress(label, static_cast<int64_t>(jobs.size()));
  std::mutex mu;
  std::atomic<size_t> next{0};
  std::atomic<bool> stop{false};
  int64_t done = 0;
  const auto worker = [&] {
    for (;;) {
      const size_t n = next++;
      if (n >= jobs.size() || stop) return;
      if (std::chrono::steady_clock::now() > o.deadline) {
        stop = true;
        return;
      }
      const MeasureJob& j = *jobs[n];
      const auto t0 = std::chrono::steady_clock::now();
      MeasureOptions mo = o.measure;
      mo.processes = 1 + static_cast<int>(j.fork_keys.size());
      const std::vector<MeasureResult> results = measure_processes(
          std::function<Workload()>([&j, th = o.threads, pool = o.pool, at = o.placement] {
            return schedule_workload(*j.program, j.schedule, th, j.reference, pool, at,
                                     j.bounds_checked);
          }),
          mo);
      const double wall_s =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      std::lock_guard<std::mutex> g(mu);
      for (size_t i = 0; i < results.size(); ++i) {
        const MeasureResult& r = results[i];
        MeasureJob as = j;  // the job as this process's measurement
        if (i > 0) {
          as.key = j.fork_keys[i - 1];
          as.pass = 5;
        }
        nlohmann::json rec = measurement_record(as, o.threads, o.measure.check_every_run, r);
        add_protocol(rec, o.placement, o.pool, o.measure.pin_threads);
        if (o.measure.min_run_seconds > 0) rec["min_run_seconds"] = o.measure.min_run_seconds;
        // Wall time of the whole measurement (fork, compile, waiting for the timing lock, runs;
        // with forks, all its timing processes), and of a forked timing process alone.
        rec["wall_s"] = i == 0 ? wall_s : r.process_wall_s;
        if (mo.processes > 1) {
          rec["fork"] = i + 1;
          rec["process_wall_s"] = r.process_wall_s;
        }
        rec["finished"] =
            std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
                .count();
        log.append(rec);
        r.ok ? ++summary.measured : ++summary.failed;
      }
      progress.update(++done, j.program->name());
    }
  };
  std::vector<std::thread> threads;
  for (int w = 0; w < std::max(1, o.workers); ++w) threads.emplace_back(worker);
  for (auto& th : threads) th.join();
  progress.finish();
  summary.out_of_time = stop;
  return summary;
}

}  // namespace tcost::halide
