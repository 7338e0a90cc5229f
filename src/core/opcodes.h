// XLA HLO opcode ids as the TpuGraphs files number them (0 = unknown, 1..120).
// Halide stages and synthetic graphs are mapped onto the same table, so that one data layer and
// one set of models serve every source.
#pragma once

#include <string>

namespace tcost {

constexpr int kNumOpcodes = 121;  // ids 0..120

// The opcode's HLO name ("convolution"), or "opcode-<id>" where the table has no name.
std::string opcode_name(int id);
// The id of an HLO name, or -1.
int opcode_id(const std::string& name);

// Ids used by name elsewhere in tcost.
namespace op {
constexpr int kAdd = 2;
constexpr int kBroadcast = 13;
constexpr int kClamp = 17;
constexpr int kConcatenate = 22;
constexpr int kConstant = 24;
constexpr int kConvert = 25;
constexpr int kConvolution = 26;
constexpr int kCopy = 27;
constexpr int kDivide = 32;
constexpr int kDot = 34;
constexpr int kExponential = 37;
constexpr int kFusion = 41;
constexpr int kGather = 42;
constexpr int kLog = 50;
constexpr int kMaximum = 57;
constexpr int kMinimum = 58;
constexpr int kMultiply = 59;
constexpr int kPad = 62;
constexpr int kParameter = 63;
constexpr int kPower = 66;
constexpr int kReduce = 70;
constexpr int kReduceWindow = 72;
constexpr int kReshape = 75;
constexpr int kRsqrt = 81;
constexpr int kScatter = 82;
constexpr int kSelect = 83;
constexpr int kSlice = 92;
constexpr int kSqrt = 94;
constexpr int kSubtract = 95;
constexpr int kTanh = 96;
constexpr int kTranspose = 97;
constexpr int kTuple = 99;
}  // namespace op

}  // namespace tcost
