#include "tune/compare.h"

#include <algorithm>
#include <cstdlib>

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

MethodResult run_autoscheduler(const halide::Program& p, const Autoscheduler& a,
                               const halide::Outputs& reference, const CompareOptions& o) {
  MethodResult r;
  r.method = a.method;
  halide::MeasureOptions mo;
  mo.timeout_s = o.autoschedule_timeout_s;
  mo.max_run_seconds = o.tune.max_run_seconds;
  const std::string plugin = o.plugin_dir + "/" + a.plugin;
  const halide::MeasureResult m =
      halide::measure_isolated(std::function<halide::Workload()>([&] {
                                 if (a.beam != nullptr)
                                   setenv("HL_BEAM_SIZE", a.beam, 1);  // read in this child only
                                 return halide::autoschedule_workload(
                                     p, a.name, plugin, o.tune.threads, o.llc_bytes, &reference);
                               }),
                               mo);
  r.ok = m.ok;
  r.error = m.error;
  r.runtime_ms = m.best_ns * 1e-6;
  r.search_s = m.search_ms * 1e-3;
  r.measurements = 1;
  // On record beside the tuning log (LOG.METHOD.jsonl), for `tcost report`'s tuning curves.
  halide::ResultLog log(o.tune.log + "." + a.method + ".jsonl");
  log.append({{"key", fmt::format("{}|{}|{}", a.method, p.name(), log.records().size())},
              {"autoscheduler", a.name},
              {"beam", a.beam != nullptr ? a.beam : ""},
              {"instance", p.name()},
              {"ok", m.ok},
              {"error", m.error},
              {"best_ns", m.best_ns},
              {"search_s", r.search_s},
              {"threads", o.tune.threads}});
  return r;
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

nlohmann::json to_json(const MethodResult& r) {
  return {{"method", r.method},     {"ok", r.ok},
          {"error", r.error},       {"runtime_ms", r.ok ? nlohmann::json(r.runtime_ms) : nullptr},
          {"search_s", r.search_s}, {"measurements", r.measurements}};
}

std::vector<MethodResult> compare_methods(const halide::Program& p, train::CostModel* model,
                                          const CompareOptions& o, train::CostModel* prerank) {
  check_method_names(o.methods, "--compare");
  std::vector<MethodResult> out;
  halide::Outputs reference;
  bool have_reference = false;
  for (const auto& method : method_names()) {  // the table's order
    if (std::find(o.methods.begin(), o.methods.end(), method) == o.methods.end()) continue;
    MethodResult r;
    r.method = method;
    if (method == "default" || method == "random" || method == "tcost") {
      TuneOptions t = o.tune;
      // Each method searches with its own log: none reuses another's measurements.
      if (method != "tcost") t.log = o.tune.log + "." + method + ".jsonl";
      if (method == "default") t.budget = 1;  // the default schedule alone
      try {
        const bool guided = method == "tcost";
        const TuneResult tr = tune(p, guided ? model : nullptr, t, guided ? prerank : nullptr);
        r.ok = tr.best_ns > 0;
        r.error = r.ok ? "" : "every measured schedule failed";
        r.runtime_ms = (method == "default" ? tr.default_ns : tr.best_ns) * 1e-6;
        r.search_s = method == "default" ? 0.0 : tr.search_s;
        r.measurements = tr.measured;
      } catch (const InputError& e) {
        r.error = e.what();
      }
      out.push_back(r);
      continue;
    }
    if (!have_reference) {
      reference = halide::default_outputs(p, o.tune.threads, 600);
      have_reference = true;
    }
    for (const auto& a : kAutoschedulers) {
      if (method == a.method) out.push_back(run_autoscheduler(p, a, reference, o));
    }
  }
  return out;
}

}  // namespace tcost::tune
