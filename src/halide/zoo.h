// The pipeline zoo: real tensor programs written in Halide, each family with several shapes
// from real layers (ResNet-50, MobileNetV2, BERT-base, camera pipelines) scaled to run in
// milliseconds here. Halide.h stays inside zoo.cpp and zoo_families.cpp; callers see names,
// ProgramInfo and Schedule (schedule.h).
//   zoo_instances - every program instance, with its family and dataset split.
//   describe      - the nodes of an instance (defines the Halide pipeline, compiles nothing).
//   build         - JIT-compiles an instance under a schedule; returns one run of it.
//   lower_ast     - the lowered loop nest of an instance under a schedule, as a syntax tree.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/dataset.h"
#include "halide/schedule.h"

namespace tcost::halide {

struct InstanceName {
  std::string name;             // family_shape, e.g. "conv3x3_28x32x32"
  std::string family;           // e.g. "conv3x3"
  Split split = Split::kTrain;  // by family: test programs are never seen in training
};

std::vector<InstanceName> zoo_instances();
std::vector<std::string> zoo_families();
// InputError for a name that is not in the zoo.
ProgramInfo describe(const std::string& instance);
// Throws std::runtime_error when Halide rejects the schedule. Threads: HL_NUM_THREADS of the
// calling process (set before its first Halide run; measure in a fresh child process).
std::function<void()> build(const std::string& instance, const Schedule& schedule, int threads);

// The Halide target programs are compiled for (host features, no asserts, no LLVM loop passes).
std::string jit_target_name();

// One syntax tree in the AST schema (core/ast.h): kinds, kAstFeatureWidth features per node,
// (parent, child) edges local to the tree. Trees are cut at max_nodes nodes.
struct AstTree {
  std::vector<int32_t> kinds;
  std::vector<float> feats;
  std::vector<int32_t> edges;
};
AstTree lower_ast(const std::string& instance, const Schedule& schedule, int max_nodes = 4000);

}  // namespace tcost::halide
