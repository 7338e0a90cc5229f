// tcost collect: measures real Halide programs under sampled schedules and writes datasets.
// So far the zoo holds one family (matmul, three shapes) and the output is the tile-style
// collection: one graph per program instance (inputs and the matmul stage, TpuGraphs node
// features), one 24-wide config per schedule (encoding in docs/formats.md), runtimes in ns and
// the default schedule's runtime as normaliser. Measurements are appended to
// OUT/measurements.jsonl as they finish; a restarted collection skips what is there.
#pragma once

#include <cstdint>
#include <string>

namespace tcost::halide {

struct CollectOptions {
  std::string out;              // output directory
  std::string pipelines = "*";  // glob over instance names, e.g. "matmul_128"
  int configs_per_graph = 20;   // sampled schedules per instance (plus the default)
  uint64_t seed = 0;
  double time_budget_min = 0;  // stop starting measurements after this (0 = none)
  int threads = 2;             // Halide threads in timed runs
  double timeout_s = 30;       // per schedule: compile + runs
  double remeasure = 0;        // fraction of measured schedules timed again in a second pass
};

struct CollectSummary {
  int64_t measured = 0, skipped = 0, failed = 0, graphs_written = 0;
  // Mean over instances of the Kendall tau between the two passes (--remeasure): the noise
  // ceiling of the data. NaN when not measured.
  double remeasure_tau = 0;
  int64_t remeasured_pairs = 0;
};

CollectSummary collect(const CollectOptions& options);

}  // namespace tcost::halide
