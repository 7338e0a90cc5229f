// Internal to the zoo (zoo.cpp, zoo_families.cpp): how a family defines its pipeline. Including
// this header costs a Halide.h parse.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "halide/program_halide.h"

namespace tcost::halide::zoo {

// Collects a family's inputs and outputs. Inputs are buffers of seeded random values (filled
// only when the program runs: describing or lowering it needs their shapes, not their values);
// they carry slack around their logical extents, so that a schedule computing a producer over
// a rounded-up or shifted region (compiled without bounds asserts) reads memory it owns.
class Builder {
 public:
  explicit Builder(PipelineSource& s) : s_(s) {}
  Halide::Buffer<float> input(const std::string& name, const std::vector<int>& dims,
                              float lo = -1.0f, float hi = 1.0f);
  // Marks f as an output computed over [0, dims) (innermost first): its estimates; its values
  // are checked within `tolerance` (compare_outputs).
  void output(Halide::Func f, const std::vector<int>& dims, double tolerance = kFloatTolerance);

 private:
  PipelineSource& s_;
  std::vector<std::pair<float, float>> ranges_;
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
