// Internal to the zoo (zoo.cpp, zoo_families.cpp): the Halide side of a program instance.
// Everything else sees zoo.h. Including this header costs a Halide.h parse.
#pragma once

#include <Halide.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/dataset.h"
#include "halide/schedule.h"

namespace tcost::halide::zoo {

// One program instance: its description and the Halide objects behind each node.
struct Program {
  ProgramInfo info;
  std::vector<Halide::Func> funcs;            // per node; undefined for inputs
  std::vector<Halide::Buffer<float>> inputs;  // kept alive with the pipeline
};

// Defines a program node by node. Inputs are buffers of seeded random values (filled only when
// the program is to run: describing or lowering it needs their shapes, not their values); they
// carry slack around their logical extents, so that a schedule computing a producer over a
// rounded-up or shifted region (compiled without bounds asserts) reads memory it owns.
class Builder {
 public:
  Builder(Program& p, uint64_t seed, bool fill) : p_(p), seed_(seed), fill_(fill) {}

  Halide::Buffer<float> input(const std::string& name, const std::vector<int>& dims,
                              float lo = -1.0f, float hi = 1.0f);
  // Registers `f` as a stage: its HLO opcode name, output extents (innermost first) and the
  // named nodes it reads. Returns f.
  struct StageOptions {
    int64_t reduction = 0;         // points of its reduction domain
    int window = 0, stride = 0;    // stencils
    bool update_over_pure = true;  // false for scatters and scans
  };
  Halide::Func stage(Halide::Func f, const std::string& opcode, const std::vector<int>& dims,
                     const std::vector<std::string>& producers, const StageOptions& o);
  Halide::Func stage(Halide::Func f, const std::string& opcode, const std::vector<int>& dims,
                     const std::vector<std::string>& producers) {
    return stage(std::move(f), opcode, dims, producers, StageOptions{});
  }

 private:
  int node_id(const std::string& name) const;
  Program& p_;
  uint64_t seed_;
  bool fill_;
};

// A family: a name, whether it is a single kernel, its dataset split, shapes and definition.
struct Family {
  std::string name;
  bool single_kernel = false;
  Split split = Split::kTrain;
  std::vector<std::vector<int>> shapes;
  void (*define)(Builder& b, const std::vector<int>& shape) = nullptr;
};

const std::vector<Family>& families();  // zoo_families.cpp

}  // namespace tcost::halide::zoo
