#include "tune/tuner.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <limits>
#include <map>
#include <numeric>
#include <random>
#include <set>

#include <fmt/format.h>

#include "core/error.h"
#include "halide/datasets.h"
#include "halide/featurize.h"
#include "halide/measure_batch.h"
#include "halide/result_log.h"
#include "tune/neighbours.h"

namespace tcost::tune {
namespace {

using Clock = std::chrono::steady_clock;
using halide::Schedule;

// Rounds whose exploration measures the model's favourite sketches instead of random picks.
constexpr int kSketchRounds = 3;

// `ids` sorted by ascending cost, stably; cost[i] is the cost of ids[i].
std::vector<size_t> by_cost(const std::vector<double>& cost, const std::vector<size_t>& ids) {
  std::vector<size_t> pos(ids.size());
  std::iota(pos.begin(), pos.end(), 0);
  std::stable_sort(pos.begin(), pos.end(), [&](size_t a, size_t b) { return cost[a] < cost[b]; });
  std::vector<size_t> out;
  for (size_t i : pos) out.push_back(ids[i]);
  return out;
}

// Syntax trees of one program's schedules, each lowered once: lowering takes 30-70 ms, and the
// two-stage search lowers its best candidates every round and its measurements for every refit.
class TreeCache {
 public:
  explicit TreeCache(const halide::Program& p) : p_(p) {}

  // The trees of `schedules` with `layout`'s stage encodings and runtimes (halide::ast_set).
  // InputError when Halide will not lower one.
  AstSet set(const std::vector<Schedule>& schedules, const Graph& layout) {
    std::vector<const halide::AstTree*> trees;
    for (const Schedule& s : schedules) {
      const std::string key = halide::measurement_key(p_, s);
      auto it = trees_.find(key);
      if (it == trees_.end()) it = trees_.emplace(key, halide::lower_ast(p_, s)).first;
      trees.push_back(&it->second);
    }
    return halide::ast_set(p_.info(), trees, layout);
  }

  // Drops the trees of schedules not in `keys` (measurement keys).
  void retain(const std::set<std::string>& keys) {
    for (auto it = trees_.begin(); it != trees_.end();)
      it = keys.count(it->first) ? std::next(it) : trees_.erase(it);
  }

 private:
  const halide::Program& p_;
  std::map<std::string, halide::AstTree> trees_;  // by measurement key
};

// The order in which to try `pool`: by `model` alone when `prerank` is null; else in two
// stages, by `prerank` (a layout model), then the best `rerank` of that order lowered to syntax
// trees and ordered by both models, their standardised costs over those candidates averaged
// (both refit on the program's measurements), the rest behind them in prerank's order. A candidate
// Halide will not lower (the sampler's are valid by construction, so that would be a bug) leaves
// the first stage's order, said on stderr. `lowered` keeps the trees of the program's schedules.
std::vector<size_t> rank_pool(const halide::Program& p, const std::vector<Schedule>& pool,
                              train::CostModel& model, train::CostModel* prerank, int rerank,
                              TreeCache& lowered) {
  const Graph g = halide::layout_graph(p.info(), pool, {});
  std::vector<size_t> order(pool.size());
  std::iota(order.begin(), order.end(), 0);
  const std::vector<double> first = (prerank != nullptr ? *prerank : model).score(g);
  order = by_cost(first, order);
  if (prerank == nullptr) return order;
  const size_t top = std::min(order.size(), static_cast<size_t>(std::max(1, rerank)));
  std::vector<size_t> ids(order.begin(), order.begin() + static_cast<long>(top));
  std::vector<Schedule> best;
  std::vector<double> layout_cost;
  for (size_t i : ids) {
    best.push_back(pool[i]);
    layout_cost.push_back(first[i]);
  }
  try {
    const Graph gb = halide::layout_graph(p.info(), best, {});
    const AstSet trees = lowered.set(best, gb);
    std::vector<double> cost = train::standardised(model.score(train::Views{&gb, &trees}));
    const std::vector<double> z = train::standardised(layout_cost);
    for (size_t k = 0; k < cost.size(); ++k) cost[k] += z[k];
    ids = by_cost(cost, ids);
  } catch (const InputError& e) {
    fmt::print(stderr, "{}: re-ranking skipped: {}\n", p.name(), e.what());
    return order;
  }
  std::copy(ids.begin(), ids.end(), order.begin());
  return order;
}

// What is known about one schedule of the program.
struct Known {
  Schedule schedule;
  bool ok = false;
  double ns = 0;
  // finish() has its verification: measured now, or found in the log under its key.
  bool verified = false;
  double final_ns = 0;  // a finalist's second measurement (0: none)
  bool finalist() const { return final_ns > 0; }
  // What the choice among finalists compares: the slower of a finalist's two measurements (for
  // a schedule measured once, that one).
  double choice_ns() const { return std::max(ns, final_ns); }
  double fastest_ns() const { return finalist() ? std::min(ns, final_ns) : ns; }
};

// The log key of a schedule's verification (Search::finish).
std::string verification_key(const halide::Program& p, const Schedule& s) {
  return "verify-bounds|" + halide::measurement_key(p, s);
}

// The log key of a finalist's second measurement (Search::choice_order).
std::string finalist_key(const halide::Program& p, const Schedule& s) {
  return "final|" + halide::measurement_key(p, s);
}

class Search {
 public:
  Search(const halide::Program& p, train::CostModel* model, train::CostModel* prerank,
         const TuneOptions& o)
      : p_(p),
        model_(model),
        prerank_(prerank),
        o_(o),
        log_(o.log),
        rng_(o.seed ^ 0x7C05u),
        lowered_(p) {
    start_ = Clock::now();
    if (o.time_budget_min > 0) {
      deadline_ = start_ + std::chrono::duration_cast<Clock::duration>(
                               std::chrono::duration<double>(o.time_budget_min * 60));
    }
    batch_.measure.timeout_s = o.timeout_s;
    batch_.measure.max_run_seconds = o.max_run_seconds;
    batch_.measure.lock_path = o.log + ".lock";
    batch_.measure.pin_threads = o.pin_threads;
    batch_.placement = o.placement;
    batch_.workers = o.workers;
    batch_.threads = o.threads;
    batch_.deadline = deadline_;
  }

  TuneResult run() {
    compute_reference();
    read_log();
    const Schedule def = halide::default_schedule(p_.info());
    measure({def});
    const auto d = known_.find(halide::measurement_key(p_, def));
    if (d == known_.end() || !d->second.ok) {
      throw InputError(fmt::format("{}: the default schedule failed to run: {}", p_.name(),
                                   d == known_.end() ? "not measured" : error_of(d->first)));
    }
    result_.default_ns = d->second.ns;
    int round = 0;
    // The budget counts what is on record for this program too: a rerun with the same log
    // resumes, it does not start over.
    while (result_.measured + result_.reused < o_.budget && Clock::now() < deadline_) {
      const std::vector<Schedule> chosen = choose(round++);
      if (chosen.empty()) break;  // the space is exhausted
      measure(chosen);
      if (model_ != nullptr && o_.refit) refit();
      if (!o_.quiet) {
        fmt::print(stderr, "{}: {} measured, best {:.3f} ms ({:.1f} s)\n", p_.name(),
                   result_.measured, best_ns() * 1e-6, seconds());
      }
    }
    finish();
    return result_;
  }

 private:
  double seconds() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

  double best_ns() const {
    double best = std::numeric_limits<double>::infinity();
    for (const auto& [key, k] : known_) {
      if (k.ok) best = std::min(best, k.ns);
    }
    return best;
  }

  std::string error_of(const std::string& key) const {
    const nlohmann::json* rec = log_.find(key);
    return rec != nullptr ? rec->value("error", "") : "";
  }

  void compute_reference() {
    if (o_.reference == nullptr)
      o_.reference = std::make_shared<const halide::Outputs>(reference_outputs(p_, o_));
  }

  // Schedules of this program already in the log (an earlier tuning or collection).
  void read_log() {
    for (const auto& rec : log_.records()) {
      if (rec.value("instance", "") != p_.name() || rec.value("pass", 1) != 1) continue;
      try {
        Schedule s = halide::schedule_from_json(rec.at("schedule"));
        halide::check_schedule(p_.info(), s);
        Known k{std::move(s), rec.value("ok", false), rec.value("best_ns", 0.0)};
        known_[rec.at("key").get<std::string>()] = std::move(k);
        ++result_.reused;
      } catch (const std::exception&) {
        // a record of another schedule space or a stale program: not reused
      }
    }
  }

  void measure(const std::vector<Schedule>& schedules) {
    std::vector<halide::MeasureJob> jobs;
    for (const auto& s : schedules) {
      const std::string key = halide::measurement_key(p_, s);
      if (known_.count(key)) continue;
      jobs.push_back({&p_, s, key, 1, o_.reference.get(), "", {}});
    }
    const size_t before = log_.records().size();
    const halide::BatchSummary b = halide::measure_batch(log_, jobs, batch_, "tuning");
    (void)b;
    for (size_t i = before; i < log_.records().size(); ++i) {
      const auto& rec = log_.records()[i];
      Known k{halide::schedule_from_json(rec.at("schedule")), rec.value("ok", false),
              rec.value("best_ns", 0.0)};
      known_[rec.at("key").get<std::string>()] = k;
      ++result_.measured;
      if (!k.ok) {
        ++result_.failed;
        const int n = ++errors_[rec.value("error", "")];
        if (n > errors_[result_.common_error]) result_.common_error = rec.value("error", "");
      }
      result_.best_after.push_back(best_ns());
    }
  }

  // The best measured schedules, fastest first.
  std::vector<const Known*> ranked(size_t n) const {
    std::vector<const Known*> out;
    for (const auto& [key, k] : known_) {
      if (k.ok) out.push_back(&k);
    }
    std::sort(out.begin(), out.end(), [](const Known* a, const Known* b) { return a->ns < b->ns; });
    if (out.size() > n) out.resize(n);
    return out;
  }

  // One round's schedules to measure.
  std::vector<Schedule> choose(int round) {
    const int want = std::min(o_.per_round, o_.budget - result_.measured - result_.reused);
    if (want <= 0) return {};
    const auto samples = halide::sample_schedules(p_.info(), model_ ? o_.candidates / 2 : 4 * want,
                                                  o_.seed * 7919 + static_cast<uint64_t>(round));
    std::vector<Schedule> pool;
    std::set<std::string> seen;
    // Whether `s` joined the pool (it is neither measured nor already there).
    const auto add = [&](const Schedule& s) {
      const std::string key = halide::measurement_key(p_, s);
      if (known_.count(key) || !seen.insert(key).second) return false;
      pool.push_back(s);
      return true;
    };
    for (size_t i = 1; i < samples.size(); ++i) add(samples[i]);  // [0] is the default
    // Sketches: the structure of hand-written schedules with drawn factors.
    std::set<size_t> sketched;
    if (model_ != nullptr) {
      for (const Schedule& s : halide::sketch_schedules(
               p_.info(), o_.candidates / 4, o_.seed * 7919 + static_cast<uint64_t>(round))) {
        if (add(s)) sketched.insert(pool.size() - 1);
      }
    }
    if (model_ == nullptr) {  // random search: the sampler's schedules in its order
      if (pool.size() > static_cast<size_t>(want)) pool.resize(static_cast<size_t>(want));
      return pool;
    }
    // Neighbours of the best measured schedules: half one or two decisions away (local steps),
    // a quarter with one stage from a random schedule, a quarter crossed with another elite.
    const auto elite = ranked(8);
    for (int i = 0; !elite.empty() && i < o_.candidates / 2; ++i) {
      const Schedule& a = elite[rng_() % elite.size()]->schedule;
      std::optional<Schedule> child;
      if (i % 4 < 2) {
        child = halide::tweak_schedule(p_.info(), a, rng_);
        if (child && i % 4 == 1) {
          if (auto again = halide::tweak_schedule(p_.info(), *child, rng_)) child = again;
        }
      } else if (i % 4 == 2) {
        child = mutate(p_.info(), a, samples, rng_);
      } else {
        child = crossover(p_.info(), a, elite[rng_() % elite.size()]->schedule, rng_);
      }
      if (child) add(*child);
    }
    if (pool.empty()) return {};
    const std::vector<size_t> order = rank_pool(p_, pool, *model_, prerank_, o_.rerank, lowered_);
    // Sketch rounds explore twice as much.
    const double share = std::min(0.5, (round < kSketchRounds ? 2 : 1) * o_.explore);
    const int explore = std::min(want - 1, static_cast<int>(share * want + 0.5));
    std::vector<Schedule> out;
    for (size_t i = 0; i < order.size() && static_cast<int>(out.size()) < want - explore; ++i)
      out.push_back(pool[order[i]]);
    std::vector<size_t> rest(order.begin() + static_cast<long>(out.size()), order.end());
    // Exploration: in the first rounds, the model's favourite sketches (structures it may have
    // seen little of); then schedules at random.
    if (round < kSketchRounds) {
      std::stable_partition(rest.begin(), rest.end(),
                            [&](size_t i) { return sketched.count(i) > 0; });
    } else {
      std::shuffle(rest.begin(), rest.end(), rng_);
    }
    for (size_t i = 0; i < rest.size() && static_cast<int>(out.size()) < want; ++i)
      out.push_back(pool[rest[i]]);
    return out;
  }

  // The model that reads the candidates' layout graphs: the first stage's when there are two.
  train::CostModel& layout_model() const { return prerank_ != nullptr ? *prerank_ : *model_; }

  void refit() {
    std::vector<Schedule> schedules;
    std::vector<int64_t> runtimes;
    std::set<std::string> keys;
    for (const auto& [key, k] : known_) {
      if (!k.ok) continue;
      schedules.push_back(k.schedule);
      runtimes.push_back(std::max<int64_t>(1, static_cast<int64_t>(k.ns)));
      keys.insert(key);
    }
    if (schedules.size() < 4) return;
    train::RefitOptions r = o_.refit_options;
    r.seed = o_.seed + static_cast<uint64_t>(schedules.size());
    const Graph g = halide::layout_graph(p_.info(), schedules, runtimes);
    layout_model().refit({train::Views{&g}}, r);
    if (prerank_ == nullptr) return;
    // The syntax-tree model too, on the same measurements lowered to trees (they all ran, so
    // they lower; if one did not, that would be a bug, said as rank_pool says it).
    try {
      const AstSet trees = lowered_.set(schedules, g);
      model_->refit({train::Views{&g, &trees}}, r);
    } catch (const InputError& e) {
      fmt::print(stderr, "{}: syntax-tree model not refit: {}\n", p_.name(), e.what());
    }
    lowered_.retain(keys);  // the measured schedules' trees; the round's other candidates go
  }

  // The best schedule that passes its verification: measured once more (pass 3) with its
  // outputs compared with the default's and compiled with Halide's bounds asserts, so that a
  // schedule reading an input outside its buffer (undefined behaviour an output check can miss:
  // it reads what happens to lie there) is refused too. A refused one is dropped and the next
  // best tried. A log that already holds the verification (a resumed tuning) is not measured.
  void finish() {
    const auto fastest = ranked(1);
    if (!fastest.empty()) {
      result_.fastest_run = fastest[0]->schedule;
      result_.fastest_run_ns = fastest[0]->ns;
    }
    for (Known* candidate : choice_order()) {
      Known& k = *candidate;
      if (!k.verified) {
        const std::string key = verification_key(p_, k.schedule);
        halide::BatchOptions verify = batch_;
        verify.deadline = Clock::time_point::max();  // the result is owed whatever the time
        verify.measure.warmup_runs = 0;  // one run checks it; its time is not the result's
        verify.measure.min_runs = verify.measure.max_runs = 1;
        halide::MeasureJob job{&p_, k.schedule, key, 3, o_.reference.get(), "", {}};
        job.bounds_checked = true;
        halide::measure_batch(log_, {job}, verify, "verifying");
        k.verified = true;
        const nlohmann::json* rec = log_.find(key);
        if (rec == nullptr || !rec->value("ok", false)) {
          k.ok = false;  // wrong, out of bounds or no longer runs: not a result
          continue;
        }
      }
      result_.best = k.schedule;
      result_.best_ns = k.fastest_ns();
      break;
    }
    result_.program = p_.name();
    result_.search_s = seconds();
  }

  // The order finish() verifies schedules in: the fastest run first; with o_.finalists > 1 the
  // finalists first, each measured once more (a fresh process, outputs checked; a failure
  // drops it), by the slower of their two measurements, then the other schedules by their run.
  std::vector<Known*> choice_order() {
    std::vector<Known*> order;
    for (const Known* k : ranked(known_.size()))
      order.push_back(&known_.at(halide::measurement_key(p_, k->schedule)));
    const size_t n = std::min(order.size(), static_cast<size_t>(std::max(1, o_.finalists)));
    if (n < 2) return order;
    std::vector<halide::MeasureJob> jobs;
    for (size_t i = 0; i < n; ++i) {
      const std::string key = finalist_key(p_, order[i]->schedule);
      if (log_.find(key) == nullptr)
        jobs.push_back({&p_, order[i]->schedule, key, 2, o_.reference.get(), "", {}});
    }
    halide::BatchOptions again = batch_;
    again.deadline = Clock::time_point::max();  // the choice is owed whatever the time
    halide::measure_batch(log_, jobs, again, "finalists");
    result_.finalists_measured = static_cast<int>(jobs.size());
    for (size_t i = 0; i < n; ++i) {
      const nlohmann::json* rec = log_.find(finalist_key(p_, order[i]->schedule));
      if (rec != nullptr && rec->value("ok", false)) {
        order[i]->final_ns = rec->value("best_ns", 0.0);
      } else {
        order[i]->ok = false;  // it failed when run again: not a result
      }
    }
    const auto finalists_end = order.begin() + static_cast<long>(n);
    const auto dropped =
        std::stable_partition(order.begin(), finalists_end, [](const Known* k) { return k->ok; });
    std::stable_sort(order.begin(), dropped, [](const Known* a, const Known* b) {
      return a->choice_ns() < b->choice_ns();
    });
    order.erase(dropped, finalists_end);
    return order;
  }

  const halide::Program& p_;
  train::CostModel* model_;
  train::CostModel* prerank_;  // the first stage when model_ reads syntax trees, else null
  TuneOptions o_;
  halide::ResultLog log_;
  std::mt19937_64 rng_;
  Clock::time_point start_, deadline_ = Clock::time_point::max();
  halide::BatchOptions batch_;
  std::map<std::string, Known> known_;  // by measurement key
  std::map<std::string, int> errors_;   // failures of this search by message
  TreeCache lowered_;                   // syntax trees lowered so far (two stages only)
  TuneResult result_;
};

}  // namespace

halide::Outputs reference_outputs(const halide::Program& program, const TuneOptions& o) {
  return halide::default_outputs(program, o.threads, halide::reference_timeout_s(o.timeout_s));
}

TuneResult tune(const halide::Program& program, train::CostModel* model, const TuneOptions& o,
                train::CostModel* prerank) {
  if (o.log.empty()) throw UsageError("tuning needs a log file (--log)");
  if (o.budget < 1) throw UsageError("--budget must be at least 1");
  check_tuning_models(model, prerank);
  return Search(program, model, prerank, o).run();
}

void check_tuning_models(const train::CostModel* model, const train::CostModel* prerank) {
  if (model == nullptr) {
    if (prerank != nullptr) throw UsageError("a pre-ranking model needs a model to re-rank");
    return;
  }
  const std::vector<Collection> views = model->collections();
  const bool trees = std::find(views.begin(), views.end(), Collection::kAst) != views.end();
  if (!trees) {
    if (model->collection() != Collection::kLayout) {
      throw InputError(
          fmt::format("tuning ranks layout graphs or syntax trees; the {} model reads {} data",
                      model->name(), collection_name(model->collection())));
    }
    if (prerank != nullptr) {
      throw UsageError(fmt::format(
          "the {} model reads layout graphs: it ranks every candidate itself, a pre-ranking model "
          "is for models that read syntax trees",
          model->name()));
    }
    return;
  }
  if (prerank == nullptr || prerank->collection() != Collection::kLayout ||
      prerank->collections().size() != 1) {
    throw InputError(fmt::format(
        "the {} model reads syntax trees, too slow to lower for every candidate: tuning with it "
        "needs a layout model that ranks the candidates first (--prerank){}",
        model->name(),
        prerank == nullptr ? ""
                           : fmt::format("; the {} model given reads {} data", prerank->name(),
                                         collection_name(prerank->collection()))));
  }
}

halide::Schedule pick_by_model(const halide::Program& program, train::CostModel& model,
                               int candidates, uint64_t seed, train::CostModel* prerank,
                               int rerank) {
  check_tuning_models(&model, prerank);
  auto pool = halide::sample_schedules(program.info(), std::max(1, candidates), seed);
  for (auto& s : halide::sketch_schedules(program.info(), candidates / 4, seed))
    pool.push_back(std::move(s));
  TreeCache lowered(program);
  return pool[rank_pool(program, pool, model, prerank, rerank, lowered).front()];
}

std::optional<std::pair<halide::Schedule, double>> best_on_record(const halide::Program& program,
                                                                  const std::string& log) {
  std::error_code ec;
  if (log.empty() || !std::filesystem::exists(log, ec)) return std::nullopt;
  const halide::ResultLog records(log);
  // Per schedule on record: its fastest checked measurement, and its re-measurement as a
  // finalist (Search::choice_order) when it has one.
  std::map<std::string, Known> by_key;
  for (const auto& rec : records.records()) {
    if (rec.value("instance", "") != program.name() || !rec.value("ok", false) ||
        !rec.value("checked", false) || rec.value("bounds_checked", false))
      continue;  // (a verification's times are of code compiled with asserts)
    try {
      halide::Schedule s = halide::schedule_from_json(rec.at("schedule"));
      halide::check_schedule(program.info(), s);
      const std::string key = halide::measurement_key(program, s);
      const std::string again_key = finalist_key(program, s);
      // Refused by its verification (out of bounds, or wrong when measured again), or a
      // finalist that failed when measured again.
      const nlohmann::json* verified = records.find(verification_key(program, s));
      if (verified != nullptr && !verified->value("ok", false)) continue;
      const nlohmann::json* again = records.find(again_key);
      if (again != nullptr && !again->value("ok", false)) continue;
      const double ns = rec.value("best_ns", 0.0);
      Known& r = by_key[key];
      r.schedule = std::move(s);
      if (rec.value("key", "") == again_key) {
        r.final_ns = ns;
      } else if (r.ns == 0 || ns < r.ns) {
        r.ns = ns;
      }
    } catch (const std::exception&) {
      // a record of another space or program version
    }
  }
  // As the search chose: among finalists by the slower of their two measurements, else the
  // fastest run.
  const Known* best = nullptr;
  const auto rank = [](const Known& k) { return std::make_pair(!k.finalist(), k.choice_ns()); };
  for (const auto& [key, r] : by_key) {
    if (r.ns > 0 && (best == nullptr || rank(r) < rank(*best))) best = &r;
  }
  if (best == nullptr) return std::nullopt;
  return std::make_pair(best->schedule, best->fastest_ns());
}

}  // namespace tcost::tune
