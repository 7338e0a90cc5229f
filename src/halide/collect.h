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
#include <string>
#include <vector>

#include "halide/zoo.h"

namespace tcost::halide {

struct CollectOptions {
  std::string out;              // output directory
  std::string pipelines = "*";  // glob over instance or family names, e.g. "matmul*"
  int configs_per_graph = 100;  // sampled schedules per instance (plus the default)
  uint64_t seed = 0;
  double time_budget_min = 0;    // stop starting measurements after this (0 = none)
  int threads = 2;               // Halide threads in timed runs
  double timeout_s = 10;         // per schedule: compile + runs (+ waiting for the timing lock)
  double max_run_seconds = 0.5;  // stop repeating timed runs after this much run time
  int workers = 2;               // measurements in flight: compiles overlap, timed runs do not
  double remeasure = 0;          // fraction of measured schedules timed again in a second pass
  bool ast = true;               // write the syntax-tree datasets (lowers every configuration)
  // false: measure nothing, only rewrite the datasets and the manifest from the records on
  // file (after a change of featurisation: the runtimes do not depend on it).
  bool measure = true;
};

struct CollectSummary {
  int64_t measured = 0, skipped = 0, failed = 0;
  int64_t layout_written = 0, tile_written = 0, ast_written = 0;
  // Mean over instances of the Kendall tau between the two passes (--remeasure): the noise
  // ceiling of the data. NaN when not measured.
  double remeasure_tau = 0;
  int64_t remeasured_pairs = 0;
};

class ResultLog;

// The noise ceiling of a collection: for each program, the Kendall tau between the first and
// the second measurement of its re-measured schedules; the mean over programs with two pairs
// or more (NaN when none).
struct NoiseCeiling {
  double tau = 0;
  int64_t pairs = 0, programs = 0;
};
NoiseCeiling noise_ceiling(const ResultLog& log);

CollectSummary collect(const CollectOptions& options);

}  // namespace tcost::halide
