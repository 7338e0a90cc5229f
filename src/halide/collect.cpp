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

struct Instance {
  std::string name;  // family_shape, the graph's file stem
  int n = 0;
};

std::vector<Instance> zoo() {
  return {{"matmul_128", 128}, {"matmul_192", 192}, {"matmul_256", 256}};
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
    if (s.tile > 0 && s.vector_width > s.tile) continue;
    bool seen = false;
    for (const auto& o : out) seen |= schedule_key(o) == schedule_key(s);
    if (!seen) out.push_back(s);
  }
  return out;
}

// The instance as a TpuGraphs graph: parameters A and B, the dot stage C (the root).
Graph instance_graph(const Instance& in) {
  Graph g;
  g.name = in.name;
  g.collection = Collection::kTile;
  g.num_nodes = 3;
  g.node_feat_width = node_feat::kWidth;
  g.node_feat.assign(3 * node_feat::kWidth, 0.0f);
  g.node_opcode = {op::kParameter, op::kParameter, op::kDot};
  for (int v = 0; v < 3; ++v) {
    float* f = &g.node_feat[v * node_feat::kWidth];
    f[node_feat::kElementTypeF32] = 1;
    f[node_feat::kShapeDimsBegin] = static_cast<float>(in.n);
    f[node_feat::kShapeDimsBegin + 1] = static_cast<float>(in.n);
    f[node_feat::kShapeSum] = static_cast<float>(2 * in.n);
    f[node_feat::kShapeProduct] = static_cast<float>(in.n * in.n);
    f[node_feat::kLayoutMinorToMajorBegin] = 0;
    f[node_feat::kLayoutMinorToMajorBegin + 1] = 1;
  }
  g.node_feat[2 * node_feat::kWidth + node_feat::kIsRoot] = 1;
  g.node_feat[2 * node_feat::kWidth + node_feat::kOpDimsBegin] =
      static_cast<float>(in.n);  // reduction
  g.edges = {2, 0, 2, 1};
  g.config_feat_width = kTileConfigWidth;
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
  int64_t total = 0;
  for (const auto& in : chosen)
    total += static_cast<int64_t>(schedules(in, o.configs_per_graph, o.seed).size());
  Progress progress("measuring", total);
  const auto start = std::chrono::steady_clock::now();
  MeasureOptions mo;
  mo.timeout_s = o.timeout_s;
  int64_t done = 0;
  bool out_of_time = false;
  for (const auto& in : chosen) {
    for (const auto& s : schedules(in, o.configs_per_graph, o.seed)) {
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
      const int n = in.n, threads = o.threads;
      const MeasureResult r =
          measure_isolated([n, s, threads] { return build_matmul(n, s, threads); }, mo);
      log.append({{"key", key},
                  {"pass", 1},
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
                  {"threads", o.threads}});
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
        if (rec.value("instance", "") == in.name && rec.value("pass", 1) == 1 &&
            rec.value("ok", false)) {
          first.push_back(rec);
        }
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
        if (!log.done(key2)) {
          MatmulSchedule s;
          s.tile = first[i].value("tile", 0);
          s.vector_width = first[i].value("vector_width", 1);
          s.parallel = first[i].value("parallel", false);
          const int n = in.n, threads = o.threads;
          const MeasureResult r =
              measure_isolated([n, s, threads] { return build_matmul(n, s, threads); }, mo);
          log.append({{"key", key2},
                      {"pass", 2},
                      {"instance", in.name},
                      {"ok", r.ok},
                      {"error", r.error},
                      {"best_ns", r.best_ns},
                      {"third_ns", r.third_ns},
                      {"runs", r.runs}});
        }
        for (const auto& rec : log.records()) {
          if (rec["key"] == key2 && rec.value("ok", false)) {
            a.push_back(first[i].value("best_ns", 0.0));
            b.push_back(rec.value("best_ns", 0.0));
          }
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
      if (rec.value("instance", "") != in.name || rec.value("pass", 1) != 1 ||
          !rec.value("ok", false)) {
        continue;
      }
      MatmulSchedule s;
      s.tile = rec.value("tile", 0);
      s.vector_width = rec.value("vector_width", 1);
      s.parallel = rec.value("parallel", false);
      if (schedule_key(s) == schedule_key(MatmulSchedule{})) normalizer = rec.value("best_ns", 0.0);
      put_config(g.config_feat, in, s);
      g.runtime_ns.push_back(std::max<int64_t>(1, static_cast<int64_t>(rec.value("best_ns", 0.0))));
    }
    g.num_configs = static_cast<int64_t>(g.runtime_ns.size());
    if (g.num_configs == 0 || normalizer <= 0) continue;  // not measured (yet)
    g.normalizer_ns.assign(static_cast<size_t>(g.num_configs), static_cast<int64_t>(normalizer));
    // One family so far: every instance goes to train until the zoo has families to hold out.
    const fs::path dir = fs::path(o.out) / "tile" / "train";
    fs::create_directories(dir, ec);
    save_graph((dir / (g.name + ".npz")).string(), g, true);
    ++summary.graphs_written;
  }
  if (out_of_time) fmt::print(stderr, "time budget reached; run again to continue\n");
  return summary;
}

}  // namespace tcost::halide
