// The Halide side of a Program (program.h). Including this header costs a Halide.h parse: it is
// for the few translation units that make or run programs (program.cpp, lower.cpp, the zoo's
// definitions, the autoscheduler plugin).
//   Program::Impl    - the pipeline's Functions in node order, its inputs, output estimates and
//                      the schedules its Funcs had when the Program was made.
//   PipelineSource   - what a caller hands over: output Funcs with estimates, and the buffers to
//                      keep alive.
//   make_program     - derives the description from the IR (producers from calls, extents from
//                      bounds inference over the estimates, reductions from RDoms, windows from
//                      access offsets, types from definitions, operation counts by kind).
#pragma once

#include <Halide.h>

#include <array>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "halide/program.h"

namespace tcost::halide {

struct PipelineSource {
  std::string name = "pipeline";  // ProgramInfo::instance
  std::string family;             // default: name
  bool single_kernel = false;
  std::vector<Halide::Func> outputs;  // with estimates on every dimension (set_estimate)
  // Per output (default: all kFloatTolerance): how far a floating-point value may differ from
  // the default schedule's, as a fraction of that output's largest magnitude (compare_outputs).
  std::vector<double> tolerances;
  // Fix each output's bounds to its estimate, so that loop extents are constants (the zoo
  // does; an autoscheduler must not, its caller chooses the output size at run time).
  bool bound_outputs = false;
  // Inputs given as concrete buffers (the zoo) are kept alive here; their values are used as
  // they are. ImageParams and scalar Params get buffers and values from their estimates.
  std::vector<Halide::Buffer<>> buffers;
  uint64_t seed = 0;           // seeds the values of inputs made from estimates
  std::function<void()> fill;  // gives concrete buffers their values before the first run
};

struct Program::Impl {
  ProgramInfo info;
  std::vector<Halide::Internal::Function> functions;  // per node; undefined for inputs
  std::vector<Halide::Func> outputs;
  std::vector<double> tolerances;  // per output (PipelineSource::tolerances)
  // Per output: the estimated region, (min, extent) per dimension.
  std::vector<std::vector<std::pair<int64_t, int64_t>>> output_regions;
  // Per input node: the region read, (min, extent) per dimension (inputs' buffers must hold it).
  std::map<int, std::vector<std::pair<int64_t, int64_t>>> input_regions;
  std::vector<Halide::Buffer<>> buffers;                            // kept alive
  std::map<std::string, Halide::Internal::Parameter> image_params;  // by name
  std::map<std::string, Halide::Internal::Parameter> scalar_params;
  uint64_t seed = 0;
  // The schedules the Funcs had when the Program was made (apply_schedule starts from them).
  std::vector<Halide::Internal::FuncSchedule> saved_func;
  std::vector<std::vector<Halide::Internal::Definition>> saved_definitions;  // init, updates
  // The target programs are compiled for when measured and lowered (default: jit_target();
  // the autoscheduler plugin uses its generator's target, with the JIT feature).
  Halide::Target target;
  // ImageParams get buffers of exactly the region read (the plugin, measuring with bounds
  // checks on); otherwise with the zoo's slack.
  bool exact_inputs = false;

  // Restores every Func's schedule to what it was when the Program was made.
  void reset_schedules();
  // The buffer of output `i` as tcost allocates it (dense over its region, the first
  // dimension innermost): (min, extent, stride) per dimension. Measurement allocates by it
  // (output_buffers) and lower_ast reads the outputs' buffer queries from it.
  std::vector<std::array<int64_t, 3>> output_layout(size_t i) const;
  std::function<void()> fill;  // gives the zoo's buffers their values (once, before a run)
  bool inputs_bound = false;
  // Before a run: fills the zoo's buffers, binds every ImageParam to a seeded random buffer
  // over the region it is read (with slack) and every scalar Param to its estimate.
  void bind_inputs();
};

Program make_program(const PipelineSource& source);

Halide::Target jit_target();

// Seeded values: [0, 1) for floats, the whole range of types up to 16 bits, 0..65535 above.
void fill_random(Halide::Buffer<>& b, std::mt19937& rng);

}  // namespace tcost::halide
