// The datasets of a collection, written from its record (docs/formats.md): for each program,
// the successful first-pass measurements (the configurations, in the order measured) as
// OUT/layout/SPLIT/NAME.npz, OUT/tile/SPLIT/NAME.npz (single-kernel programs) and
// OUT/ast/SPLIT/NAME.npz (syntax trees; a file whose runtimes are unchanged is kept).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "halide/collect.h"
#include "halide/result_log.h"
#include "halide/zoo.h"

namespace tcost::halide {

// Positions in log.records() of each program's successful first-pass measurements, in the
// order they were measured. Positions stay valid while the log grows.
std::map<std::string, std::vector<size_t>> first_pass_by_program(const ResultLog& log);

struct Measured {
  std::vector<Schedule> schedules;
  std::vector<int64_t> runtime_ns;
  int64_t normalizer_ns = 0;  // the default schedule's runtime
};

// The key of measurement number k (k >= 2) of the same schedule as `key` (collect --passes):
// "repeat|k|KEY", pass 5.
std::string repeat_key(const std::string& key, int k);
// The best run of a measurement and of its repeats on record (the minimum over the ok ones);
// 0 when none is ok. With `target`, only the measurements taken under that Halide target count
// when there is at least one (another target compiles other code); otherwise all do.
double best_of_passes(const ResultLog& log, const nlohmann::json& record,
                      const std::string& target = "");
// The measurement `record` and its repeats on record, in order (first, repeat 2, 3, ...).
std::vector<const nlohmann::json*> passes_of(const ResultLog& log, const nlohmann::json& record);
// How many of them were taken under `target`: all attempts, or with `ok_only` the successful ones.
int passes_under(const ResultLog& log, const nlohmann::json& record, const std::string& target,
                 bool ok_only = false);

// The configurations of one program: the records at `positions` (first_pass_by_program), each
// with the best of its passes.
// `target`: as for best_of_passes.
Measured measured_configs(const ResultLog& log, const std::vector<size_t>& positions,
                          const ProgramInfo& p, const std::string& target = "");

void write_datasets(const std::string& out, const InstanceName& in, const Program& program,
                    const Measured& m, bool with_ast, CollectSummary& summary);

}  // namespace tcost::halide
