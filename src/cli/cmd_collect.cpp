// tcost collect --out DIR [--pipelines GLOB] [--configs-per-graph N] [--seed S]
//               [--time-budget MINUTES]: measure Halide programs under sampled schedules.
#include <cstdio>
#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/commands.h"
#include "core/dataset.h"
#include "core/error.h"
#include "halide/arena.h"
#include "halide/collect.h"
#include "halide/manifest.h"
#include "halide/result_log.h"
#include "halide/zoo.h"

namespace tcost::cli {

void refuse_huge_pages_if_unavailable() {
  const std::string why = halide::huge_pages_unavailable();
  if (!why.empty()) throw UsageError("--huge-pages: " + why);
}

void register_collect(CLI::App& app) {
  auto o = std::make_shared<halide::CollectOptions>();
  auto* cmd =
      app.add_subcommand("collect", "Measure Halide programs under sampled schedules (resumable)");
  cmd->add_option("--out", o->out, "Output directory (measurements.jsonl, layout/, tile/, ast/)");
  cmd->add_option("--pipelines", o->pipelines, "Glob over program instances (e.g. 'matmul_*')")
      ->capture_default_str();
  cmd->add_option("--configs-per-graph", o->configs_per_graph, "Sampled schedules per instance")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  cmd->add_option("--seed", o->seed, "Random seed")->capture_default_str();
  cmd->add_option("--sketches", o->sketches,
                  "Structured schedules (the tuner's sketches) per instance besides the samples")
      ->capture_default_str()
      ->check(CLI::Range(0, 100000));
  cmd->add_option("--time-budget", o->time_budget_min, "Stop starting measurements after MINUTES")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1e6));
  cmd->add_option("--threads", o->threads, "Halide threads in timed runs")
      ->capture_default_str()
      ->check(CLI::Range(1, 256));
  cmd->add_option("--workers", o->workers,
                  "Measurements in flight: their compiles overlap, timed runs never do")
      ->capture_default_str()
      ->check(CLI::Range(1, 64));
  cmd->add_option("--timeout", o->timeout_s, "Seconds per schedule (compile + runs)")
      ->capture_default_str()
      ->check(CLI::Range(1.0, 3600.0));
  cmd->add_option("--max-run-seconds", o->max_run_seconds,
                  "Stop repeating timed runs of a schedule after this much run time")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 3600.0));
  cmd->add_option("--min-run-seconds", o->min_run_seconds,
                  "Protocol: keep timing a schedule until its timed runs add up to this much "
                  "(short programs get more runs; 0 = off)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 3600.0));
  cmd->add_option("--statistic", o->statistic,
                  "What the datasets read off each measurement before the minimum over its "
                  "passes: best-run or median-run (default: the collection's own, best-run for a "
                  "new one; kept in the manifest)")
      ->check(CLI::IsMember({"best-run", "median-run"}));
  cmd->add_flag("!--no-ast", o->ast, "Do not write the syntax-tree datasets");
  cmd->add_flag("!--rewrite", o->measure,
                "Measure nothing: rewrite the datasets and manifest from the records on file");
  cmd->add_option("--cross-session", o->cross_session,
                  "Time again up to N measured schedules per program in this later run; the "
                  "manifest gets the cross-session tau")
      ->capture_default_str()
      ->check(CLI::Range(0, 100000));
  cmd->add_option("--session", o->session,
                  "Name of this cross-session run (default: today's UTC date); the same name "
                  "resumes it");
  cmd->add_option("--pool-sessions", o->pool_sessions,
                  "Later sessions (--cross-session) whose measurements the datasets pool with the "
                  "collection's own: IDs separated by commas, all (every one on the data's CPU) "
                  "or none (default: the collection's own; kept in the manifest)");
  cmd->add_option("--warmup-runs", o->warmup_runs, "Protocol: untimed runs before timing")
      ->capture_default_str()
      ->check(CLI::Range(0, 100));
  cmd->add_option("--min-runs", o->min_runs, "Protocol: timed runs at least")
      ->capture_default_str()
      ->check(CLI::Range(3, 1000));
  cmd->add_option("--tolerance", o->tolerance,
                  "Protocol: stop when the third-best run is within this of the best")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_flag("!--no-strict-lock", o->strict_lock,
                "Protocol: release the timing lock after the timed runs, not when the measuring "
                "process has ended (the protocol before 2026-11-30)");
  cmd->add_flag("--pin-threads", o->pin_threads,
                "Protocol: after the warm-up, pin the measuring process's threads one per CPU");
  cmd->add_flag("--steady-heap", o->steady_heap,
                "Protocol: the measuring process's malloc keeps what it frees (no mmap, no trim)");
  cmd->add_flag_callback(
      "--spin-pool", [o] { o->pool = halide::ThreadPool::spinning; },
      "Protocol: run parallel loops on tcost's spinning thread pool, not Halide's");
  cmd->add_flag_callback(
      "--arena",
      [o] {
        if (o->placement == halide::Placement::heap) o->placement = halide::Placement::arena;
      },
      "Protocol: put the inputs, outputs and every allocation of the runs at the same "
      "addresses in every measuring process (tcost's arena), not where the heap puts them");
  cmd->add_flag_callback(
      "--huge-pages",
      [o] {
        refuse_huge_pages_if_unavailable();
        o->placement = halide::Placement::arena_huge;
      },
      "Protocol: --arena, the arena's memory on transparent huge pages (2 MiB), so that buffers "
      "map to the same cache sets in every measuring process");
  cmd->add_option("--passes", o->passes,
                  "Protocol: measure every schedule K times, pass after pass, and keep the "
                  "minimum")
      ->capture_default_str()
      ->check(CLI::Range(1, 10));
  cmd->add_option("--forks", o->forks,
                  "Protocol: time each compile in F processes forked from the compiling one, "
                  "each a measurement (passes x F per schedule)")
      ->capture_default_str()
      ->check(CLI::Range(1, 16));
  cmd->add_flag("--compile-each", o->compile_each,
                "Study: the --forks F measurements of a compile are F lone measurements one "
                "after another, each compiling for itself (the control of the fork study)");
  cmd->add_flag("--recorded", o->recorded,
                "Sample nothing new: measure the schedules on record again until each has "
                "--passes measurements under this run's Halide target");
  cmd->add_option("--schedules-from", o->schedules_from,
                  "Sample nothing: measure the schedules another collection (DIR) measured on "
                  "its CPU, under the same keys (a collection measured again on this CPU)");
  cmd->add_option("--at-least", o->at_least,
                  "Then sample more schedules for every program whose datasets hold fewer than N, "
                  "until they do (up to three rounds)")
      ->capture_default_str()
      ->check(CLI::Range(0, 100000));
  cmd->add_option("--neighbours", o->neighbours,
                  "Then measure N schedules per program one decision away from its fastest "
                  "(recorded with \"origin\": \"neighbour\"; a rerun measures what a program "
                  "lacks of N)")
      ->capture_default_str()
      ->check(CLI::Range(0, 100000));
  cmd->add_option("--neighbour-parents", o->neighbour_parents,
                  "--neighbours: how many of each program's fastest schedules (not neighbours "
                  "themselves) the neighbours are drawn around, in turn")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));
  cmd->add_flag("--check", o->check,
                "Compare every measured schedule's outputs with the default schedule's; a "
                "difference is a recorded failure");
  cmd->add_flag("--check-every-run", o->check_every_run,
                "Diagnostic: --check after every timed run, the outputs overwritten before each "
                "(a run that skips work is caught)");
  auto shard = std::make_shared<std::string>();
  cmd->add_option("--shard", *shard,
                  "I/N: measure only share I (from 0) of N, balanced by expected cost; join the "
                  "shards with tcost merge");
  auto list = std::make_shared<bool>(false);
  cmd->add_flag("--list", *list, "List the programs (and their splits) and exit");
  cmd->add_option("--remeasure", o->remeasure, "Fraction of schedules timed again (noise ceiling)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  cmd->callback([o, list, shard] {
    if (*list) {
      for (const auto& in : halide::select_instances(o->pipelines)) {
        const auto p = halide::zoo_program(in.name).info();
        fmt::print("{:<32} {:<18} {:<5} {} nodes, {} stages\n", in.name, in.family,
                   split_name(in.split), p.nodes.size(), p.stages().size());
      }
      return;
    }
    if (o->out.empty()) throw UsageError("--out is required");
    if (!shard->empty()) {
      int i = -1, n = 0;
      char extra = 0;
      if (std::sscanf(shard->c_str(), "%d/%d%c", &i, &n, &extra) != 2 || n < 1 || i < 0 || i >= n)
        throw UsageError(fmt::format("--shard {}: expected I/N with 0 <= I < N", *shard));
      o->shard_index = i;
      o->shard_count = n;
    }
    const auto s = halide::collect(*o);
    fmt::print(
        "measured {}, failed {}, already on record {}; wrote {} layout, {} tile and {} syntax-tree "
        "files under {}\n",
        s.measured, s.failed, s.skipped, s.layout_written, s.tile_written, s.ast_written, o->out);
    if (o->at_least > 0) {
      fmt::print("--at-least {}: {} more schedules tried; {}\n", o->at_least, s.topped_up,
                 s.short_of.empty() ? std::string("every program's datasets hold that many")
                                    : fmt::format("still short: {}", fmt::join(s.short_of, ", ")));
    }
    if (o->neighbours > 0)
      fmt::print("--neighbours {}: {} more schedules tried\n", o->neighbours, s.neighbours_tried);
    const std::string cpu = halide::data_cpu(o->out);
    if (s.left_out_other_cpu > 0)
      fmt::print("left out of the datasets: {} schedules never measured on the data's CPU ({})\n",
                 s.left_out_other_cpu, cpu);
    if (!s.pooled_sessions.empty())
      fmt::print("pooled with the later sessions {}: {} schedules' runtimes\n",
                 fmt::join(s.pooled_sessions, ", "), s.pooled_schedules);
    if (o->remeasure > 0) {
      fmt::print("noise ceiling: Kendall tau between two measurement passes = {:.4f} ({} pairs)\n",
                 s.remeasure_tau, s.remeasured_pairs);
    }
    if (o->cross_session > 0) {
      const auto c = halide::cross_session_noise(
          halide::ResultLog((std::filesystem::path(o->out) / "measurements.jsonl").string()), cpu,
          s.session, halide::data_statistic(o->out));
      fmt::print(
          "cross-session ({}, {}): Kendall tau {:.4f} (single measurements' median runs {:.4f}) "
          "over {} programs, "
          "{} pairs; new/old runtime p10 {:.3f}, p50 {:.3f}, p90 {:.3f} (p90/p10 {:.3f}); {:.2f} "
          "s per schedule\n",
          c.session, c.cpu == cpu ? "the data's CPU" : "another CPU than the data's", c.tau,
          c.tau_median, c.programs, c.pairs, c.ratio_p10, c.ratio_p50, c.ratio_p90,
          c.ratio_p90 / c.ratio_p10, c.seconds_per_schedule);
    }
    fmt::print("see it: tcost report --out collect-report.html --collect {}\n", o->out);
  });
}

void register_merge(CLI::App& app) {
  struct MergeOptions {
    std::vector<std::string> dirs;
    std::string out;
    bool allow_mixed = false;
  };
  auto o = std::make_shared<MergeOptions>();
  auto* cmd = app.add_subcommand(
      "merge",
      "Merge collections (tcost collect --shard I/N) into one: records, datasets, manifest");
  cmd->add_option("dirs", o->dirs, "Collection directories")
      ->required()
      ->check(CLI::ExistingDirectory);
  cmd->add_option("--out", o->out, "The merged collection's directory (new)")->required();
  cmd->add_flag("--allow-mixed", o->allow_mixed,
                "Merge shards measured on different CPUs, Halide versions or protocols");
  cmd->callback([o] {
    const auto s = halide::merge_collections(o->dirs, o->out, o->allow_mixed);
    fmt::print(
        "merged {} records ({} duplicates dropped) from {} collections; wrote {} layout, {} tile "
        "and {} syntax-tree files under {}\n",
        s.records, s.duplicates, o->dirs.size(), s.written.layout_written, s.written.tile_written,
        s.written.ast_written, o->out);
    fmt::print("see it: tcost report --out collect-report.html --collect {}\n", o->out);
  });
}

}  // namespace tcost::cli
