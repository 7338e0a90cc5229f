// A Program is the unit of the Halide layer: one Halide pipeline (its Function DAG, its inputs
// and its outputs' estimates) with the description tcost derives from its IR. Everything that
// schedules, builds, lowers or featurises takes a Program. This header does not include Halide
// (program_halide.h makes a Program from any Halide::Pipeline); a Program is a shared handle, so
// copies refer to one pipeline.
//   zoo_program     - a program of the zoo (zoo.h) by instance name.
//   apply_schedule  - schedules the pipeline's Funcs in place (after resetting them).
//   build           - JIT-compiles under a schedule; returns one run of the program.
//   run_output      - runs once under a schedule and returns the outputs' values (checks).
//   lower_ast       - the lowered loop nest under a schedule, as a syntax tree.
//   schedule_source - C++ that applies a schedule to the pipeline's Funcs (as `-e schedule`).
//   reads_outside_inputs - input reads outside their buffers under a schedule, by lowering.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "halide/measure.h"
#include "halide/program_info.h"
#include "halide/schedule.h"

namespace tcost::halide {

class Program {
 public:
  struct Impl;  // the Halide objects (program_halide.h)
  explicit Program(std::shared_ptr<Impl> impl);

  const ProgramInfo& info() const;
  const std::string& name() const { return info().instance; }
  Impl& impl() const { return *impl_; }

 private:
  std::shared_ptr<Impl> impl_;
};

// The Halide target programs are compiled for: the host's features without
// avx512_sapphirerapids (Halide 14 emits AVX512-FP16 code under it, which the AMD EPYC machines
// of this project cannot run: SIGILL), no asserts (TCOST_HALIDE_ASSERTS=1 turns them on), no
// LLVM loop passes (faster compiles, equally fast code).
std::string jit_target_name();
// The target `p` is compiled for when measured (jit_target_name() unless a plugin set its
// generator's), as Halide writes it.
std::string target_name(const Program& p);

void apply_schedule(const Program& p, const Schedule& s);

// Throws std::runtime_error when Halide rejects the schedule, InputError when it does not fit
// the program. Threads: HL_NUM_THREADS of the calling process (set before its first Halide
// run; measure in a fresh child process).
std::function<void()> build(const Program& p, const Schedule& s, int threads);

// The outputs' values after one run under `s`, as doubles (every output, every value of a
// Tuple, in storage order), on the program's seeded inputs.
using Outputs = std::vector<std::vector<double>>;
Outputs run_output(const Program& p, const Schedule& s, int threads);
std::string outputs_to_bytes(const Outputs& o);
Outputs outputs_from_bytes(const std::string& bytes);  // InputError when malformed
// "" when `got` equals `want`: integer outputs bit for bit, floating-point ones within
// kFloatTolerance (or the output's own tolerance, PipelineSource::tolerances: an ill-conditioned
// output's) times the largest magnitude of that output (at least 1), NaN equal to NaN.
// Otherwise where they first differ.
constexpr double kFloatTolerance = 1e-4;
std::string compare_outputs(const Program& p, const Outputs& want, const Outputs& got);

// The thread pool that runs a measured program's parallel loops: Halide's own (its workers
// sleep between loops) or tcost's spinning pool (spin_pool.h; docs/collect.md).
enum class ThreadPool { halide, spinning };
const char* thread_pool_name(ThreadPool pool);

// Where a measured program's buffers lie: where the measuring process's heap puts them, or in
// its arena (arena.h) at the same addresses in every process: the inputs and outputs copied
// there after the compile (the copies they leave are overwritten, so a run that read them would
// fail its output check), and every allocation of the pipeline's runs made there through the
// JIT's malloc handlers (docs/collect.md, "A layout of tcost's own"); arena_huge: the same, the
// arena's memory on transparent huge pages (2 MiB pages: a buffer's physical layout, and so the
// cache sets its lines map to, the same in every process; docs/collect.md, "Huge pages").
enum class Placement { heap, arena, arena_huge };
const char* placement_name(Placement placement);

// What a measuring child process times: the program JIT-compiled under `s`; with a reference,
// its outputs are checked against it after timing (measure.h). `bounds_checked` compiles with
// Halide's bounds asserts on (the target without no_asserts): a run that reads an input or
// writes an output outside its buffer then fails with Halide's message naming the access,
// where without them it reads what lies there (a schedule's verification, not a measurement).
Workload schedule_workload(const Program& p, const Schedule& s, int threads,
                           const Outputs* reference, ThreadPool pool = ThreadPool::halide,
                           Placement placement = Placement::heap, bool bounds_checked = false);
// The same for one of Halide's own autoschedulers ("Adams2019", "Mullapudi2016", "Li2018"),
// loaded from `plugin` and run in the child on machine parameters (cores, last-level cache
// bytes, balance 40); Workload::search_ms is its search time. The schedule is Halide's, not
// one of this space.
Workload autoschedule_workload(const Program& p, const std::string& autoscheduler,
                               const std::string& plugin, int threads, int64_t llc_bytes,
                               const Outputs* reference, Placement placement = Placement::heap);

// One syntax tree in the AST schema (core/ast.h): kinds, kAstFeatureWidth features per node,
// (parent, child) edges local to the tree. Trees are cut at max_nodes nodes.
struct AstTree {
  std::vector<int32_t> kinds;
  std::vector<float> feats;
  std::vector<int32_t> edges;
};
AstTree lower_ast(const Program& p, const Schedule& s, int max_nodes = 4000);
// The version of lower_ast's trees, stored with them (AstSet::lowering): 2 since 2026-12-02
// (an extent that depends on the enclosing loops counts at its constant upper bound; it was
// 1 before); 3 later that day (bounds tried again with the lets substituted; a loop without a
// bound leaves its variable unbounded above, where its range was one step); 4 since 2026-12-07
// (a stride that varies along the loops is its mean magnitude over sampled points of their
// ranges, where it was -1; -1 is left for strides that depend on loaded data; two trials of
// 2026-12-03/04 that were not kept also called their trees 4, but theirs are 13 columns wide
// and refused by their width). Raise it whenever the trees of a schedule change.
constexpr int64_t kAstLowering = 4;

std::string schedule_source(const Program& p, const Schedule& s);

// The program's input buffers read outside what they hold under `s`, one line each ("input
// is read over [-1, 2] in dimension 2, its buffer holds [0, 2]"; empty when none), found
// without compiling or running: the schedule is lowered with Halide's bounds checks on and
// the regions they check are read off. Halide 14 lowers some schedules into such reads (see
// docs/tune.md, "Verification"); their runs read memory that is not the input's.
std::vector<std::string> reads_outside_inputs(const Program& p, const Schedule& s);
// How a checked measurement (schedule_workload with a reference) refuses such a schedule before
// compiling it: its error says "reads outside its inputs: " and the lines.
inline constexpr char kReadsOutsideInputs[] = "reads outside its inputs";

}  // namespace tcost::halide
