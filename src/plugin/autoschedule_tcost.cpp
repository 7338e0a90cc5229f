// libautoschedule_tcost.so: tcost as a Halide 14 autoscheduler plugin, named "TCost". A thin
// face over the tuning layer: the generator's pipeline becomes a Program (its description
// derived from the IR and the estimates), the cost model picks a schedule (after measuring up
// to TCOST_BUDGET candidates in forked children, each checked against the default schedule's
// outputs), the schedule is applied to the pipeline's Funcs and written as C++ for
// `-e schedule`. Halide 14 passes a plugin only MachineParams: the rest comes from the
// environment (docs/plugin.md):
//   TCOST_MODEL        checkpoint (default: the model shipped in the repository)
//   TCOST_BUDGET       measurements, default 64; 0: the model's pick, nothing measured
//   TCOST_TIME_BUDGET  search minutes, default 5
//   TCOST_SEED         default 0
//   TCOST_FINALISTS    the fastest schedules measured once more before the choice (tcost tune
//                      --finalists)
//   TCOST_THREADS      Halide threads when measuring (default: MachineParams' parallelism)
//   TCOST_LOG          tuning records; a pipeline with a checked schedule on record gets it
//                      without a search
//   TCOST_COMPARE      methods to compare first on this pipeline, as tcost tune --compare
//                      does (default,random,li2018,mullapudi2016,adams2019,adams2019-greedy,
//                      tcost), every one measured by the same protocol; with
//   TCOST_COMPARE_OUT  the JSON file the comparison is written to (tcost tune --json's form)
//   TCOST_CONFIRM      confirmation rounds of the comparison (tcost tune --confirm), default 3
#include <Halide.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>

#include <fmt/format.h>

#include "core/error.h"
#include "halide/program_halide.h"
#include "train/cost_model.h"
#include "tune/compare.h"
#include "tune/tuner.h"

#ifndef TCOST_DEFAULT_MODEL
#define TCOST_DEFAULT_MODEL ""
#endif

namespace tcost::plugin {
namespace {

using namespace Halide;

std::string env(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::string(v) : fallback;
}

template <typename T>
T env_number(const char* name, T fallback) {
  const std::string v = env(name, "");
  if (v.empty()) return fallback;
  try {
    size_t used = 0;
    const double d = std::stod(v, &used);
    if (used != v.size()) throw std::invalid_argument(v);
    return static_cast<T>(d);
  } catch (const std::exception&) {
    throw UsageError(fmt::format("{}: expected a number, found '{}'", name, v));
  }
}

// A yes/no setting: unset, empty or "0" is no, "1" is yes, anything else a usage error.
bool env_flag(const char* name) {
  const std::string v = env(name, "0");
  if (v != "0" && v != "1")
    throw UsageError(fmt::format("{}: expected 0 or 1, found '{}'", name, v));
  return v == "1";
}

// A name for the pipeline that changes when it does: its outputs and a hash of the derived
// description (so that a tuning log never mixes two pipelines of the same output name).
std::string pipeline_name(const halide::ProgramInfo& info) {
  std::string text, outs;
  for (const auto& n : info.nodes) {
    text += fmt::format("{}:{}:{}:{};", n.name, n.opcode, n.type, fmt::join(n.dims, "x"));
    if (n.is_output) outs += (outs.empty() ? "" : "+") + n.name;
  }
  return fmt::format("{}-{:08x}", outs, std::hash<std::string>{}(text)&0xffffffffu);
}

// Why every candidate failed, when they failed alike: the most common error, with a hint for
// the illegal-instruction case of Halide 14's host target on AMD EPYC machines.
std::string explain(const std::string& error, const Target& target) {
  std::string msg = error;
  if (error.find("signal 4") != std::string::npos) {
    msg += fmt::format(
        ". Signal 4 is an illegal instruction: the target {} may use instructions this CPU "
        "does not have (Halide 14's host target includes avx512_sapphirerapids, whose "
        "AVX512-FP16 code AMD EPYC CPUs cannot run); compile for host-avx512_sapphirerapids "
        "or name the target's features explicitly",
        target.to_string());
  }
  return msg;
}

// Removes a temporary tuning log and its lock file however the search ends.
struct TemporaryLog {
  std::string path;  // empty: nothing to remove
  explicit TemporaryLog(std::string p) : path(std::move(p)) {}
  ~TemporaryLog() {
    if (path.empty()) return;
    std::error_code ec;
    std::filesystem::remove(path, ec);
    std::filesystem::remove(path + ".lock", ec);
  }
};

// TCOST_COMPARE: the methods side by side on this pipeline, written to TCOST_COMPARE_OUT. The
// tcost method's records go to `log` (TCOST_LOG), so that the search after it finds its best
// schedule on record instead of searching again.
void compare_on_pipeline(const halide::Program& program, const tune::TuneOptions& tune_options,
                         const MachineParams& params, const std::string& model_path,
                         const std::string& prerank_path) {
  const std::string methods = env("TCOST_COMPARE", "");
  if (methods.empty()) return;
  const std::string out_path = env("TCOST_COMPARE_OUT", "");
  if (out_path.empty()) throw UsageError("TCOST_COMPARE needs TCOST_COMPARE_OUT (a JSON file)");
  tune::CompareOptions co;
  co.methods = tune::parse_methods(methods, "TCOST_COMPARE");
  co.tune = tune_options;
  co.plugin_dir = TCOST_HALIDE_PLUGIN_DIR;
  co.llc_bytes = params.last_level_cache_size;
  co.confirm = env_number<int>("TCOST_CONFIRM", co.confirm);
  if (co.confirm < 0 || co.confirm > 100)
    throw UsageError(fmt::format("TCOST_CONFIRM: {} is not in 0..100", co.confirm));
  std::unique_ptr<train::CostModel> model, prerank;
  if (std::find(co.methods.begin(), co.methods.end(), "tcost") != co.methods.end()) {
    if (co.tune.log.empty())
      throw UsageError("TCOST_COMPARE with tcost needs TCOST_LOG (the search's records)");
    model = train::load_cost_model(model_path);
    if (!prerank_path.empty()) prerank = train::load_cost_model(prerank_path);
  }
  const auto rows = tune::compare_methods(program, model.get(), co, prerank.get());
  nlohmann::json methods_json = nlohmann::json::array();
  for (const auto& m : rows) methods_json.push_back(tune::to_json(m));
  const nlohmann::json out = {
      {"programs", {{{"program", program.name()}, {"methods", methods_json}}}}};
  std::ofstream f(out_path);
  f << out.dump() << "\n";
  if (!f) throw InputError(fmt::format("TCOST_COMPARE_OUT: cannot write {}", out_path));
}

void autoschedule(const Pipeline& pipeline, const Target& target, const MachineParams& params,
                  AutoSchedulerResults* results) {
  try {
    halide::PipelineSource src;
    src.outputs = pipeline.outputs();
    src.name = "pipeline";
    halide::Program program = halide::make_program(src);  // names a missing estimate
    program.impl().info.instance = pipeline_name(program.info());
    program.impl().info.family = program.info().instance;
    // Measured as it will run: the generator's target, JIT-compiled, with its bounds checks
    // (unless the target turns them off) on inputs of exactly the estimated size: a schedule
    // that reads outside them fails instead of being chosen.
    program.impl().target = target.with_feature(Target::JIT);
    program.impl().exact_inputs = true;

    const std::string log = env("TCOST_LOG", "");
    const std::string model_path = env("TCOST_MODEL", TCOST_DEFAULT_MODEL);
    // A model that reads syntax trees needs a layout model to rank the candidates first.
    const std::string prerank_path = env("TCOST_PRERANK", "");
    tune::TuneOptions o;
    o.budget = env_number<int>("TCOST_BUDGET", 64);
    o.time_budget_min = env_number<double>("TCOST_TIME_BUDGET", 5.0);
    o.seed = env_number<uint64_t>("TCOST_SEED", 0);
    o.finalists = env_number<int>("TCOST_FINALISTS", o.finalists);
    if (o.finalists < 1 || o.finalists > 64)
      throw UsageError(fmt::format("TCOST_FINALISTS: {} is not in 1..64", o.finalists));
    o.threads = env_number<int>("TCOST_THREADS", std::max(1, params.parallelism));
    // The measuring protocol (tcost tune --pin-threads, --arena; docs/tune.md).
    o.pin_threads = env_flag("TCOST_PIN_THREADS");
    if (env_flag("TCOST_ARENA")) o.placement = halide::Placement::arena;
    o.quiet = true;
    if (o.budget < 0) throw UsageError("TCOST_BUDGET must be 0 or more");
    const bool have_model = !model_path.empty() && std::filesystem::exists(model_path);
    {
      tune::TuneOptions co = o;
      co.log = log;
      compare_on_pipeline(program, co, params, model_path, prerank_path);
    }
    halide::Schedule chosen;
    std::string how;
    if (const auto known = tune::best_on_record(program, log)) {
      chosen = known->first;
      how = fmt::format("best on record in {} ({:.3f} ms), no search", log, known->second * 1e-6);
    } else {
      if (!have_model) {
        throw InputError(
            fmt::format("TCOST_MODEL: no cost model at '{}' (set TCOST_MODEL to a checkpoint, see "
                        "docs/plugin.md)",
                        model_path));
      }
      auto model = train::load_cost_model(model_path);
      std::unique_ptr<train::CostModel> prerank;
      if (!prerank_path.empty()) prerank = train::load_cost_model(prerank_path);
      if (o.budget == 0) {
        chosen =
            tune::pick_by_model(program, *model, o.candidates, o.seed, prerank.get(), o.rerank);
        how = "the model's pick, nothing measured (TCOST_BUDGET=0)";
      } else {
        // Without TCOST_LOG the records go to a temporary log, removed afterwards.
        const bool temporary = log.empty();
        o.log = temporary ? (std::filesystem::temp_directory_path() /
                             fmt::format("tcost-plugin-{}.jsonl", ::getpid()))
                                .string()
                          : log;
        const TemporaryLog cleanup(temporary ? o.log : "");
        const tune::TuneResult r = tune::tune(program, model.get(), o, prerank.get());
        if (r.best_ns <= 0) {
          throw InputError(fmt::format("all {} measured schedules failed; most often: {}",
                                       r.measured, r.common_error));
        }
        chosen = r.best;
        how = fmt::format("{} measured ({} failed) in {:.1f} s, best {:.3f} ms, default {:.3f} ms",
                          r.measured, r.failed, r.search_s, r.best_ns * 1e-6, r.default_ns * 1e-6);
      }
    }
    halide::apply_schedule(program, chosen);
    if (results != nullptr) {
      results->scheduler_name = "TCost";
      results->schedule_source = "// " + how + "\n" + halide::schedule_source(program, chosen);
    }
    fmt::print(stderr, "TCost: {}: {}\n", program.name(), how);
  } catch (const InputError& e) {
    throw CompileError(fmt::format("TCost autoscheduler: {}", explain(e.what(), target)));
  } catch (const UsageError& e) {
    throw CompileError(fmt::format("TCost autoscheduler: {}", e.what()));
  }
}

struct Register {
  Register() { Pipeline::add_autoscheduler("TCost", autoschedule); }
} register_tcost;

}  // namespace
}  // namespace tcost::plugin
