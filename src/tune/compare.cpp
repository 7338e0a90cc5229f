#include "tune/compare.h"

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <optional>

#include <fmt/format.h>

#include "core/error.h"
#include "halide/measure.h"
#include "halide/measure_batch.h"
#include "halide/result_log.h"

namespace tcost::tune {
namespace {

struct Autoscheduler {
  const char* method;  // our name
  const char* name;    // Halide's
  const char* plugin;  // library file
  const char* beam;    // HL_BEAM_SIZE, or nullptr
};

const Autoscheduler kAutoschedulers[] = {
    {"li2018", "Li2018", "libautoschedule_li2018.so", nullptr},
    {"mullapudi2016", "Mullapudi2016", "libautoschedule_mullapudi2016.so", nullptr},
    {"adams2019", "Adams2019", "libautoschedule_adams2019.so", "32"},
    {"adams2019-greedy", "Adams2019", "libautoschedule_adams2019.so", "1"},
};

// What a measuring child times for an autoscheduler: its search on the program, then the
// pipeline under the schedule it chose, checked against `reference`.
std::function<halide::Workload()> autoscheduler_workload(const halide::Program& p,
                                                         const Autoscheduler& a,
                                                         const halide::Outputs& reference,
                                                         const CompareOptions& o) {
  const std::string plugin = o.plugin_dir + "/" + a.plugin;
  return [&p, &a, &reference, &o, plugin] {
    if (a.beam != nullptr) setenv("HL_BEAM_SIZE", a.beam, 1);  // read in this child only
    return halide::autoschedule_workload(p, a.name, plugin, o.tune.threads, o.llc_bytes, &reference,
                                         o.tune.placement);
  };
}

halide::MeasureOptions autoscheduler_measure_options(const CompareOptions& o) {
  halide::MeasureOptions mo;
  mo.timeout_s = o.autoschedule_timeout_s;
  mo.max_run_seconds = o.tune.max_run_seconds;
  mo.pin_threads = o.tune.pin_threads;
  return mo;
}

MethodResult run_autoscheduler(const halide::Program& p, const Autoscheduler& a,
                               const halide::Outputs& reference, const CompareOptions& o) {
  MethodResult r;
  r.method = a.method;
  const halide::MeasureResult m = halide::measure_isolated(
      autoscheduler_workload(p, a, reference, o), autoscheduler_measure_options(o));
  r.ok = m.ok;
  r.error = m.error;
  r.runtime_ms = r.search_runtime_ms = m.best_ns * 1e-6;
  r.search_s = m.search_ms * 1e-3;
  r.measurements = 1;
  // On record beside the tuning log (LOG.METHOD.jsonl), for `tcost report`'s tuning curves.
  halide::ResultLog log(method_log(o.tune.log, a.method));
  nlohmann::json rec = {{"key", fmt::format("{}|{}|{}", a.method, p.name(), log.records().size())},
                        {"autoscheduler", a.name},
                        {"beam", a.beam != nullptr ? a.beam : ""},
                        {"instance", p.name()},
                        {"ok", m.ok},
                        {"error", m.error},
                        {"best_ns", m.best_ns},
                        {"search_s", r.search_s},
                        {"threads", o.tune.threads}};
  halide::add_protocol(rec, o.tune.placement, halide::ThreadPool::halide, o.tune.pin_threads);
  log.append(rec);
  return r;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// The confirmation rounds (compare.h): round by round, each method that succeeded is measured
// once more in a fresh child, on record in LOG.confirm.jsonl (with a tuning log). A method whose
// schedule fails a confirmation (a crash, a timeout, a wrong output) fails; the others take the
// median.
// A result whose `twin` (an index) is set chose the same schedule as that result: it is not
// measured, and takes that result's confirmations.
void confirm_methods(const halide::Program& p, std::vector<MethodResult>& results,
                     const std::vector<std::function<halide::Workload()>>& workloads,
                     const std::vector<halide::MeasureOptions>& options,
                     const std::vector<int>& twin, const CompareOptions& o) {
  std::optional<halide::ResultLog> log;
  if (!o.tune.log.empty()) log.emplace(confirm_log(o.tune.log));
  for (int round = 1; round <= o.confirm; ++round) {
    for (size_t i = 0; i < results.size(); ++i) {
      MethodResult& r = results[i];
      if (!r.ok || twin[i] >= 0) continue;
      const halide::MeasureResult m = halide::measure_isolated(workloads[i], options[i]);
      if (log) {
        nlohmann::json rec = {
            {"key", fmt::format("{}|{}|{}", r.method, p.name(), log->records().size())},
            {"method", r.method},
            {"instance", p.name()},
            {"round", round},
            {"ok", m.ok},
            {"error", m.error},
            {"best_ns", m.best_ns},
            {"median_ns", m.median_ns},
            {"runs", m.runs},
            {"threads", o.tune.threads}};
        halide::add_protocol(rec, o.tune.placement, halide::ThreadPool::halide, o.tune.pin_threads);
        log->append(rec);
      }
      if (!m.ok) {
        r.ok = false;
        r.error = fmt::format("confirmation {}: {}", round, m.error);
        continue;
      }
      r.confirm_ms.push_back(m.best_ns * 1e-6);
    }
  }
  for (size_t i = 0; i < results.size(); ++i) {
    MethodResult& r = results[i];
    if (twin[i] >= 0 && r.ok) {
      const MethodResult& same = results[static_cast<size_t>(twin[i])];
      r.ok = same.ok;
      r.error = same.error;
      r.confirm_ms = same.confirm_ms;
    }
    if (r.ok && !r.confirm_ms.empty()) r.runtime_ms = median(r.confirm_ms);
  }
}

}  // namespace

const std::vector<std::string>& method_names() {
  static const std::vector<std::string> kNames = {
      "default", "random", "li2018", "mullapudi2016", "adams2019", "adams2019-greedy", "tcost"};
  return kNames;
}

namespace {

void check_method_names(const std::vector<std::string>& methods, const std::string& what) {
  for (const auto& m : methods) {
    if (std::find(method_names().begin(), method_names().end(), m) == method_names().end())
      throw UsageError(fmt::format("{}: unknown method '{}'", what, m));
  }
}

}  // namespace

std::vector<std::string> parse_methods(const std::string& list, const std::string& what) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= list.size()) {
    const size_t end = std::min(list.find(',', start), list.size());
    if (end > start) out.push_back(list.substr(start, end - start));
    start = end + 1;
  }
  check_method_names(out, what);
  return out;
}

std::string method_log(const std::string& log, const std::string& method) {
  return method == "tcost" ? log : log + "." + method + ".jsonl";
}

std::string confirm_log(const std::string& log) { return log + ".confirm.jsonl"; }

nlohmann::json to_json(const MethodResult& r) {
  const auto ms = [&](double v) { return r.ok ? nlohmann::json(v) : nlohmann::json(nullptr); };
  return {{"method", r.method},
          {"ok", r.ok},
          {"error", r.error},
          {"runtime_ms", ms(r.runtime_ms)},
          {"search_runtime_ms", ms(r.search_runtime_ms)},
          {"confirm_ms", r.confirm_ms},
          {"search_s", r.search_s},
          {"measurements", r.measurements}};
}

std::vector<MethodResult> compare_methods(const halide::Program& p, train::CostModel* model,
                                          const CompareOptions& o, train::CostModel* prerank) {
  check_method_names(o.methods, "--compare");
  std::vector<MethodResult> out;
  // What each result's confirmations time, and under which options.
  std::vector<std::function<halide::Workload()>> workloads;
  std::vector<halide::MeasureOptions> options;
  std::vector<int> twin;  // confirm_methods
  halide::MeasureOptions schedule_options;
  schedule_options.timeout_s = o.tune.timeout_s;
  schedule_options.max_run_seconds = o.tune.max_run_seconds;
  schedule_options.pin_threads = o.tune.pin_threads;
  if (!o.tune.log.empty()) schedule_options.lock_path = o.tune.log + ".lock";
  // The default schedule's outputs, computed once: every method's measurements and
  // confirmations are checked against them. When the default schedule cannot run, every method
  // fails with that error.
  std::shared_ptr<const halide::Outputs> reference;
  std::string reference_error;
  try {
    reference = std::make_shared<const halide::Outputs>(reference_outputs(p, o.tune));
  } catch (const InputError& e) {
    reference_error = e.what();
  }
  for (const auto& method : method_names()) {  // the table's order
    if (std::find(o.methods.begin(), o.methods.end(), method) == o.methods.end()) continue;
    MethodResult r;
    r.method = method;
    if (reference == nullptr) {
      r.error = reference_error;
      out.push_back(r);
      workloads.emplace_back();  // never run: the method failed
      options.push_back(schedule_options);
      twin.push_back(-1);
      continue;
    }
    if (method == "default" || method == "random" || method == "tcost") {
      TuneOptions t = o.tune;
      // Each method searches with its own log: none reuses another's measurements.
      t.log = method_log(o.tune.log, method);
      t.reference = reference;
      if (method == "default") t.budget = 1;  // the default schedule alone
      halide::Schedule chosen;
      TuneResult tr;
      try {
        const bool guided = method == "tcost";
        tr = tune(p, guided ? model : nullptr, t, guided ? prerank : nullptr);
        r.ok = tr.best_ns > 0;
        r.error = r.ok ? "" : "every measured schedule failed";
        r.runtime_ms = (method == "default" ? tr.default_ns : tr.best_ns) * 1e-6;
        r.search_runtime_ms = r.runtime_ms;
        r.search_s = method == "default" ? 0.0 : tr.search_s;
        r.measurements = tr.measured;
        chosen = method == "default" ? halide::default_schedule(p.info()) : tr.best;
      } catch (const InputError& e) {
        r.error = e.what();
      }
      out.push_back(r);
      const int threads = o.tune.threads;
      const halide::Placement at = o.tune.placement;
      const auto workload_of = [&p, threads, reference, at](const halide::Schedule& s) {
        return [&p, s, threads, reference, at] {
          return halide::schedule_workload(p, s, threads, reference.get(),
                                           halide::ThreadPool::halide, at);
        };
      };
      workloads.push_back(workload_of(chosen));
      options.push_back(schedule_options);
      twin.push_back(-1);
      // With finalists, what the single fastest run would have chosen, confirmed beside it.
      if (method == "tcost" && o.tune.finalists > 1 && r.ok) {
        MethodResult f = r;
        f.method = "tcost-fastest-run";
        f.runtime_ms = f.search_runtime_ms = tr.fastest_run_ns * 1e-6;
        const bool same =
            halide::measurement_key(p, tr.fastest_run) == halide::measurement_key(p, tr.best);
        out.push_back(f);
        workloads.push_back(workload_of(tr.fastest_run));
        options.push_back(schedule_options);
        twin.push_back(same ? static_cast<int>(out.size()) - 2 : -1);
      }
      continue;
    }
    for (const auto& a : kAutoschedulers) {
      if (method != a.method) continue;
      out.push_back(run_autoscheduler(p, a, *reference, o));
      workloads.push_back(autoscheduler_workload(p, a, *reference, o));
      options.push_back(autoscheduler_measure_options(o));
      twin.push_back(-1);
    }
  }
  if (o.confirm > 0) confirm_methods(p, out, workloads, options, twin, o);
  return out;
}

}  // namespace tcost::tune
