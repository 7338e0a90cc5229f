#include "halide/manifest.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "core/error.h"
#include "halide/datasets.h"
#include "halide/zoo.h"

namespace fs = std::filesystem;

namespace tcost::halide {
namespace {

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
  m["cpu"] = cpu_model();
  while (std::getline(cpu, line)) {
    const auto value = [&] { return line.substr(line.find(':') + 2); };
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

}  // namespace

const std::string& boot_id() {
  static const std::string id = [] {
    std::ifstream in("/proc/sys/kernel/random/boot_id");
    std::string line;
    std::getline(in, line);
    return line;
  }();
  return id;
}

const std::string& cpu_model() {
  static const std::string model = [] {
    std::ifstream cpu("/proc/cpuinfo");
    std::string line;
    while (std::getline(cpu, line)) {
      if (line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos)
        return line.substr(std::min(line.size(), line.find(':') + 2));
    }
    return std::string();
  }();
  return model;
}

namespace {

// OUT/manifest.json as parsed (null when there is none; a discarded value when it is not JSON).
nlohmann::json manifest_on_file(const std::string& out) {
  const fs::path path = fs::path(out) / "manifest.json";
  if (!fs::exists(path)) return nlohmann::json();
  std::ifstream in(path);
  return nlohmann::json::parse(in, nullptr, false);
}

// The CPU a manifest names, or this machine's when it names none (data_cpu).
std::string cpu_of(const nlohmann::json& manifest) {
  if (manifest.is_object() && manifest.contains("machine") && manifest["machine"].is_object()) {
    const std::string cpu = manifest["machine"].value("cpu", "");
    if (!cpu.empty()) return cpu;
  }
  return cpu_model();
}

}  // namespace

std::string data_cpu(const std::string& out) { return cpu_of(manifest_on_file(out)); }

RunStatistic data_statistic(const std::string& out) {
  const nlohmann::json m = manifest_on_file(out);
  if (!m.is_object() || !m.contains("protocol") || !m["protocol"].is_object())
    return RunStatistic::best_run;
  const auto& s = m["protocol"].value("statistic", nlohmann::json());
  if (s.is_null()) return RunStatistic::best_run;
  if (!s.is_string())
    throw InputError(fmt::format("{}/manifest.json: protocol.statistic is not a string", out));
  try {
    return parse_run_statistic(s.get<std::string>());
  } catch (const InputError& e) {
    throw InputError(fmt::format("{}/manifest.json: {}", out, e.what()));
  }
}

std::vector<std::string> data_pooled_sessions(const std::string& out) {
  const nlohmann::json m = manifest_on_file(out);
  if (!m.is_object() || !m.contains("protocol") || !m["protocol"].is_object()) return {};
  const auto& s = m["protocol"].value("pooled_sessions", nlohmann::json());
  if (s.is_null()) return {};
  const auto refuse = [&] {
    return InputError(
        fmt::format("{}/manifest.json: protocol.pooled_sessions is not a list of names", out));
  };
  if (!s.is_array()) throw refuse();
  std::vector<std::string> names;
  for (const auto& name : s) {
    if (!name.is_string()) throw refuse();
    names.push_back(name.get<std::string>());
  }
  return names;
}

void write_manifest(const CollectOptions& o, const MeasureOptions& mo, const ResultLog& log,
                    const CollectSummary& summary, RunStatistic statistic) {
  nlohmann::json counts;
  int64_t failed_timeout = 0, failed_crash = 0, failed_other = 0, first_pass = 0;
  int64_t neighbours_tried = 0, neighbours_kept = 0;  // collect --neighbours
  std::map<std::string, int64_t> ok_by_program, tried_by_program;
  // Schedules by how many successful measurements they have under this run's target on the
  // data's CPU (collect --passes, --recorded): the datasets take the best of those, and leave
  // out the schedules with none (counts per split are the datasets').
  const std::string target = jit_target_name();
  // The manifest on file, if any: a cross-session run and a rewrite keep what it says of the
  // measurements, and it names the data's CPU.
  const nlohmann::json before = manifest_on_file(o.out);
  const std::string cpu = cpu_of(before);
  std::map<std::string, int64_t> by_passes;
  for (const auto& rec : log.records()) {
    if (rec.value("pass", 1) != 1) continue;
    ++first_pass;
    ++tried_by_program[rec.value("instance", "")];
    const bool neighbour = rec.value("origin", "") == "neighbour";
    neighbours_tried += neighbour ? 1 : 0;
    if (rec.value("ok", false)) {
      const int ok = passes_under(log, rec, MeasuredOn{target, cpu}, /*ok_only=*/true);
      ++by_passes[std::to_string(ok)];
      // the configurations the datasets hold: none that a pass found unsound
      if (ok > 0 && !any_pass_failed_check(log, rec)) {
        ++ok_by_program[rec.value("instance", "")];
        neighbours_kept += neighbour ? 1 : 0;
      }
      continue;
    }
    const std::string kind = failure_kind(rec.value("error", ""));
    (kind == "timeout"               ? failed_timeout
     : kind.rfind("crashed", 0) == 0 ? failed_crash
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
  counts["schedules_by_measurements_on_data_cpu"] = by_passes;
  counts["left_out_not_on_data_cpu"] = summary.left_out_other_cpu;
  counts["left_out_failed_check"] = summary.left_out_failed_check;
  counts["schedules_pooled_with_later_sessions"] = summary.pooled_schedules;
  counts["neighbour_schedules"] = {{"tried", neighbours_tried}, {"in_datasets", neighbours_kept}};
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
        {"lock_until_exit", mo.exclusive_until_exit},
        {"pin_threads", mo.pin_threads},
        {"steady_heap", mo.steady_heap},
        {"check_every_run", mo.check_every_run},
        {"thread_pool", thread_pool_name(o.pool)},
        {"buffers", placement_name(o.placement)},
        {"passes", o.passes},
        {"forks", o.forks},
        {"compile_each", mo.compile_each},
        {"warmup_runs", mo.warmup_runs},
        {"min_runs", mo.min_runs},
        {"max_runs", mo.max_runs},
        {"stop_when_third_best_within", mo.tolerance},
        {"max_run_seconds", mo.max_run_seconds},
        {"timeout_seconds", o.timeout_s},
        {"statistic", run_statistic_label(statistic)},
        {"seed", o.seed},
        {"sketches_per_program", o.sketches},
        {"schedules_tried_per_program", {{"min", tried_min}, {"max", tried_max}}}}},
      {"counts", counts},
  };
  // Absent means 0 (timing stops on the run count and agreement alone), as in the collections
  // measured before the option existed.
  if (mo.min_run_seconds > 0) m["protocol"]["min_run_seconds"] = mo.min_run_seconds;
  if (o.shard_count > 1)
    m["protocol"]["shard"] = fmt::format("{}/{}", o.shard_index, o.shard_count);
  if (!o.schedules_from.empty()) m["protocol"]["schedules_from"] = o.schedules_from;
  if (o.at_least > 0) m["protocol"]["at_least_per_program"] = o.at_least;
  if (o.neighbours > 0)
    m["protocol"]["neighbours"] = {{"per_program", o.neighbours}, {"parents", o.neighbour_parents}};
  const nlohmann::json run_protocol = m["protocol"];  // this run's, whatever is kept below
  const NoiseCeiling n = noise_ceiling(log, statistic);
  m["noise_ceiling"] = {
      {"kendall_tau", std::isnan(n.tau) ? nlohmann::json() : nlohmann::json(n.tau)},
      {"pairs", n.pairs},
      {"programs", n.programs},
      {"method",
       "mean over programs of Kendall tau-b between the first and a second measurement of a "
       "seeded sample of its schedules (tcost collect --remeasure)"}};
  // The noise block: the same-run ceiling above, and the cross-session one when a later run
  // measured schedules again (tcost collect --cross-session).
  const auto num = [](double v) { return std::isnan(v) ? nlohmann::json() : nlohmann::json(v); };
  m["noise"] = {
      {"same_run_tau", num(n.tau)},
      {"same_run_schedules_per_program",
       n.programs > 0 ? static_cast<double>(n.pairs) / static_cast<double>(n.programs) : 0.0}};
  // One later run's figures (tcost collect --cross-session).
  const auto session_block = [&](const CrossSession& c) {
    nlohmann::json families;
    for (const auto& [f, t] : c.tau_by_family) families[f] = num(t);
    return nlohmann::json{{"session", c.session},
                          {"cpu", c.cpu},
                          {"same_cpu_as_data", c.cpu == cpu},
                          {"tau", num(c.tau)},
                          {"programs", c.programs},
                          {"pairs", c.pairs},
                          {"fewest_schedules_per_program", c.min_schedules_per_program},
                          {"tau_by_family", families},
                          {"tau_median_statistic", num(c.tau_median)},
                          {"ratio_new_over_old",
                           {{"p10", num(c.ratio_p10)},
                            {"p50", num(c.ratio_p50)},
                            {"p90", num(c.ratio_p90)},
                            {"p90_over_p10", num(c.ratio_p90 / c.ratio_p10)}}},
                          {"ratio_within_program",
                           {{"p10", num(c.within_p10)},
                            {"p90", num(c.within_p90)},
                            {"p90_over_p10", num(c.within_p90 / c.within_p10)}}},
                          {"seconds_per_schedule", c.seconds_per_schedule}};
  };
  // The figures stated are those of the later run on the data's CPU that measured the most
  // programs, the latest of those (of all runs when none ran on the data's CPU: a run on another
  // CPU measures the change of CPU too), so that a session over a few programs does not stand for
  // the whole collection. Every run is listed.
  std::map<std::string, CrossSession> by_session;
  CrossSession c;
  for (const auto& [session, session_cpu] : cross_sessions(log)) {
    const CrossSession& s = by_session[session] = cross_session_noise(log, cpu, session, statistic);
    const bool on_cpu = session_cpu == cpu, chosen_on_cpu = !c.session.empty() && c.cpu == cpu;
    if (c.session.empty() || (on_cpu && !chosen_on_cpu) ||
        (on_cpu == chosen_on_cpu && s.programs >= c.programs))
      c = s;
  }
  if (!c.session.empty()) {
    m["noise"]["cross_session_tau"] = num(c.tau);
    m["noise"]["schedules_per_program"] =
        c.programs > 0 ? static_cast<double>(c.pairs) / static_cast<double>(c.programs) : 0.0;
    m["noise"]["cross_session"] = session_block(c);
    m["noise"]["cross_session"]["method"] =
        "for each program, Kendall tau-b between a schedule's shipped runtime (the minimum of "
        "protocol.statistic over its measurements on the data's CPU under the session's target) "
        "and the same over its measurements in a separate, independent run (tcost collect "
        "--cross-session N --passes P); mean over programs (and per family); ratios are new/old "
        "runtimes; ratio_within_program divides each by its program's median ratio (a shift of "
        "the whole program taken out)";
    nlohmann::json runs = nlohmann::json::object();
    for (const auto& [session, figures] : by_session) runs[session] = session_block(figures);
    m["noise"]["cross_session_runs"] = runs;
  }
  const std::string path = (fs::path(o.out) / "manifest.json").string();
  const auto keep = [&](std::initializer_list<const char*> keys) {
    for (const char* key : keys) {
      if (before.contains(key)) m[key] = before[key];
    }
  };
  if (o.measure && o.cross_session > 0 && !before.is_null() &&
      m["noise"].contains("cross_session")) {
    // A cross-session run measured nothing new: the data's machine, target and protocol stay
    // those of its measurements; this run's own are recorded with its noise figures.
    if (before.is_object())
      keep({"written", "machine", "halide", "protocol", "datasets_rewritten"});
  } else if (!o.measure && before.is_object()) {
    // Rewritten datasets of earlier measurements: the machine, Halide target and protocol are
    // the ones they were measured under.
    keep({"written", "machine", "halide", "protocol"});
    m["datasets_rewritten"] = {
        {"date", date},
        {"target_now", jit_target_name()},
        {"note",
         "datasets and features rewritten from measurements.jsonl (tcost collect "
         "--rewrite); the runtimes are those measured at 'written'"}};
  }
  // The datasets were written with this run's statistic and pooled sessions, whatever protocol
  // was kept above.
  if (m["protocol"].is_object()) {
    m["protocol"]["statistic"] = run_statistic_label(statistic);
    m["protocol"]["pooled_sessions"] = summary.pooled_sessions;
  }
  // Each later run's own facts (date, target, CPU, protocol): this run's when it was one, the
  // others' as the manifest before stated them.
  if (m["noise"].contains("cross_session_runs")) {
    const auto old_noise =
        before.is_object() ? before.value("noise", nlohmann::json::object()) : nlohmann::json();
    const auto old_run = [&](const std::string& session) {
      const auto runs = old_noise.value("cross_session_runs", nlohmann::json::object());
      if (runs.contains(session) && runs[session].contains("run")) return runs[session]["run"];
      const auto latest = old_noise.value("cross_session", nlohmann::json::object());
      return latest.value("session", "") == session && latest.contains("run") ? latest["run"]
                                                                              : nlohmann::json();
    };
    for (auto& [session, block] : m["noise"]["cross_session_runs"].items()) {
      nlohmann::json run = old_run(session);
      if (o.measure && o.cross_session > 0 && session == summary.session)
        run = {{"date", date},
               {"target", jit_target_name()},
               {"cpu", cpu_model()},
               {"protocol", run_protocol}};
      if (!run.is_null()) block["run"] = run;
    }
    const auto& chosen = m["noise"]["cross_session_runs"][c.session];
    if (chosen.contains("run")) m["noise"]["cross_session"]["run"] = chosen["run"];
  }
  {
    std::ofstream out(path + ".tmp", std::ios::trunc);
    out << m.dump(2) << "\n";
    if (!out) throw InputError(fmt::format("{}: cannot write", path));
  }
  fs::rename(path + ".tmp", path);
}

}  // namespace tcost::halide
