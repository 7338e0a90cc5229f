#include "halide/collect.h"

#include <fnmatch.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <limits>
#include <random>

#include <fmt/format.h>

#include "core/error.h"
#include "core/graph.h"
#include "core/metrics.h"
#include "core/opcodes.h"
#include "core/progress.h"
#include "core/tpugraphs_io.h"
#include "halide/measure.h"
#include "halide/pipelines.h"
#include "halide/result_log.h"

namespace fs = std::filesystem;

namespace tcost::halide {
namespace {

// One program instance of the zoo: a family and its shape.
struct Instance {
  std::string name;         // family_shape, the graph's file stem
  std::string family;       // "matmul" or "conv3x3"
  int n = 0;                // matmul: n x n x n; conv: output size (n x n)
  int c_in = 0, c_out = 0;  // conv channels
};

// Shapes scaled so that a good schedule runs in well under 20 ms here.
std::vector<Instance> zoo() {
  return {{"matmul_128", "matmul", 128},
          {"matmul_192", "matmul", 192},
          {"matmul_256", "matmul", 256},
          {"conv3x3_56x16", "conv3x3", 56, 16, 16},
          {"conv3x3_28x32", "conv3x3", 28, 32, 32},
          {"conv3x3_14x64", "conv3x3", 14, 64, 64}};
}

// JIT-compiles an instance under a schedule (in the measuring child process).
std::function<void()> build(const Instance& in, const MatmulSchedule& s, int threads) {
  if (in.family == "conv3x3") return build_conv3x3(in.n, in.c_in, in.c_out, s, threads);
  return build_matmul(in.n, s, threads);
}

std::string schedule_key(const MatmulSchedule& s) {
  return fmt::format("tile={},vec={},par={}", s.tile, s.vector_width, s.parallel ? 1 : 0);
}

// The schedules of one instance: the default (untiled, scalar, serial) first, then distinct
// seeded samples.
std::vector<MatmulSchedule> schedules(const Instance& in, int count, uint64_t seed) {
  std::vector<MatmulSchedule> out = {MatmulSchedule{}};
  std::mt19937_64 rng(seed ^ std::hash<std::string>{}(in.name));
  const int tiles[] = {0, 8, 16, 32, 64};
  const int widths[] = {1, 4, 8, 16};
  for (int tries = 0; static_cast<int>(out.size()) < count + 1 && tries < 1000; ++tries) {
    MatmulSchedule s;
    s.tile = tiles[rng() % 5];
    s.vector_width = widths[rng() % 4];
    s.parallel = rng() % 2 == 1;
    // Tiles and vectors wider than the output would read and write past its edge (the code is
    // compiled without bounds asserts): such schedules are not sampled.
    if (s.tile > in.n || s.vector_width > in.n || (s.tile > 0 && s.vector_width > s.tile)) continue;
    bool seen = false;
    for (const auto& o : out) seen |= schedule_key(o) == schedule_key(s);
    if (!seen) out.push_back(s);
  }
  return out;
}

// Fills a node's TpuGraphs features: float32, shape dims (x innermost: minor-to-major 0, 1, 2).
void put_node(Graph& g, int v, const std::vector<int64_t>& dims, bool root, int64_t reduction) {
  float* f = &g.node_feat[static_cast<size_t>(v) * node_feat::kWidth];
  f[node_feat::kElementTypeF32] = 1;
  f[node_feat::kIsRoot] = root ? 1.0f : 0.0f;
  double sum = 0, product = 1;
  for (size_t k = 0; k < dims.size(); ++k) {
    f[node_feat::kShapeDimsBegin + k] = static_cast<float>(dims[k]);
    f[node_feat::kLayoutMinorToMajorBegin + k] = static_cast<float>(k);
    sum += static_cast<double>(dims[k]);
    product *= static_cast<double>(dims[k]);
  }
  for (size_t k = dims.size(); k < 6; ++k) f[node_feat::kLayoutMinorToMajorBegin + k] = -1;
  f[node_feat::kShapeSum] = static_cast<float>(sum);
  f[node_feat::kShapeProduct] = static_cast<float>(product);
  f[node_feat::kOpDimsBegin] = static_cast<float>(reduction);
}

// The instance as a TpuGraphs graph: its inputs (parameters) and stages, edges consumer -> input.
Graph instance_graph(const Instance& in) {
  Graph g;
  g.name = in.name;
  g.collection = Collection::kTile;
  g.node_feat_width = node_feat::kWidth;
  g.config_feat_width = kTileConfigWidth;
  const int64_t n = in.n;
  if (in.family == "conv3x3") {
    g.num_nodes = 5;  // input, weights, bias, convolution, relu (maximum)
    g.node_feat.assign(5 * node_feat::kWidth, 0.0f);
    g.node_opcode = {op::kParameter, op::kParameter, op::kParameter, op::kConvolution,
                     op::kMaximum};
    put_node(g, 0, {n + 2, n + 2, in.c_in}, false, 0);
    put_node(g, 1, {3, 3, in.c_in, in.c_out}, false, 0);
    put_node(g, 2, {in.c_out}, false, 0);
    put_node(g, 3, {n, n, in.c_out}, false, 9 * in.c_in);
    put_node(g, 4, {n, n, in.c_out}, true, 0);
    for (int k = 0; k < 2; ++k) {
      g.node_feat[3 * node_feat::kWidth + node_feat::kWindowSizeBegin + k] = 3;
      g.node_feat[3 * node_feat::kWidth + node_feat::kWindowStrideBegin + k] = 1;
    }
    g.edges = {3, 0, 3, 1, 3, 2, 4, 3};
    return g;
  }
  g.num_nodes = 3;  // A, B, the dot stage C
  g.node_feat.assign(3 * node_feat::kWidth, 0.0f);
  g.node_opcode = {op::kParameter, op::kParameter, op::kDot};
  put_node(g, 0, {n, n}, false, 0);
  put_node(g, 1, {n, n}, false, 0);
  put_node(g, 2, {n, n}, true, n);
  g.edges = {2, 0, 2, 1};
  return g;
}

// The 24-wide config of a schedule (docs/formats.md, "Halide tile configs").
void put_config(std::vector<float>& dst, const Instance& in, const MatmulSchedule& s) {
  const float tx = static_cast<float>(s.tile > 0 ? s.tile : in.n);
  const float ty = static_cast<float>(s.tile > 0 ? s.tile : in.n);
  float f[kTileConfigWidth] = {};
  f[0] = tx;
  f[1] = ty;
  f[6] = tx + ty;
  f[7] = tx * ty;
  f[8] = static_cast<float>(s.vector_width);
  f[9] = s.parallel ? 1.0f : 0.0f;
  f[14] = f[8] + f[9];
  f[15] = f[8] * f[9];
  dst.insert(dst.end(), f, f + kTileConfigWidth);
}

// Successful first-pass measurements of `instance` (the dataset's configurations).
bool first_pass_ok(const nlohmann::json& rec, const std::string& instance) {
  return rec.value("instance", "") == instance && rec.value("pass", 1) == 1 &&
         rec.value("ok", false);
}

MatmulSchedule schedule_of(const nlohmann::json& rec) {
  MatmulSchedule s;
  s.tile = rec.value("tile", 0);
  s.vector_width = rec.value("vector_width", 1);
  s.parallel = rec.value("parallel", false);
  return s;
}

// Measures one schedule in a child process and appends the outcome, success or failure.
MeasureResult measure_and_record(ResultLog& log, const std::string& key, int pass,
                                 const Instance& in, const MatmulSchedule& s, int threads,
                                 const MeasureOptions& mo) {
  const MeasureResult r = measure_isolated([in, s, threads] { return build(in, s, threads); }, mo);
  log.append({{"key", key},
              {"pass", pass},
              {"instance", in.name},
              {"tile", s.tile},
              {"vector_width", s.vector_width},
              {"parallel", s.parallel},
              {"ok", r.ok},
              {"error", r.error},
              {"compile_ms", r.compile_ms},
              {"best_ns", r.best_ns},
              {"third_ns", r.third_ns},
              {"runs", r.runs},
              {"threads", threads}});
  return r;
}

}  // namespace

CollectSummary collect(const CollectOptions& o) {
  if (o.out.empty()) throw UsageError("--out is required");
  if (o.configs_per_graph < 1) throw UsageError("--configs-per-graph must be at least 1");
  std::error_code ec;
  fs::create_directories(o.out, ec);
  if (ec) throw InputError(fmt::format("{}: cannot create: {}", o.out, ec.message()));
  std::vector<Instance> chosen;
  for (const auto& in : zoo()) {
    if (fnmatch(o.pipelines.c_str(), in.name.c_str(), 0) == 0) chosen.push_back(in);
  }
  if (chosen.empty())
    throw UsageError(fmt::format("--pipelines '{}' matches no program", o.pipelines));
  ResultLog log((fs::path(o.out) / "measurements.jsonl").string());
  CollectSummary summary;
  std::vector<std::vector<MatmulSchedule>> planned;
  int64_t total = 0;
  for (const auto& in : chosen) {
    planned.push_back(schedules(in, o.configs_per_graph, o.seed));
    total += static_cast<int64_t>(planned.back().size());
  }
  Progress progress("measuring", total);
  const auto start = std::chrono::steady_clock::now();
  MeasureOptions mo;
  mo.timeout_s = o.timeout_s;
  int64_t done = 0;
  bool out_of_time = false;
  for (size_t i = 0; i < chosen.size(); ++i) {
    const Instance& in = chosen[i];
    for (const auto& s : planned[i]) {
      const std::string key = in.name + "|" + schedule_key(s);
      progress.update(++done, key);
      if (log.done(key)) {
        ++summary.skipped;
        continue;
      }
      const double minutes =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / 60;
      if (o.time_budget_min > 0 && minutes > o.time_budget_min) {
        out_of_time = true;
        break;
      }
      const MeasureResult r = measure_and_record(log, key, 1, in, s, o.threads, mo);
      r.ok ? ++summary.measured : ++summary.failed;
    }
    if (out_of_time) break;
  }
  progress.finish();
  // Second pass (--remeasure): time a seeded sample of the measured schedules again; the tau
  // between the passes bounds what any model can reach on this data.
  summary.remeasure_tau = std::numeric_limits<double>::quiet_NaN();
  if (o.remeasure > 0 && !out_of_time) {
    std::vector<double> taus;
    for (const auto& in : chosen) {
      std::vector<nlohmann::json> first;
      for (const auto& rec : log.records()) {
        if (first_pass_ok(rec, in.name)) first.push_back(rec);
      }
      std::mt19937_64 rng(o.seed + 99);
      std::shuffle(first.begin(), first.end(), rng);
      const size_t take = std::min(
          first.size(),
          std::max<size_t>(
              2, static_cast<size_t>(std::ceil(o.remeasure * static_cast<double>(first.size())))));
      std::vector<double> a, b;
      for (size_t i = 0; i < take; ++i) {
        const std::string key2 = "remeasure|" + first[i]["key"].get<std::string>();
        if (!log.done(key2))
          measure_and_record(log, key2, 2, in, schedule_of(first[i]), o.threads, mo);
        const nlohmann::json* second = log.find(key2);
        if (second != nullptr && second->value("ok", false)) {
          a.push_back(first[i].value("best_ns", 0.0));
          b.push_back(second->value("best_ns", 0.0));
        }
      }
      if (a.size() >= 2) taus.push_back(kendall_tau_b(a, b));
      summary.remeasured_pairs += static_cast<int64_t>(a.size());
    }
    summary.remeasure_tau = mean_ignoring_nan(taus);
  }
  // Datasets from every successful measurement on record (this run's and earlier ones').
  for (const auto& in : zoo()) {
    Graph g = instance_graph(in);
    double normalizer = 0;
    for (const auto& rec : log.records()) {
      if (!first_pass_ok(rec, in.name)) continue;
      const MatmulSchedule s = schedule_of(rec);
      if (schedule_key(s) == schedule_key(MatmulSchedule{})) normalizer = rec.value("best_ns", 0.0);
      put_config(g.config_feat, in, s);
      g.runtime_ns.push_back(std::max<int64_t>(1, static_cast<int64_t>(rec.value("best_ns", 0.0))));
    }
    g.num_configs = static_cast<int64_t>(g.runtime_ns.size());
    if (g.num_configs == 0 || normalizer <= 0) continue;  // not measured (yet)
    g.normalizer_ns.assign(static_cast<size_t>(g.num_configs), static_cast<int64_t>(normalizer));
    // Families are not held out yet: every instance goes to train (test and valid need at
    // least three families).
    const fs::path dir = fs::path(o.out) / "tile" / "train";
    fs::create_directories(dir, ec);
    save_graph((dir / (g.name + ".npz")).string(), g, true);
    ++summary.graphs_written;
  }
  if (out_of_time) fmt::print(stderr, "time budget reached; run again to continue\n");
  return summary;
}

}  // namespace tcost::halide
