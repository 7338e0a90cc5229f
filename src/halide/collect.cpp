#include "halide/collect.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "core/ast.h"
#include "core/dataset.h"
#include "core/error.h"
#include "core/graph.h"
#include "core/metrics.h"
#include "core/opcodes.h"
#include "core/progress.h"
#include "core/tpugraphs_io.h"
#include "halide/featurize.h"
#include "halide/measure.h"
#include "halide/measure_batch.h"
#include "halide/result_log.h"
#include "halide/zoo.h"

namespace fs = std::filesystem;

namespace tcost::halide {
namespace {

// Positions in log.records() of each program's successful first-pass measurements (the
// dataset's configurations), in the order they were measured. Positions stay valid while the
// log grows.
std::map<std::string, std::vector<size_t>> first_pass_by_program(const ResultLog& log) {
  std::map<std::string, std::vector<size_t>> out;
  const auto& records = log.records();
  for (size_t i = 0; i < records.size(); ++i) {
    const auto& rec = records[i];
    if (rec.value("pass", 1) == 1 && rec.value("ok", false))
      out[rec.value("instance", "")].push_back(i);
  }
  return out;
}

struct Measured {
  std::vector<Schedule> schedules;
  std::vector<int64_t> runtime_ns;
  int64_t normalizer_ns = 0;  // the default schedule's runtime
};

// The configurations of one program: the records at `positions` (first_pass_by_program).
Measured measured_configs(const ResultLog& log, const std::vector<size_t>& positions,
                          const ProgramInfo& p) {
  Measured m;
  const std::string default_key = schedule_key(default_schedule(p));
  for (size_t i : positions) {
    const auto& rec = log.records()[i];
    Schedule s = schedule_from_json(rec.at("schedule"));
    check_schedule(p, s);
    const auto ns = std::max<int64_t>(1, static_cast<int64_t>(rec.value("best_ns", 0.0)));
    if (schedule_key(s) == default_key) m.normalizer_ns = ns;
    m.schedules.push_back(std::move(s));
    m.runtime_ns.push_back(ns);
  }
  return m;
}

void write_datasets(const std::string& out, const InstanceName& in, const Program& program,
                    const Measured& m, bool with_ast, CollectSummary& summary) {
  const ProgramInfo& p = program.info();
  const fs::path split = split_name(in.split);
  const auto path = [&](const char* collection) {
    const fs::path dir = fs::path(out) / collection / split;
    fs::create_directories(dir);
    return (dir / (p.instance + ".npz")).string();
  };
  const auto c = static_cast<int64_t>(m.schedules.size());
  const Graph layout = layout_graph(p, m.schedules, m.runtime_ns);
  const auto nc = static_cast<size_t>(layout.num_config_nodes());
  save_graph(path("layout"), layout, true);
  ++summary.layout_written;
  if (p.single_kernel) {
    save_graph(path("tile"), tile_graph(p, m.schedules, m.runtime_ns, m.normalizer_ns), true);
    ++summary.tile_written;
  }
  if (!with_ast) return;
  const std::string ast_path = path("ast");
  // Lowering every configuration takes a while: a file that already holds these runtimes is
  // kept.
  if (fs::exists(ast_path)) {
    try {
      if (load_ast(ast_path).runtime_ns == m.runtime_ns) {
        ++summary.ast_written;
        return;
      }
    } catch (const InputError&) {
      // rewritten below
    }
  }
  AstSet a;
  a.name = p.instance;
  a.num_configs = c;
  a.node_offsets.push_back(0);
  a.edge_offsets.push_back(0);
  a.config_feat_width = static_cast<int>(nc) * kStageConfigWidth;
  a.config_feat = layout.config_feat;
  for (int64_t i = 0; i < c; ++i) {
    const AstTree t = lower_ast(program, m.schedules[i]);
    a.kinds.insert(a.kinds.end(), t.kinds.begin(), t.kinds.end());
    a.feats.insert(a.feats.end(), t.feats.begin(), t.feats.end());
    a.edges.insert(a.edges.end(), t.edges.begin(), t.edges.end());
    a.node_offsets.push_back(a.num_nodes());
    a.edge_offsets.push_back(a.num_edges());
  }
  a.runtime_ns = m.runtime_ns;
  save_ast(ast_path, a, true);
  ++summary.ast_written;
}

std::string read_first_line(const std::string& command) {
  std::string out;
  if (std::FILE* f = popen(command.c_str(), "r")) {
    char buf[512];
    if (std::fgets(buf, sizeof buf, f) != nullptr) out = buf;
    pclose(f);
  }
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

// Facts about this machine: CPU model, cores, memory, SIMD flags, caches.
nlohmann::json machine_facts() {
  nlohmann::json m;
  std::ifstream cpu("/proc/cpuinfo");
  std::string line, flags;
  while (std::getline(cpu, line)) {
    const auto value = [&] { return line.substr(line.find(':') + 2); };
    if (line.rfind("model name", 0) == 0 && !m.contains("cpu")) m["cpu"] = value();
    if (line.rfind("flags", 0) == 0 && flags.empty()) flags = value();
  }
  m["cores"] = std::thread::hardware_concurrency();
  std::ifstream mem("/proc/meminfo");
  while (std::getline(mem, line)) {
    if (line.rfind("MemTotal:", 0) == 0)
      m["memory_gib"] = std::round(std::stod(line.substr(9)) / (1024.0 * 1024.0) * 10) / 10;
  }
  std::vector<std::string> simd;
  for (const char* f : {"sse4_1", "sse4_2", "avx", "avx2", "fma", "f16c", "avx512f", "avx512dq",
                        "avx512bw", "avx512vl", "avx512_vnni", "avx512_bf16"}) {
    if ((" " + flags + " ").find(std::string(" ") + f + " ") != std::string::npos)
      simd.push_back(f);
  }
  m["simd_flags"] = simd;
  m["cpu_flags"] = flags;
  nlohmann::json caches;
  for (int i = 0; i < 8; ++i) {
    const std::string dir = fmt::format("/sys/devices/system/cpu/cpu0/cache/index{}/", i);
    std::ifstream level(dir + "level"), type(dir + "type"), size(dir + "size");
    std::string l, t, sz;
    if (!(level >> l) || !(type >> t) || !(size >> sz)) break;
    caches[fmt::format("L{} {}", l, t)] = sz;
  }
  m["caches"] = caches;
  m["kernel"] = read_first_line("uname -sr 2>/dev/null");
  return m;
}

// OUT/manifest.json: machine, Halide, protocol, date, counts and noise ceiling of the data.
void write_manifest(const CollectOptions& o, const MeasureOptions& mo, const ResultLog& log,
                    const CollectSummary& summary) {
  nlohmann::json counts;
  int64_t failed_timeout = 0, failed_crash = 0, failed_other = 0, first_pass = 0;
  std::map<std::string, int64_t> ok_by_program, tried_by_program;
  for (const auto& rec : log.records()) {
    if (rec.value("pass", 1) != 1) continue;
    ++first_pass;
    ++tried_by_program[rec.value("instance", "")];
    if (rec.value("ok", false)) {
      ++ok_by_program[rec.value("instance", "")];
      continue;
    }
    const std::string e = rec.value("error", "");
    (e.rfind("timeout", 0) == 0   ? failed_timeout
     : e.rfind("crashed", 0) == 0 ? failed_crash
                                  : failed_other)++;
  }
  for (Split sp : {Split::kTrain, Split::kValid, Split::kTest}) {
    std::set<std::string> families;
    int64_t programs = 0, configs = 0, fewest = -1;
    for (const auto& in : zoo_instances()) {
      if (in.split != sp || ok_by_program.count(in.name) == 0) continue;
      families.insert(in.family);
      ++programs;
      const int64_t c = ok_by_program[in.name];
      configs += c;
      fewest = fewest < 0 ? c : std::min(fewest, c);
    }
    counts[split_name(sp)] = {
        {"families", std::vector<std::string>(families.begin(), families.end())},
        {"programs", programs},
        {"configs", configs},
        {"fewest_configs_per_program", fewest}};
  }
  counts["measurements_first_pass"] = first_pass;
  int64_t tried_min = -1, tried_max = 0;  // the default and the samples, failures included
  for (const auto& [name, n] : tried_by_program) {
    tried_min = tried_min < 0 ? n : std::min(tried_min, n);
    tried_max = std::max(tried_max, n);
  }
  counts["failed"] = {
      {"timeout", failed_timeout}, {"crashed", failed_crash}, {"rejected_or_other", failed_other}};
  counts["files"] = {{"layout", summary.layout_written},
                     {"tile", summary.tile_written},
                     {"ast", summary.ast_written}};
  const std::string halide = read_first_line(
      "dpkg-query -W -f='libhalide14-0-dev ${Version}' libhalide14-0-dev 2>/dev/null");
  const auto now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  nlohmann::json m = {
      {"written", date},
      {"machine", machine_facts()},
      {"halide",
       {{"version", halide.empty() ? "Halide 14" : halide}, {"target", jit_target_name()}}},
      {"protocol",
       {{"compile", "JIT (Pipeline::compile_jit), timed separately, in a fresh child process"},
        {"inputs", "seeded uniform random values, allocated with slack around their extents"},
        {"threads", o.threads},
        {"workers", o.workers},
        {"overlap", "compiles of different schedules overlap; timed runs hold a lock alone"},
        {"warmup_runs", mo.warmup_runs},
        {"min_runs", mo.min_runs},
        {"max_runs", mo.max_runs},
        {"stop_when_third_best_within", mo.tolerance},
        {"max_run_seconds", mo.max_run_seconds},
        {"timeout_seconds", o.timeout_s},
        {"statistic", "best run (ns)"},
        {"seed", o.seed},
        {"schedules_tried_per_program", {{"min", tried_min}, {"max", tried_max}}}}},
      {"counts", counts},
  };
  const NoiseCeiling n = noise_ceiling(log);
  m["noise_ceiling"] = {
      {"kendall_tau", std::isnan(n.tau) ? nlohmann::json() : nlohmann::json(n.tau)},
      {"pairs", n.pairs},
      {"programs", n.programs},
      {"method",
       "mean over programs of Kendall tau-b between the first and a second measurement of a "
       "seeded sample of its schedules (tcost collect --remeasure)"}};
  const std::string path = (fs::path(o.out) / "manifest.json").string();
  if (!o.measure && fs::exists(path)) {
    // Rewritten datasets of earlier measurements: the machine, Halide target and protocol are
    // the ones they were measured under.
    std::ifstream in(path);
    const nlohmann::json before = nlohmann::json::parse(in, nullptr, false);
    if (before.is_object()) {
      for (const char* key : {"written", "machine", "halide", "protocol"}) {
        if (before.contains(key)) m[key] = before[key];
      }
      m["datasets_rewritten"] = {
          {"date", date},
          {"target_now", jit_target_name()},
          {"note",
           "datasets and features rewritten from measurements.jsonl (tcost collect "
           "--rewrite); the runtimes are those measured at 'written'"}};
    }
  }
  {
    std::ofstream out(path + ".tmp", std::ios::trunc);
    out << m.dump(2) << "\n";
    if (!out) throw InputError(fmt::format("{}: cannot write", path));
  }
  fs::rename(path + ".tmp", path);
}

}  // namespace

NoiseCeiling noise_ceiling(const ResultLog& log) {
  std::map<std::string, std::pair<std::vector<double>, std::vector<double>>> by_program;
  for (const auto& rec : log.records()) {
    if (rec.value("pass", 1) != 2 || !rec.value("ok", false)) continue;
    const std::string key = rec.at("key").get<std::string>();
    const nlohmann::json* first = log.find(key.substr(std::string("remeasure|").size()));
    if (first == nullptr || !first->value("ok", false)) continue;
    auto& [a, b] = by_program[rec.value("instance", "")];
    a.push_back(first->value("best_ns", 0.0));
    b.push_back(rec.value("best_ns", 0.0));
  }
  NoiseCeiling n;
  std::vector<double> taus;
  for (const auto& [name, ab] : by_program) {
    n.pairs += static_cast<int64_t>(ab.first.size());
    if (ab.first.size() < 2) continue;
    taus.push_back(kendall_tau_b(ab.first, ab.second));
    ++n.programs;
  }
  n.tau = mean_ignoring_nan(taus);
  return n;
}

CollectSummary collect(const CollectOptions& o) {
  if (o.out.empty()) throw UsageError("--out is required");
  if (o.configs_per_graph < 1) throw UsageError("--configs-per-graph must be at least 1");
  std::error_code ec;
  fs::create_directories(o.out, ec);
  if (ec) throw InputError(fmt::format("{}: cannot create: {}", o.out, ec.message()));
  const std::vector<InstanceName> chosen = select_instances(o.pipelines);
  ResultLog log((fs::path(o.out) / "measurements.jsonl").string());
  CollectSummary summary;
  std::vector<Program> programs;
  std::vector<std::vector<Schedule>> planned;
  int64_t total = 0;
  for (const auto& in : chosen) {
    programs.push_back(zoo_program(in.name));
    planned.push_back(sample_schedules(programs.back().info(), o.configs_per_graph, o.seed));
    total += static_cast<int64_t>(planned.back().size());
  }
  MeasureOptions mo;
  mo.timeout_s = o.timeout_s;
  mo.max_run_seconds = o.max_run_seconds;
  mo.lock_path = (fs::path(o.out) / ".measure.lock").string();
  BatchOptions bo;
  bo.measure = mo;
  bo.workers = o.workers;
  bo.threads = o.threads;
  if (o.time_budget_min > 0) {
    bo.deadline = std::chrono::steady_clock::now() +
                  std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                      std::chrono::duration<double>(o.time_budget_min * 60));
  }
  bool out_of_time = false;
  const auto run = [&](const char* label, const std::vector<MeasureJob>& jobs) {
    const BatchSummary b = measure_batch(log, jobs, bo, label);
    summary.measured += b.measured;
    summary.failed += b.failed;
    summary.skipped += b.skipped;
    out_of_time = out_of_time || b.out_of_time;
  };
  std::vector<MeasureJob> first;
  for (size_t i = 0; i < programs.size(); ++i) {
    for (const auto& s : planned[i])
      first.push_back({&programs[i], s, measurement_key(programs[i], s), 1, nullptr});
  }
  if (o.measure) run("measuring", first);
  const auto measured = first_pass_by_program(log);
  // Second pass (--remeasure): time a seeded sample of the measured schedules again; the tau
  // between the passes bounds what any model can reach on this data.
  if (o.measure && o.remeasure > 0 && !out_of_time) {
    std::vector<MeasureJob> second;
    for (const auto& p : programs) {
      const auto it = measured.find(p.name());
      if (it == measured.end()) continue;
      std::vector<size_t> done = it->second;
      std::mt19937_64 rng(o.seed + 99);
      std::shuffle(done.begin(), done.end(), rng);
      const size_t take = std::min(
          done.size(),
          std::max<size_t>(
              2, static_cast<size_t>(std::ceil(o.remeasure * static_cast<double>(done.size())))));
      for (size_t i = 0; i < take; ++i) {
        const auto& rec = log.records()[done[i]];
        second.push_back({&p, schedule_from_json(rec.at("schedule")),
                          "remeasure|" + rec.at("key").get<std::string>(), 2, nullptr});
      }
    }
    run("re-measuring", second);
  }
  const NoiseCeiling noise = noise_ceiling(log);
  summary.remeasure_tau = noise.tau;
  summary.remeasured_pairs = noise.pairs;
  // Datasets from every successful measurement on record (this run's and earlier ones'), for
  // every program of the zoo that has its default schedule measured.
  const std::vector<InstanceName> all = zoo_instances();
  Progress writing("writing datasets", static_cast<int64_t>(all.size()));
  int64_t k = 0;
  for (const auto& in : all) {
    writing.update(++k, in.name);
    const auto it = measured.find(in.name);
    if (it == measured.end()) continue;
    const Program p = zoo_program(in.name);
    const Measured m = measured_configs(log, it->second, p.info());
    if (m.normalizer_ns <= 0 || m.schedules.size() < 2) continue;  // not measured (yet)
    write_datasets(o.out, in, p, m, o.ast, summary);
  }
  writing.finish();
  write_manifest(o, mo, log, summary);
  if (out_of_time) fmt::print(stderr, "time budget reached; run again to continue\n");
  return summary;
}

}  // namespace tcost::halide
