// Halide pipelines of the collector's zoo (first member: matrix multiply). Halide.h stays inside
// pipelines.cpp; callers see plain option structs and a workload to time.
#pragma once

#include <functional>

namespace tcost::halide {

// A schedule for C = A * B: tile the output, vectorise the inner x loop, parallelise rows.
struct MatmulSchedule {
  int tile = 0;           // output tile edge (0 = untiled)
  int vector_width = 1;   // 1 = scalar
  bool parallel = false;  // tile rows (or rows) across threads
};

// JIT-compiles the n x n float matmul under `schedule` with seeded random inputs and returns a
// workload that runs it once. Throws std::runtime_error when Halide rejects the schedule.
std::function<void()> build_matmul(int n, const MatmulSchedule& schedule, int threads);

// A 3x3 convolution with bias and ReLU over a size x size image, c_in -> c_out channels
// (x innermost). The schedule tiles the ReLU output in x, y; the convolution is computed per
// tile (or at root when untiled) with the same vectorisation and parallelism.
std::function<void()> build_conv3x3(int size, int c_in, int c_out, const MatmulSchedule& schedule,
                                    int threads);

}  // namespace tcost::halide
