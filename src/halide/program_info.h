// What tcost knows about a Halide program without including Halide: its nodes (inputs and
// stages) with the facts that featurisation and the schedule space need. Every field is derived
// from the Halide IR (program.cpp), never declared by hand.
//   OpKind      - the kinds of operation counted per stage (node features, docs/formats.md).
//   NodeInfo    - one input or stage: type, extents, producers, reductions, windows, op counts.
//   ProgramInfo - the nodes in topological order (producers first), inputs included.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "core/dataset.h"

namespace tcost::halide {

// Operations counted per point of a stage's output (update definitions weighted by the
// reduction points each output point sees).
enum OpKind : int {
  kOpAdd = 0,         // add, subtract
  kOpMul,             // multiply
  kOpDiv,             // divide, modulo
  kOpMinMax,          // min, max
  kOpCompare,         // comparisons, logical and/or/not
  kOpSelect,          // select, if-then-else
  kOpTranscendental,  // exp, log, pow, sqrt, tanh, sin, ... (math calls)
  kOpCast,            // type conversions, reinterprets
  kOpLoadFunc,        // reads of another stage
  kOpLoadInput,       // reads of an input buffer
  kOpLoadIndirect,    // reads whose index depends on a loaded value (gathers, lookups)
  kOpBitwise,         // shifts, and, or, xor
  kNumOpKinds
};

struct NodeInfo {
  std::string name;              // the Func's or input buffer's name
  int opcode = 0;                // TpuGraphs (XLA HLO) opcode id, derived (docs/formats.md)
  bool is_input = false;         // a buffer or image parameter: read, never scheduled
  bool is_output = false;        // an output of the pipeline
  std::string type = "float32";  // element type of the (first) value: float32, uint8, int32, ...
  int values = 1;                // values per point (Tuple-valued Funcs have more than one)
  std::vector<int64_t> dims;     // extents of the region computed or read, innermost first
  std::vector<int> producers;    // node ids it reads
  int64_t reduction = 0;         // points of its reduction domain; stencils: window area
  int window = 0;                // stencils: widest access window over the consumer's dims
  double stride = 0;             // stencils: input step per output step (0.5: upsampling)
  bool has_update = false;       // has an update definition (a reduction, scatter or scan)
  bool update_over_pure = true;  // every update's left side is the pure variables
  std::array<double, kNumOpKinds> ops{};  // operation counts per output point, by OpKind
};

struct ProgramInfo {
  std::string instance;        // a name for the program, e.g. "matmul_256"
  std::string family;          // e.g. "matmul" (the dataset split goes by family)
  bool single_kernel = false;  // one kernel (plus a fused epilogue): also written as tile data
  std::vector<NodeInfo> nodes;

  std::vector<int> stages() const;  // ids of the non-input nodes, in order
  // The output whose loops the schedule space tiles around: the last output in topological
  // order (every program has at least one).
  int output() const;
  std::vector<int> outputs() const;  // ids of every output node
  // Ids of the nodes that read node v.
  std::vector<int> consumers(int v) const;
};

}  // namespace tcost::halide
