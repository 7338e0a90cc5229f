#include "halide/collect.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <numeric>
#include <random>
#include <set>

#include <fmt/format.h>

#include "core/dataset.h"
#include "core/error.h"
#include "core/metrics.h"
#include "core/progress.h"
#include "halide/datasets.h"
#include "halide/manifest.h"
#include "halide/measure.h"
#include "halide/measure_batch.h"
#include "halide/result_log.h"
#include "halide/zoo.h"

namespace fs = std::filesystem;

namespace tcost::halide {

NoiseCeiling noise_ceiling(const ResultLog& log, RunStatistic statistic) {
  const char* field = run_statistic_field(statistic);
  std::map<std::string, std::pair<std::vector<double>, std::vector<double>>> by_program;
  for (const auto& rec : log.records()) {
    if (rec.value("pass", 1) != 2 || !rec.value("ok", false)) continue;
    const std::string key = rec.at("key").get<std::string>();
    const nlohmann::json* first = log.find(key.substr(std::string("remeasure|").size()));
    if (first == nullptr || !first->value("ok", false)) continue;
    auto& [a, b] = by_program[rec.value("instance", "")];
    a.push_back(first->value(field, 0.0));
    b.push_back(rec.value(field, 0.0));
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

std::vector<std::pair<std::string, std::string>> cross_sessions(const ResultLog& log) {
  std::vector<std::pair<std::string, std::string>> out;
  std::set<std::string> seen;
  for (const auto& rec : log.records()) {
    if (rec.value("pass", 1) != 4) continue;
    const std::string session = rec.value("session", "");
    if (seen.insert(session).second) out.emplace_back(session, rec.value("cpu", ""));
  }
  return out;
}

CrossSession cross_session_noise(const ResultLog& log, const std::string& data_cpu,
                                 const std::string& session, RunStatistic statistic) {
  CrossSession c;
  for (const auto& [s, cpu] : cross_sessions(log)) {
    // Without a session named: a later run on the data's CPU replaces any before it; one on
    // another CPU only replaces runs on other CPUs.
    const bool have_on_data_cpu = !c.session.empty() && c.cpu == data_cpu;
    if (session.empty() ? cpu == data_cpu || !have_on_data_cpu : s == session) {
      c.session = s;
      c.cpu = cpu;
    }
  }
  if (c.session.empty()) return c;
  struct Pairs {
    std::vector<double> old_best, new_best, old_median, new_median, ratios;
    std::string family;
  };
  std::map<std::string, Pairs> by_program;
  std::vector<double> ratios;
  // When each of the session's measurements ran, all passes: a resumed session's pauses are not
  // its cost.
  std::vector<std::pair<double, double>> busy;
  int64_t measured = 0;
  const std::string prefix = session_key(c.session, "");
  for (const auto& rec : log.records()) {
    if (rec.value("pass", 1) != 4 || rec.value("session", "") != c.session) continue;
    ++measured;
    // Every pass of the schedule counts (collect --passes).
    for (const auto* r : passes_of(log, rec)) {
      if (!r->contains("finished")) continue;
      const double end = r->value("finished", 0.0);
      busy.emplace_back(end - r->value("wall_s", 0.0), end);
    }
    if (!rec.value("ok", false)) continue;
    const nlohmann::json* first = log.find(rec.at("key").get<std::string>().substr(prefix.size()));
    if (first == nullptr || !first->value("ok", false)) continue;
    Pairs& p = by_program[rec.value("instance", "")];
    p.family = rec.value("family", "");
    // Each side's runtime over its passes (collect --passes), under the session's target: the
    // shipped side's on the data's CPU.
    const std::string target = rec.value("target", "");
    const double old_best = runtime_of_passes(log, *first, MeasuredOn{target, data_cpu}, statistic);
    if (old_best <= 0) continue;  // never measured on the data's CPU: no shipped runtime
    const double new_best = runtime_of_passes(log, rec, MeasuredOn{target, ""}, statistic);
    if (new_best <= 0) continue;
    p.old_best.push_back(old_best);
    p.new_best.push_back(new_best);
    if (first->value("median_ns", 0.0) > 0 && rec.value("median_ns", 0.0) > 0) {
      p.old_median.push_back(first->value("median_ns", 0.0));
      p.new_median.push_back(rec.value("median_ns", 0.0));
    }
    ratios.push_back(p.new_best.back() / p.old_best.back());
    p.ratios.push_back(ratios.back());
  }
  std::vector<double> taus, taus_median;
  std::map<std::string, std::vector<double>> family_taus;
  c.min_schedules_per_program = -1;
  for (const auto& [program, p] : by_program) {
    c.pairs += static_cast<int64_t>(p.old_best.size());
    if (p.old_best.size() < 2) continue;
    const double t = kendall_tau_b(p.old_best, p.new_best);
    taus.push_back(t);
    family_taus[p.family].push_back(t);
    if (p.old_median.size() >= 2) taus_median.push_back(kendall_tau_b(p.old_median, p.new_median));
    ++c.programs;
    const double n = static_cast<double>(p.old_best.size());
    c.min_schedules_per_program =
        c.min_schedules_per_program < 0 ? n : std::min(c.min_schedules_per_program, n);
  }
  c.tau = mean_ignoring_nan(taus);
  c.tau_median = taus_median.empty() ? std::nan("") : mean_ignoring_nan(taus_median);
  for (const auto& [family, t] : family_taus) c.tau_by_family[family] = mean_ignoring_nan(t);
  const auto quantile = [](std::vector<double> v, double q) {
    if (v.empty()) return std::nan("");
    std::sort(v.begin(), v.end());
    return v[static_cast<size_t>(q * static_cast<double>(v.size() - 1) + 0.5)];
  };
  c.ratio_p10 = quantile(ratios, 0.1);
  c.ratio_p50 = quantile(ratios, 0.5);
  c.ratio_p90 = quantile(ratios, 0.9);
  std::vector<double> within;
  for (const auto& [program, p] : by_program) {
    const double median = quantile(p.ratios, 0.5);
    for (double r : p.ratios) within.push_back(r / median);
  }
  c.within_p10 = quantile(within, 0.1);
  c.within_p90 = quantile(within, 0.9);
  // Elapsed time of the session, all passes, over its schedules: the union of the intervals in
  // which a measurement ran (several are in flight at once, and a resumed session has gaps).
  std::sort(busy.begin(), busy.end());
  double elapsed = 0, covered_to = -std::numeric_limits<double>::infinity();
  for (const auto& [start, end] : busy) {
    if (end <= covered_to) continue;
    elapsed += end - std::max(start, covered_to);
    covered_to = end;
  }
  c.seconds_per_schedule = measured > 0 ? elapsed / static_cast<double>(measured) : 0;
  return c;
}

std::vector<size_t> shard_programs(const std::vector<double>& costs, int index, int count) {
  std::vector<size_t> order(costs.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return costs[a] > costs[b]; });
  std::vector<double> load(static_cast<size_t>(count), 0.0);
  std::vector<size_t> mine;
  for (size_t i : order) {
    const size_t s = static_cast<size_t>(std::min_element(load.begin(), load.end()) - load.begin());
    load[s] += costs[i];
    if (static_cast<int>(s) == index) mine.push_back(i);
  }
  std::sort(mine.begin(), mine.end());
  return mine;
}

double expected_cost(const ProgramInfo& p, int64_t schedules, double max_run_seconds) {
  double compile_s = 0.3, work = 0;
  for (int v : p.stages()) {
    const NodeInfo& n = p.nodes[static_cast<size_t>(v)];
    compile_s += 0.05;
    double points = 1;
    for (int64_t d : n.dims) points *= static_cast<double>(d);
    double ops = 1;
    for (double k : n.ops) ops += k;
    work += points * ops * static_cast<double>(std::max<int64_t>(1, n.reduction));
  }
  // Runs: about 1 ns an operation under an average schedule, repeated up to the run limit.
  const double run_s = std::min(max_run_seconds, 10 * work * 1e-9);
  return static_cast<double>(schedules) * (compile_s + run_s);
}

MergeSummary merge_collections(const std::vector<std::string>& dirs, const std::string& out,
                               bool allow_mixed) {
  if (dirs.empty()) throw UsageError("merge: no collections given");
  std::error_code ec;
  fs::create_directories(out, ec);
  if (ec) throw InputError(fmt::format("{}: cannot create: {}", out, ec.message()));
  const fs::path out_log = fs::path(out) / "measurements.jsonl";
  if (fs::exists(out_log) && fs::file_size(out_log) > 0)
    throw InputError(fmt::format("{}: already holds measurements; merge into a new directory",
                                 out_log.string()));
  // What must agree between shards: the CPU, Halide and its target, and the protocol (the
  // seed and per-run counts aside).
  const auto identity = [](const nlohmann::json& m) {
    nlohmann::json id = {{"cpu", m.value("machine", nlohmann::json::object()).value("cpu", "")},
                         {"halide", m.value("halide", nlohmann::json::object())},
                         {"protocol", m.value("protocol", nlohmann::json::object())}};
    for (const char* k : {"seed", "sketches_per_program", "schedules_tried_per_program", "shard"})
      id["protocol"].erase(k);
    return id;
  };
  std::vector<nlohmann::json> manifests;
  for (const auto& d : dirs) {
    const fs::path mp = fs::path(d) / "manifest.json";
    std::ifstream in(mp);
    if (!in) throw InputError(fmt::format("{}: no manifest: not a collection", mp.string()));
    nlohmann::json m = nlohmann::json::parse(in, nullptr, false);
    if (!m.is_object()) throw InputError(fmt::format("{}: not JSON", mp.string()));
    manifests.push_back(std::move(m));
    if (!allow_mixed && identity(manifests.back()) != identity(manifests.front())) {
      throw InputError(fmt::format(
          "{} and {} were measured on different machines, Halide versions or protocols ({} vs "
          "{}); pass --allow-mixed to merge them anyway",
          dirs.front(), d, identity(manifests.front()).dump(), identity(manifests.back()).dump()));
    }
  }
  MergeSummary summary;
  {
    ResultLog merged(out_log.string());
    for (const auto& d : dirs) {
      const fs::path lp = fs::path(d) / "measurements.jsonl";
      if (!fs::exists(lp)) throw InputError(fmt::format("{}: no measurements", lp.string()));
      const ResultLog shard(lp.string());
      for (const auto& rec : shard.records()) {
        if (merged.done(rec.at("key").get<std::string>())) {
          ++summary.duplicates;
          continue;
        }
        merged.append(rec);
        ++summary.records;
      }
    }
  }
  // The first shard's machine, Halide target and protocol; the datasets from the merged records.
  {
    std::ofstream m(fs::path(out) / "manifest.json", std::ios::trunc);
    m << manifests.front().dump(2) << "\n";
  }
  CollectOptions o;
  o.out = out;
  o.measure = false;
  summary.written = collect(o);
  const fs::path mp = fs::path(out) / "manifest.json";
  std::ifstream in(mp);
  nlohmann::json m = nlohmann::json::parse(in);
  in.close();
  m.erase("datasets_rewritten");
  m["protocol"].erase("shard");
  m["merged"] = {{"from", dirs},
                 {"records", summary.records},
                 {"duplicates", summary.duplicates},
                 {"mixed", allow_mixed}};
  {
    std::ofstream w(mp.string() + ".tmp", std::ios::trunc);
    w << m.dump(2) << "\n";
    if (!w) throw InputError(fmt::format("{}: cannot write", mp.string()));
  }
  fs::rename(mp.string() + ".tmp", mp);
  return summary;
}

namespace {

// The schedules of `programs` in the collection at `dir` (--schedules-from): those whose first
// measurement succeeded on the collection's CPU, in its order, one list per program.
std::vector<std::vector<Schedule>> recorded_schedules(const std::string& dir,
                                                      const std::vector<Program>& programs) {
  const ResultLog log = ResultLog::read_only((fs::path(dir) / "measurements.jsonl").string());
  const MeasuredOn on{"", data_cpu(dir)};
  const auto first = first_pass_by_program(log);
  std::vector<std::vector<Schedule>> out;
  for (const auto& p : programs) {
    out.emplace_back();
    const auto it = first.find(p.name());
    if (it == first.end()) continue;
    for (size_t i : it->second) {
      const auto& rec = log.records()[i];
      if (passes_under(log, rec, on, /*ok_only=*/true) == 0) continue;
      Schedule s = schedule_from_json(rec.at("schedule"));
      if (measurement_key(p, s) != rec.at("key").get<std::string>())
        throw InputError(fmt::format("{}: the record {} is not the schedule it holds", dir,
                                     rec.at("key").get<std::string>()));
      out.back().push_back(std::move(s));
    }
  }
  return out;
}

// The keys of the first measurements on record in `log`, successful or not, by program.
std::map<std::string, std::set<std::string>> tried_keys(const ResultLog& log) {
  std::map<std::string, std::set<std::string>> out;
  for (const auto& rec : log.records()) {
    if (rec.value("pass", 1) == 1) out[rec.value("instance", "")].insert(rec.value("key", ""));
  }
  return out;
}

// How many more schedules to try for `need` more in a program's datasets, when `have` of its
// `tried` tries reached them: `need` over the share (smoothed, so that a program with none yet
// is tried), with a fifth more for the spread, at most `cap`.
int64_t top_up_count(int64_t need, int64_t have, int64_t tried, int64_t cap) {
  const double share = static_cast<double>(have + 1) / static_cast<double>(tried + 2);
  return std::clamp<int64_t>(
      static_cast<int64_t>(std::ceil(1.2 * static_cast<double>(need) / share)), need,
      std::max(need, cap));
}

// The first `count` schedules of `p`'s seeded sample whose keys are not in `tried` (fewer when
// the schedule space holds no more).
std::vector<Schedule> untried_samples(const Program& p, const std::set<std::string>& tried,
                                      int64_t count, uint64_t seed) {
  std::vector<Schedule> out;
  for (int64_t n = 2 * count + static_cast<int64_t>(tried.size());
       out.size() < static_cast<size_t>(count); n *= 2) {
    out.clear();
    const std::vector<Schedule> sample = sample_schedules(p.info(), static_cast<int>(n), seed);
    for (const auto& s : sample) {
      if (tried.count(measurement_key(p, s)) > 0) continue;
      out.push_back(s);
      if (out.size() == static_cast<size_t>(count)) break;
    }
    // sample_schedules gives count + 1 unless the space ran out of new schedules.
    if (static_cast<int64_t>(sample.size()) < n + 1 || n > 100000) break;
  }
  return out;
}

// The neighbours of `p` (CollectOptions::neighbours) that `log` lacks: up to `count` minus
// those on record ("origin": "neighbour", measured or failed) untried schedules, each
// tweak_schedule of one of the `parents` fastest schedules of the program's datasets that are not
// neighbours themselves, the parents taken in turn. `tried` holds the program's first
// measurements' keys (tried_keys), `ok_first` their successful ones' positions
// (first_pass_by_program). Seeded by `seed` and the program's name, so that a rerun draws the
// same ones while the parents' runtimes stand.
std::vector<Schedule> untried_neighbours(const ResultLog& log, const Program& p,
                                         std::set<std::string> tried,
                                         const std::vector<size_t>& ok_first, const MeasuredOn& on,
                                         RunStatistic statistic, int64_t count, int parents,
                                         uint64_t seed) {
  const auto neighbour = [](const nlohmann::json& rec) {
    return rec.value("origin", "") == "neighbour";
  };
  for (const auto& key : tried) count -= neighbour(*log.find(key)) ? 1 : 0;
  std::vector<Schedule> out;
  if (count <= 0) return out;
  std::vector<size_t> sampled;  // successful first measurements that are not neighbours
  for (size_t i : ok_first) {
    if (!neighbour(log.records()[i])) sampled.push_back(i);
  }
  const Measured m = measured_configs(log, sampled, p.info(), on, statistic);
  std::vector<size_t> order(m.schedules.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return m.runtime_ns[a] < m.runtime_ns[b]; });
  order.resize(std::min(order.size(), static_cast<size_t>(std::max(parents, 0))));
  if (order.empty()) return out;
  std::mt19937_64 rng(name_seed(seed, p.name()));
  for (int64_t attempt = 0; static_cast<int64_t>(out.size()) < count && attempt < 50 * count;
       ++attempt) {
    const Schedule& parent = m.schedules[order[static_cast<size_t>(attempt) % order.size()]];
    std::optional<Schedule> child = tweak_schedule(p.info(), parent, rng);
    if (child && tried.insert(measurement_key(p, *child)).second) out.push_back(std::move(*child));
  }
  return out;
}

// The later sessions the datasets pool (CollectOptions::pool_sessions): those named, every one
// on the data's CPU ("all"), none ("none"), or the collection's own ("": its manifest's). A name
// must be a session on record measured on the data's CPU (pooling another CPU's runtimes would
// mix two CPUs' rankings), or `measuring_now`, the session this run measures: InputError else.
std::vector<std::string> sessions_to_pool(const CollectOptions& o, const ResultLog& log,
                                          const std::string& cpu,
                                          const std::string& measuring_now) {
  const auto on_record = cross_sessions(log);
  if (o.pool_sessions == "none") return {};
  std::vector<std::string> names;
  if (o.pool_sessions == "all") {
    for (const auto& [session, session_cpu] : on_record)
      if (session_cpu == cpu) names.push_back(session);
    if (!measuring_now.empty() &&
        std::find(names.begin(), names.end(), measuring_now) == names.end())
      names.push_back(measuring_now);
    return names;
  }
  std::string known;
  for (const auto& [session, session_cpu] : on_record)
    known += fmt::format("{}{} ({})", known.empty() ? "" : ", ", session, session_cpu);
  for (const std::string& name :
       o.pool_sessions.empty() ? data_pooled_sessions(o.out) : comma_list(o.pool_sessions)) {
    if (std::find(names.begin(), names.end(), name) != names.end()) continue;
    const auto it = std::find_if(on_record.begin(), on_record.end(),
                                 [&](const auto& s) { return s.first == name; });
    if (it == on_record.end() && name != measuring_now)
      throw InputError(fmt::format("{}: no later session '{}' to pool (on record: {})", o.out, name,
                                   known.empty() ? "none" : known));
    const std::string session_cpu = it != on_record.end() ? it->second : cpu_model();
    if (session_cpu != cpu)
      throw InputError(fmt::format(
          "{}: session '{}' is measured on {}, the data on {}: pooling it would mix two CPUs",
          o.out, name, session_cpu.empty() ? std::string("an unknown CPU") : session_cpu, cpu));
    names.push_back(name);
  }
  return names;
}

}  // namespace

CollectSummary collect(const CollectOptions& o) {
  if (o.out.empty()) throw UsageError("--out is required");
  if (!o.schedules_from.empty() && (o.recorded || o.cross_session > 0))
    throw UsageError(
        "--schedules-from measures another collection's schedules: not with "
        "--recorded or --cross-session");
  std::error_code unused;
  if (!o.schedules_from.empty() && fs::equivalent(o.schedules_from, o.out, unused))
    throw UsageError("--schedules-from names the --out collection itself (use --recorded)");
  if (o.configs_per_graph < 1) throw UsageError("--configs-per-graph must be at least 1");
  if (o.at_least < 0) throw UsageError("--at-least must not be negative");
  if (o.neighbours < 0 || o.neighbour_parents < 1)
    throw UsageError("--neighbours must not be negative, --neighbour-parents at least 1");
  if (o.neighbours > 0 && o.cross_session > 0)
    throw UsageError(
        "--neighbours measures new schedules: not with --cross-session, which measures only "
        "what is on record");
  if (o.at_least > 0 && (o.recorded || o.cross_session > 0))
    throw UsageError(
        "--at-least samples new schedules: not with --recorded or --cross-session, which measure "
        "only what is on record");
  if (o.passes < 1) throw UsageError("--passes must be at least 1");
  if (o.forks < 1) throw UsageError("--forks must be at least 1");
  if (o.shard_count < 1 || o.shard_index < 0 || o.shard_index >= o.shard_count)
    throw UsageError(
        fmt::format("--shard {}/{}: expected I/N with 0 <= I < N", o.shard_index, o.shard_count));
  std::error_code ec;
  fs::create_directories(o.out, ec);
  if (ec) throw InputError(fmt::format("{}: cannot create: {}", o.out, ec.message()));
  // One CPU per collection: its datasets take only the runtimes measured on the CPU its manifest
  // names. Another CPU may measure a later run against them (--cross-session), nothing else.
  const std::string cpu = data_cpu(o.out);
  if (o.measure && o.cross_session == 0 && cpu != cpu_model())
    throw InputError(fmt::format(
        "{}: measured on {}, and this machine is {}; two CPUs rank schedules differently, so one "
        "collection holds one CPU's runtimes. Collect into another directory, or measure a later "
        "run against this one (--cross-session N)",
        o.out, cpu, cpu_model().empty() ? std::string("an unknown CPU") : cpu_model()));
  // What the datasets read off each measurement: the statistic named, else the collection's own.
  const RunStatistic statistic =
      o.statistic.empty() ? data_statistic(o.out) : parse_run_statistic(o.statistic);
  // The later session this run measures (--cross-session): named, or today's UTC date.
  const std::string measured_session = [&] {
    if (o.cross_session == 0 || !o.session.empty()) return o.session;
    const auto now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
    char date[16];
    std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&now));
    return std::string(date);
  }();
  std::vector<Program> programs;
  for (const auto& in : select_instances(o.pipelines)) programs.push_back(zoo_program(in.name));
  if (o.shard_count > 1 && o.measure) {
    std::vector<double> costs;
    for (const auto& p : programs)
      costs.push_back(
          expected_cost(p.info(), o.configs_per_graph + o.sketches + 1, o.max_run_seconds));
    std::vector<Program> mine;
    for (size_t i : shard_programs(costs, o.shard_index, o.shard_count))
      mine.push_back(programs[i]);
    programs = std::move(mine);
  }
  ResultLog log((fs::path(o.out) / "measurements.jsonl").string());
  // A session to pool that is neither on record nor measured now is refused before measuring.
  sessions_to_pool(o, log, cpu, o.measure ? measured_session : "");
  CollectSummary summary;
  std::vector<std::vector<Schedule>> planned;
  if (!o.schedules_from.empty()) {
    planned = recorded_schedules(o.schedules_from, programs);
  } else {
    for (const auto& p : programs) {
      planned.push_back(sample_schedules(p.info(), o.configs_per_graph, o.seed));
      std::set<std::string> keys;
      for (const auto& s : planned.back()) keys.insert(schedule_key(s));
      for (auto& s : sketch_schedules(p.info(), o.sketches, o.seed)) {
        if (keys.insert(schedule_key(s)).second) planned.back().push_back(std::move(s));
      }
    }
  }
  MeasureOptions mo;
  mo.warmup_runs = o.warmup_runs;
  mo.min_runs = o.min_runs;
  mo.tolerance = o.tolerance;
  mo.exclusive_until_exit = o.strict_lock;
  mo.pin_threads = o.pin_threads;
  mo.steady_heap = o.steady_heap;
  mo.compile_each = o.compile_each;
  mo.check_every_run = o.check_every_run;
  mo.timeout_s = o.timeout_s;
  mo.max_run_seconds = o.max_run_seconds;
  mo.min_run_seconds = o.min_run_seconds;
  mo.lock_path = (fs::path(o.out) / ".measure.lock").string();
  BatchOptions bo;
  bo.measure = mo;
  bo.workers = o.workers;
  bo.threads = o.threads;
  bo.pool = o.pool;
  bo.placement = o.placement;
  if (o.time_budget_min > 0) {
    bo.deadline = std::chrono::steady_clock::now() +
                  std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                      std::chrono::duration<double>(o.time_budget_min * 60));
  }
  bool out_of_time = false;
  std::map<std::string, Outputs> references;  // --check: each program's default outputs
  const auto run = [&](const char* label, std::vector<MeasureJob> jobs) {
    if (o.check || o.check_every_run) {
      for (auto& j : jobs) {
        auto it = references.find(j.program->name());
        if (it == references.end()) {
          const double timeout_s = reference_timeout_s(o.timeout_s);
          it = references
                   .emplace(j.program->name(), default_outputs(*j.program, o.threads, timeout_s))
                   .first;
        }
        j.reference = &it->second;
      }
    }
    const BatchSummary b = measure_batch(log, jobs, bo, label);
    summary.measured += b.measured;
    summary.failed += b.failed;
    summary.skipped += b.skipped;
    out_of_time = out_of_time || b.out_of_time;
  };
  // --forks K: a job's measurement k is timed with K - 1 more processes of its compile, the
  // measurements k + 1 .. k + count - 1 of the schedule (repeat keys).
  const auto with_forks = [](MeasureJob j, const std::string& base, int k, int count) {
    for (int i = 1; i < count; ++i) j.fork_keys.push_back(repeat_key(base, k + i));
    return j;
  };
  // Jobs for the chosen programs' successful first measurements on record, but those in `skip`.
  const auto on_record_jobs = [&](const std::set<std::string>& skip) {
    std::vector<MeasureJob> out;
    const auto on_record = first_pass_by_program(log);
    for (const auto& p : programs) {
      const auto it = on_record.find(p.name());
      if (it == on_record.end()) continue;
      for (size_t i : it->second) {
        const auto& rec = log.records()[i];
        const std::string key = rec.at("key").get<std::string>();
        if (skip.count(key) == 0)
          out.push_back({&p, schedule_from_json(rec.at("schedule")), key, 1, nullptr, "", {}});
      }
    }
    return out;
  };
  std::vector<MeasureJob> first;
  if (o.recorded) {
    // The schedules on record instead of a sample: only repeats are measured.
    first = on_record_jobs({});
  } else {
    for (size_t i = 0; i < programs.size(); ++i) {
      for (const auto& s : planned[i]) {
        const std::string key = measurement_key(programs[i], s);
        first.push_back(with_forks({&programs[i], s, key, 1, nullptr, "", {}}, key, 1, o.forks));
      }
    }
  }
  // Rounds 1..K of repeats of `jobs`: round r measures again every job with fewer than r * F
  // measurements under this run's target (its first one included; F = --forks, 1 by default),
  // as the next repeats on record, up to F of them from one compile. A schedule first measured
  // under this target gets K - 1 rounds of repeats; one first measured under another target
  // (whose runtime then no longer counts: runtime_of_passes) gets K. Each round covers all jobs
  // before the next starts, so one schedule's compiles are apart.
  std::map<const Program*, std::string> targets;
  const auto target_of = [&](const Program* p) -> const std::string& {
    auto it = targets.find(p);
    if (it == targets.end()) it = targets.emplace(p, target_name(*p)).first;
    return it->second;
  };
  const auto repeat = [&](const std::vector<MeasureJob>& jobs) {
    for (int round = 1; round <= o.passes && !out_of_time; ++round) {
      std::vector<MeasureJob> again;
      for (const auto& j : jobs) {
        const nlohmann::json* rec = log.find(j.key);
        if (rec == nullptr || !rec->value("ok", false)) continue;
        const int have = passes_under(log, *rec, MeasuredOn{target_of(j.program), cpu_model()});
        const int want = round * o.forks;
        if (have >= want) continue;
        const int k = static_cast<int>(passes_of(log, *rec).size()) + 1;
        again.push_back(
            with_forks({j.program, j.schedule, repeat_key(j.key, k), 5, nullptr, j.session, {}},
                       j.key, k, std::min(o.forks, want - have)));
      }
      if (!again.empty()) run(fmt::format("pass {}", round).c_str(), again);
    }
  };
  // A cross-session run measures again what is on record, nothing new.
  if (o.measure && o.cross_session == 0) {
    run("measuring", first);
    repeat(first);
  }
  // --at-least N: more of the seeded sample for the programs whose datasets hold fewer than N.
  if (o.measure && o.at_least > 0 && o.cross_session == 0) {
    // How many schedules each program short of N has in its datasets (measured_configs).
    const auto short_programs = [&] {
      const auto ok_first = first_pass_by_program(log);
      std::vector<std::pair<const Program*, int64_t>> out;
      for (const auto& p : programs) {
        const auto it = ok_first.find(p.name());
        const MeasuredOn on{target_of(&p), cpu};
        const int64_t have =
            it == ok_first.end()
                ? 0
                : static_cast<int64_t>(
                      measured_configs(log, it->second, p.info(), on).schedules.size());
        if (have < o.at_least) out.emplace_back(&p, have);
      }
      return out;
    };
    // The schedules an earlier run topped up (on record, not planned) get this run's passes.
    std::set<std::string> planned_keys;
    for (const auto& j : first) planned_keys.insert(j.key);
    repeat(on_record_jobs(planned_keys));
    std::map<std::string, std::set<std::string>> elsewhere;  // tried by --schedules-from's CPU
    if (!o.schedules_from.empty())
      elsewhere = tried_keys(
          ResultLog::read_only((fs::path(o.schedules_from) / "measurements.jsonl").string()));
    for (int round = 1; round <= 3 && !out_of_time; ++round) {
      auto tried = tried_keys(log);
      std::vector<MeasureJob> more;
      for (const auto& [p, have] : short_programs()) {
        std::set<std::string>& keys = tried[p->name()];
        const auto n_tried = static_cast<int64_t>(keys.size());
        const auto others = elsewhere.find(p->name());
        if (others != elsewhere.end()) keys.insert(others->second.begin(), others->second.end());
        const int64_t count = top_up_count(o.at_least - have, have, n_tried, 2 * o.at_least);
        for (auto& s : untried_samples(*p, keys, count, o.seed)) {
          const std::string key = measurement_key(*p, s);
          more.push_back(with_forks({p, std::move(s), key, 1, nullptr, "", {}}, key, 1, o.forks));
        }
      }
      if (more.empty()) break;
      summary.topped_up += static_cast<int64_t>(more.size());
      run(fmt::format("topping up, round {}", round).c_str(), more);
      repeat(more);
    }
    for (const auto& [p, have] : short_programs())
      summary.short_of.push_back(fmt::format("{} ({})", p->name(), have));
  }
  // --neighbours N: schedules one decision away from each program's fastest; then this run's
  // passes for every neighbour on record, the ones measured before included.
  if (o.measure && o.neighbours > 0 && o.cross_session == 0 && !out_of_time) {
    auto tried = tried_keys(log);
    const auto ok_first = first_pass_by_program(log);
    std::vector<MeasureJob> fresh;
    for (const auto& p : programs) {
      const auto it = ok_first.find(p.name());
      for (auto& s : untried_neighbours(log, p, tried[p.name()],
                                        it == ok_first.end() ? std::vector<size_t>{} : it->second,
                                        MeasuredOn{target_of(&p), cpu}, statistic, o.neighbours,
                                        o.neighbour_parents, o.seed)) {
        const std::string key = measurement_key(p, s);
        MeasureJob j = with_forks({&p, std::move(s), key, 1, nullptr, "", {}}, key, 1, o.forks);
        j.origin = "neighbour";
        fresh.push_back(std::move(j));
      }
    }
    summary.neighbours_tried = static_cast<int64_t>(fresh.size());
    run("neighbours", fresh);
    std::vector<MeasureJob> neighbours;
    for (auto& j : on_record_jobs({})) {
      if (log.find(j.key)->value("origin", "") == "neighbour") neighbours.push_back(std::move(j));
    }
    repeat(neighbours);
  }
  const auto measured = first_pass_by_program(log);
  // Second pass (--remeasure): time a seeded sample of the measured schedules again; the tau
  // between the passes bounds what any model can reach on this data.
  if (o.measure && o.remeasure > 0 && o.cross_session == 0 && !out_of_time) {
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
        second.push_back({&p,
                          schedule_from_json(rec.at("schedule")),
                          "remeasure|" + rec.at("key").get<std::string>(),
                          2,
                          nullptr,
                          "",
                          {}});
      }
    }
    run("re-measuring", second);
  }
  // Cross-session (--cross-session N): up to N measured schedules of each program again, the
  // default among them, in this later run.
  if (o.measure && o.cross_session > 0 && !out_of_time) {
    const std::string session = measured_session;
    summary.session = session;
    std::vector<MeasureJob> again;
    for (const auto& p : programs) {
      const auto it = measured.find(p.name());
      if (it == measured.end()) continue;
      // Only schedules measured successfully under this run's target on the data's CPU (the
      // shipped runtimes): another target compiles other code, and its runtimes would not
      // measure noise. Records that do not say their target are taken when none of the
      // program's does.
      const std::string target = target_name(p);
      std::vector<size_t> same, unknown;
      for (size_t i : it->second) {
        const auto& rec = log.records()[i];
        if (!rec.contains("target")) {
          unknown.push_back(i);
        } else if (passes_under(log, rec, MeasuredOn{target, cpu}, /*ok_only=*/true) > 0) {
          same.push_back(i);
        }
      }
      std::vector<size_t> done = same.empty() ? unknown : same;
      std::mt19937_64 rng(o.seed + 7);
      std::shuffle(done.begin(), done.end(), rng);
      const std::string default_key = measurement_key(p, default_schedule(p.info()));
      std::stable_partition(done.begin(), done.end(), [&](size_t i) {
        return log.records()[i].at("key").get<std::string>() == default_key;
      });
      for (size_t i = 0; i < std::min<size_t>(done.size(), static_cast<size_t>(o.cross_session));
           ++i) {
        const auto& rec = log.records()[done[i]];
        const std::string key = session_key(session, rec.at("key").get<std::string>());
        again.push_back(
            with_forks({&p, schedule_from_json(rec.at("schedule")), key, 4, nullptr, session, {}},
                       key, 1, o.forks));
      }
    }
    run("cross-session", again);
    repeat(again);
  }
  const NoiseCeiling noise = noise_ceiling(log, statistic);
  summary.remeasure_tau = noise.tau;
  summary.remeasured_pairs = noise.pairs;
  // Datasets from every successful measurement on record (this run's and earlier ones'), for
  // every program of the zoo that has its default schedule measured.
  summary.pooled_sessions = sessions_to_pool(o, log, cpu, "");
  const std::vector<InstanceName> all = zoo_instances();
  Progress writing("writing datasets", static_cast<int64_t>(all.size()));
  int64_t k = 0;
  for (const auto& in : all) {
    writing.update(++k, in.name);
    const auto it = measured.find(in.name);
    if (it == measured.end()) continue;
    const Program p = zoo_program(in.name);
    const Measured m = measured_configs(log, it->second, p.info(), MeasuredOn{target_name(p), cpu},
                                        statistic, summary.pooled_sessions);
    summary.pooled_schedules += m.pooled;
    summary.left_out_other_cpu += m.left_out;
    summary.left_out_failed_check += m.failed_check;
    if (m.normalizer_ns <= 0 || m.schedules.size() < 2) continue;  // not measured (yet)
    write_datasets(o.out, in, p, m, o.ast, summary);
  }
  writing.finish();
  write_manifest(o, mo, log, summary, statistic);
  if (out_of_time) fmt::print(stderr, "time budget reached; run again to continue\n");
  return summary;
}

}  // namespace tcost::halide
