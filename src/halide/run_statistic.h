// What a measurement's runtime is read off as (collect --statistic; docs/collect.md): its
// measuring process's best timed run (the shipped collections' statistic) or its median timed
// run. A schedule's runtime is then the minimum of it over the schedule's passes
// (runtime_of_passes in datasets.h).
#pragma once

#include <string>

namespace tcost::halide {

enum class RunStatistic { best_run, median_run };
// "best-run" / "median-run", or a manifest's wording (run_statistic_label); InputError for
// anything else.
RunStatistic parse_run_statistic(const std::string& name);
std::string run_statistic_label(RunStatistic s);  // "best run (ns)" / "median run (ns)"
// The field of a measurement record it reads: "best_ns" / "median_ns".
inline const char* run_statistic_field(RunStatistic s) {
  return s == RunStatistic::median_run ? "median_ns" : "best_ns";
}

}  // namespace tcost::halide
